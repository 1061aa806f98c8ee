"""Issue 23 §2: a wiki workspace cannot make Kenning read (and mark "verified") a file outside it through a symbolic
link inside raw/ — to a file or to a folder — unless the person passes --follow-symlinks (decision P10)."""

from __future__ import annotations

import shutil

import pytest

from kenning.api import Vault
from kenning.beliefs.wiki_import import WikiRunRejected
from kenning.pipeline.runner import StageFailed
from tests.beliefs.beliefs_helpers import minimal_wiki
from tests.conftest import run_cli

AS_OF = "2026-06-01T00:00:00Z"
CODE = ("provenance_link", "raw_path_symlink_outside_workspace")


def _outside(tmp_path):
    """The workspace's raw file moved out to a folder elsewhere (as /etc would be)."""
    wiki = minimal_wiki(tmp_path / "w")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move(wiki / "raw" / "notes" / "a.md", elsewhere / "a.md")
    return wiki, elsewhere


def _rejected(db, wiki, **kw) -> WikiRunRejected:
    with Vault.open(db) as v, pytest.raises(StageFailed) as exc:
        v.ingest([wiki], as_of=AS_OF, **kw)
    assert isinstance(exc.value.cause, WikiRunRejected)
    return exc.value.cause


def test_a_link_to_a_file_outside_is_refused_naming_the_link(tmp_path):
    wiki, elsewhere = _outside(tmp_path)
    (wiki / "raw" / "notes" / "a.md").symlink_to(elsewhere / "a.md")
    rej = _rejected(tmp_path / "v.db", wiki)
    found = [f for f in rej.findings if (f.check, f.code) == CODE]
    assert found and "raw/notes/a.md is a link to" in found[0].message and str(elsewhere) in found[0].message
    assert "--follow-symlinks" in found[0].message
    with Vault.open(tmp_path / "v.db", readonly=True) as v:
        assert v.conn.execute("SELECT count(*) FROM wiki_claim_provenance").fetchone()[0] == 0


def test_a_link_to_a_folder_outside_is_refused_and_follow_symlinks_allows_it(tmp_path):
    wiki, elsewhere = _outside(tmp_path)
    shutil.rmtree(wiki / "raw" / "notes")
    (wiki / "raw" / "notes").symlink_to(elsewhere, target_is_directory=True)
    rej = _rejected(tmp_path / "v.db", wiki)
    assert any((f.check, f.code) == CODE and "raw/notes is a link to" in f.message for f in rej.findings)
    with Vault.open(tmp_path / "v.db") as v:
        [r] = v.ingest([wiki], as_of=AS_OF, follow_symlinks=True)
    assert r.counts["beliefs"] == 2


def test_a_link_inside_the_workspace_is_fine(tmp_path):
    wiki = minimal_wiki(tmp_path / "w")
    shutil.move(wiki / "raw" / "notes" / "a.md", wiki / "raw" / "a-real.md")
    (wiki / "raw" / "notes" / "a.md").symlink_to(wiki / "raw" / "a-real.md")
    with Vault.open(tmp_path / "v.db") as v:
        [r] = v.ingest([wiki], as_of=AS_OF)
    assert r.counts["beliefs"] == 2


def test_cli_follow_symlinks(tmp_path):
    wiki, elsewhere = _outside(tmp_path)
    (wiki / "raw" / "notes" / "a.md").symlink_to(elsewhere / "a.md")
    db = tmp_path / "c.db"
    refused = run_cli("ingest", str(wiki), "--as-of", AS_OF, "-q", db=db, check=False)
    assert refused.returncode != 0 and "raw/notes/a.md is a link to" in refused.stdout + refused.stderr
    run_cli("ingest", str(wiki), "--as-of", AS_OF, "-q", "--follow-symlinks", db=db)
