import pytest

from kenning.store.connection import open_store


@pytest.fixture
def conn(tmp_path):
    """A fresh vault for a miner test."""
    c = open_store(tmp_path / "v.db")
    yield c
    c.close()
