"""The edge gate moved to :mod:`kenning.knowledge.edge_gate` (L1): knowledge's own readers (compiled truth,
inspect, node pages) gate promoted edges, and ``knowledge/`` sits below ``upkeep/``. The names stay importable
from here."""

from kenning.knowledge.edge_gate import LEARNED_BY, Audience, EdgeGate, gated_ended_edges, gated_neighbors

__all__ = ["LEARNED_BY", "Audience", "EdgeGate", "gated_ended_edges", "gated_neighbors"]
