"""Small exports and config files for the self-belief tests (real vaults, the CLI as a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_export

HASH_YAML = "embeddings:\n  backend: hash\n"
AS_OF = "2024-01-01T00:00:00Z"
SELF_TABLES = ("experiences", "experience_scans", "experience_runs", "extractor_versions", "belief_nodes",
               "belief_occurrences", "tentative_links", "conflict_edges", "stream_assignments", "wiki_beliefs",
               "wiki_claim_provenance", "belief_provenance")

TURNS = [
    ("user", "I am patient with people, but I hate mornings."),
    ("assistant", "Thanks for sharing. What makes mornings hard?"),
    ("user", "I'm a night owl and I value quiet evenings."),
    ("assistant", "That makes sense."),
    ("user", "Honestly, I am not patient with people. Can you help me plan a trip?"),
]


def hash_config(tmp_path: Path, extra: str = "") -> Path:
    p = tmp_path / "hash.yaml"
    p.write_text(HASH_YAML + extra, encoding="utf-8")
    return p


def export(tmp_path: Path, turns=TURNS, name: str = "conversations.json") -> Path:
    return write_export(tmp_path / name, list(turns))


def multi_export(path: Path, convs: list[tuple[str, float, list[tuple[str, str]]]]) -> Path:
    """Several conversations: (conversation id, unix start time, turns) each."""
    out = []
    for conv_id, start, turns in convs:
        one = json.loads(write_export(path, turns, conv_id=conv_id, title=conv_id).read_text())[0]
        shift = start - 1700000000
        one["create_time"] += shift
        one["update_time"] += shift
        for node in one["mapping"].values():
            if node["message"]:
                node["message"]["create_time"] += shift
        out.append(one)
    path.write_text(json.dumps(out), encoding="utf-8")
    return path
