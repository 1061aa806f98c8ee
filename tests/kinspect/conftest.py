"""A small vault with Anna's graph (tests/knowledge/delivery_fixtures.rich_graph), built once per session and
copied per test."""

from __future__ import annotations

import shutil

import pytest

from kenning.store.connection import open_store
from knowledge.delivery_fixtures import rich_graph


@pytest.fixture(scope="session")
def _anna_vault(tmp_path_factory):
    path = tmp_path_factory.mktemp("anna") / "v.db"
    c = open_store(path)
    g = rich_graph(c)
    g.evidence("Marco", 17, 17)        # α = β = 19, mass 0.76: [distinguish]
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return path, dict(g.ids), g.config


@pytest.fixture
def anna(tmp_path, _anna_vault):
    src, ids, config = _anna_vault
    dst = tmp_path / "v.db"
    shutil.copy(src, dst)
    return dst, ids, config
