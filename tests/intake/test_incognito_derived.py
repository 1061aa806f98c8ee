"""Issue 18 (a): incognito leaves nothing derived behind — checked over EVERY table the forget registry knows (so a
table added later cannot escape), in both orders (incognito at import; the mode turned on later), and clearing the
mode re-derives exactly the rows a never-incognito import derives (decisions I70–I72)."""

from __future__ import annotations

import pytest

from kenning.api import Vault
from kenning.forget.apply import KEPT_WITH_RAW, remove_derived
from kenning.forget.registry import REGISTRY
from kenning.intake import extractors as seam
from kenning.pipeline.clock import Clock
from kenning.pipeline.runner import run_stage
from kenning.pipeline.stages import SIDE_STAGES
from kenning.store.connection import transaction
from tests.intake.helpers import AS_OF, HASH, remember_extractor, two_conversations

# every stage that derives anything, the graph, self-beliefs, threads, back-links and the search index included
ALL = "0,1,2A,2B,3,4,5,6,self,knowledge,intake,extract,threads,backlinks,index"


@pytest.fixture(autouse=True)
def with_test_extractor(monkeypatch):
    monkeypatch.setattr(seam, "registered", lambda: {"test_remember": remember_extractor})


class _Undo(Exception):
    pass


def secret_cid(v: Vault) -> str:
    return v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id='conv-secret'"
                          ).fetchone()[0]


def leftovers(v: Vault, cid: str) -> tuple[dict[str, int], list[str]]:
    """What the registry's keep-raw removal WOULD still remove for ``cid`` (run, then rolled back): rows per table,
    and the active nodes still citing it. Both must be empty when nothing derived is left."""
    cited: list[str] = []

    def retract(node_ids, _gone):
        cited.extend(n for n in node_ids
                     if v.conn.execute("SELECT is_active FROM nodes WHERE id=?", (n,)).fetchone()[0])
        return {}

    found: dict[str, int] = {}
    try:
        with transaction(v.conn):
            rep = remove_derived(v.conn, v.config, [cid], AS_OF, retract)
            found = {t: n for t, n in {**rep.removed, **rep.redacted}.items() if n}
            raise _Undo
    except _Undo:
        pass
    return found, cited


def raw_rows(v: Vault, cid: str) -> int:
    return v.conn.execute("SELECT COUNT(*) FROM messages WHERE conversation_id=? AND text_raw<>''", (cid,)
                          ).fetchone()[0]


def test_the_check_sees_every_registered_table_and_finds_what_a_normal_import_derives(tmp_path):
    """The check itself: on a normal import it finds derived rows in the seed-001 stages, the self-beliefs, the
    threads, the search index and the node store."""
    assert {"entity_mentions", "assertions", "search_docs", "conversation_threads"} <= {e.table for e in REGISTRY}
    assert not (KEPT_WITH_RAW - {e.table for e in REGISTRY})
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=ALL)
        found, cited = leftovers(v, secret_cid(v))
        assert {"entity_mentions", "time_mentions", "search_docs", "conversation_threads",
                "intake_observation_rows"} <= set(found), found  # the view intake_observations (Y2)
        assert cited  # the bridge and the test extractor learned from it
    finally:
        v.close()


def test_incognito_at_import_leaves_nothing_derived_in_any_table(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([two_conversations(tmp_path)], as_of=AS_OF, stages=ALL, incognito=True)
        for cid in [r[0] for r in v.conn.execute("SELECT conversation_id FROM conversations")]:
            found, cited = leftovers(v, cid)
            assert found == {} and cited == [], (cid, found, cited)
            assert raw_rows(v, cid) > 0  # raw only (the default): the words are kept, never learned from
        # search shows nothing of incognito raw (I71)
        assert v.conn.execute("SELECT COUNT(*) FROM search_docs WHERE doc_kind='message'").fetchone()[0] == 0
    finally:
        v.close()


def test_mode_turned_on_later_removes_every_derived_row_and_rerun_derives_none(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        export = two_conversations(tmp_path)
        v.ingest([export], as_of=AS_OF, stages=ALL)
        cid = secret_cid(v)
        res = run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option("2024-06-02T00:00:00Z"),
                        inputs={"set": [("conversation", cid)]})
        assert res.counts["derived_rows_removed"] > 0 and res.counts["nodes_retracted"] > 0
        found, cited = leftovers(v, cid)
        assert found == {} and cited == [], (found, cited)
        assert raw_rows(v, cid) > 0
        # the other conversation keeps what it taught
        other = v.conn.execute("SELECT conversation_id FROM conversations WHERE conversation_id<>?", (cid,)
                               ).fetchone()[0]
        assert leftovers(v, other)[0]
        # every stage again: nothing is derived from it, and nothing is purged twice
        runs = v.ingest([export], as_of="2024-06-03T00:00:00Z", stages=ALL)
        assert all(not r.counts.get("incognito_derived_rows_removed") for r in runs)
        found, cited = leftovers(v, cid)
        assert found == {} and cited == [], (found, cited)
    finally:
        v.close()


DERIVED = {  # table → the columns that say what was derived (ids and content; no run ids or clocks)
    "entity_mentions": "*", "time_mentions": "*", "entity_mention_candidates": "*", "assertions": "*",
    "experiences": "experience_id, message_id, text_start, text_end, text_sha256",
    "conversation_threads": "thread_id, title_hint, checkpoint_summary, key_decisions, unresolved_items",
    "search_docs": "doc_kind, doc_id, content_sha256", "detect_message_state": "message_rowid, input_hash",
    "lexicon_terms": "term_key, canonical_surface", "backlink_observations": "*",
}


def snapshot(v: Vault, cid: str) -> dict[str, list]:
    out = {}
    for table, cols in DERIVED.items():
        names = [r[1] for r in v.conn.execute(f"PRAGMA table_info({table})")]
        if cols == "*":
            cols = ", ".join(n for n in names if not (n.endswith("run_id") or n.endswith("_at")
                                                      or n.endswith("_at_utc")))
        out[table] = sorted(map(repr, v.conn.execute(f"SELECT {cols} FROM {table}").fetchall()))
    return out


def test_clearing_the_mode_re_derives_identical_rows(tmp_path):
    """Determinism: incognito at import, then the mode cleared and the same input ingested again, holds the same
    derived rows as an import that was never incognito."""
    export = two_conversations(tmp_path)
    plain = Vault.open(tmp_path / "plain.db", overrides=HASH)
    try:
        plain.ingest([export], as_of=AS_OF, stages=ALL)
        want = snapshot(plain, secret_cid(plain))
    finally:
        plain.close()
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([export], as_of=AS_OF, stages=ALL, incognito=True)
        assert snapshot(v, secret_cid(v)) != want
        rules = [r[0] for r in v.conn.execute("SELECT scope_value FROM memory_mode_rules WHERE scope='source'")]
        assert rules
        run_stage(v.conn, SIDE_STAGES["intake-mode"], v.config, Clock.from_option(AS_OF),
                  inputs={"clear": [("source", r) for r in rules]})
        v.ingest([export], as_of=AS_OF, stages=ALL)
        got = snapshot(v, secret_cid(v))
        for table in DERIVED:
            assert got[table] == want[table], table
        assert v.conn.execute("SELECT COUNT(*) FROM incognito_purges").fetchone()[0] == 0
    finally:
        v.close()


def test_search_shows_incognito_raw_only_when_asked(tmp_path):
    """I71: incognito turns are never indexed, so `kenning search` never shows them; `--incognito` scans their raw
    text and lists the matching turns apart."""
    import json

    from tests.conftest import run_cli

    db, cfg = tmp_path / "v.db", tmp_path / "c.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n", encoding="utf-8")
    export = two_conversations(tmp_path)
    run_cli("ingest", str(export), "--incognito", "--as-of", AS_OF, "--stages", ALL, "--config", str(cfg), db=db)
    plain = json.loads(run_cli("search", "paper notebook", "--json", "--config", str(cfg), db=db).stdout)
    assert not [h for h in plain["hits"] if "notebook" in (h.get("text") or "")]
    assert "incognito_raw" not in plain
    asked = json.loads(run_cli("search", "paper notebook", "--incognito", "--json", "--config", str(cfg),
                               db=db).stdout)
    (turn,) = asked["incognito_raw"]
    assert "paper notebook" in turn["text"] and turn["title"] == "Private journal"
    text = run_cli("search", "Notebook PAPER", "--incognito", "--config", str(cfg), db=db).stdout
    assert "incognito (raw only, never learned from): 1 turn(s)" in text and "Private journal" in text


def test_a_config_rule_added_later_is_purged_by_the_first_stage_of_the_next_run(tmp_path):
    """I74: a title pattern added to the config needs no command — the first deriving stage of the next run purges
    the conversation before it derives anything, and a run after that purges nothing."""
    export = two_conversations(tmp_path)
    v = Vault.open(tmp_path / "v.db", overrides=HASH)
    try:
        v.ingest([export], as_of=AS_OF, stages=ALL)
        assert leftovers(v, secret_cid(v))[0]
    finally:
        v.close()
    v = Vault.open(tmp_path / "v.db", overrides={**HASH, "intake": {"incognito": {"title_patterns": ["^private"]}}})
    try:
        runs = v.ingest([export], as_of="2024-06-02T00:00:00Z", stages=ALL)
        by_stage = {r.stage: r.counts for r in runs}
        assert by_stage["2A"].get("incognito_derived_rows_removed", 0) > 0
        assert by_stage["2A"].get("incognito_nodes_retracted", 0) > 0
        found, cited = leftovers(v, secret_cid(v))
        assert found == {} and cited == [], (found, cited)
        again = v.ingest([export], as_of="2024-06-03T00:00:00Z", stages=ALL)
        assert not any(k.startswith("incognito_") and k != "incognito_conversations" and n
                       for r in again for k, n in r.counts.items() if k.endswith("removed"))
    finally:
        v.close()
