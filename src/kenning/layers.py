"""The layers Kenning's packages stack in, lowest first: a module may import only from its own layer or a lower one
(ARCHITECTURE "a package depends only on packages at or below its layer"; docs/architecture.md "Layers → packages").
``tests/test_layering.py`` parses every module under ``src/kenning`` and fails on an import of a higher layer,
lazy imports inside functions included. This table is the one place the order is written (decision L5).

A package sits in one layer unless a few of its modules are the floor others build on; those are named one by one
(the longest dotted prefix wins): the JSON canonicalization, ids and timestamps in ``sources/``, the frozen clock, the
stage runner and stage 0 in ``pipeline/``, and the incognito filter every deriving stage asks first."""

from __future__ import annotations

# (layer name, [package or module prefixes under kenning]) — lowest first
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("floor", ("__init__", "layers", "samples", "config", "store", "llm", "privatefs", "sources.jcs", "sources.ids", "sources.timestamps",
               "sources.jsonpointer", "pipeline.clock")),
    # the DOC72 node store, low in the house so every layer above can use it; the stage runner closes every stage
    # by exporting the node store's event log (DOC72 §3.1), and knowledge's own model calls run as stages
    ("knowledge", ("knowledge", "pipeline.runner", "pipeline.stage0", "pipeline.incognito")),
    ("raw", ("sources",)),
    ("mentions", ("detect",)),
    ("claims", ("extract",)),
    # seed 000's self-beliefs, seed 001's temporal layer and seed 002's ledger feed one another
    ("beliefs", ("temporal", "beliefs", "selfbelief")),
    ("indexes", ("graph",)),
    # DOC72 around the node store: observation intake and memory modes, and the forget registry their purge uses
    ("intake", ("intake", "forget")),
    ("retrieve", ("retrieve",)),
    ("upkeep", ("upkeep",)),
    # the stages that compose every layer above into the one pipeline
    ("pipeline", ("pipeline",)),
    ("roof", ("cli", "serve", "api", "bench", "__main__")),
)

# Imports that cross upward on purpose: (importing module, imported module) → why (each one a decision).
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("kenning.pipeline.incognito", "kenning.intake.modes"):
        "L6: before any deriving stage (at whatever layer) reads, what incognito content already derived is purged "
        "through the forget registry, which knows every derived table and so sits above them all",
}


def _rank() -> dict[str, int]:
    return {prefix: i for i, (_name, prefixes) in enumerate(LAYERS) for prefix in prefixes}


_RANKS = _rank()


def layer_of(module: str) -> tuple[int, str] | None:
    """(rank, layer name) of a ``kenning.…`` module by the longest matching prefix; None outside kenning."""
    parts = module.split(".")
    if parts[0] != "kenning":
        return None
    if len(parts) == 1:
        parts = ["kenning", "__init__"]
    for n in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[1:n + 1])
        if prefix in _RANKS:
            i = _RANKS[prefix]
            return i, LAYERS[i][0]
    return None
