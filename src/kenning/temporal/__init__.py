"""Stage 5 (seed 001 §5): valid time, lifecycle status, functional invalidation, conflicts, transaction time."""
