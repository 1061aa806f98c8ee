"""A real vault built from the bundled sample through the conversation stages, the bridge and `backlinks`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kenning.api import Vault
from kenning.cli.demo import sample_path

AS_OF = "2024-06-01T00:00:00Z"
STAGES = "0,1,2A,2B,3,4,5,knowledge,backlinks"
HASH = {"embeddings": {"backend": "hash"}}


@pytest.fixture(scope="session")
def backlinks_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("backlinks") / "sample.db"
    v = Vault.open(path, overrides=HASH)
    v.ingest([sample_path()], as_of=AS_OF, stages=STAGES)
    v.close()
    return path


@pytest.fixture
def vault(backlinks_db, tmp_path):
    path = tmp_path / "v.db"
    shutil.copy(backlinks_db, path)
    log = backlinks_db.with_name(f"{backlinks_db.stem}.graph_events.jsonl")
    if log.exists():
        shutil.copy(log, tmp_path / "v.graph_events.jsonl")
    v = Vault.open(path, overrides=HASH)
    yield v
    v.close()
