"""Stage 6 (seed 001 §6): the materialized graph, the temporal profile, exports and the timeline picture."""
