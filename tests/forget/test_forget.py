"""`kenning forget` (issue 23 §1) on a real vault: the bundled sample plus one conversation with a planted phrase.

After forgetting that conversation the phrase is unfindable — by `search`, `why`, `facts`, `self`, the MCP tools,
the knowledge node store, and a grep of the vault file's bytes, its WAL and the knowledge event log — and nothing
unrelated changed. A preview changes nothing; a re-import does not bring it back; --include-forgotten does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from exportkit import conversation, write_export
from kenning.api import Vault
from kenning.cli.demo import sample_path
from kenning.forget import ForgetError, forget
from tests.conftest import run_cli
from vault_dump import dump

PHRASE = "xylophone marmalade"
NAME = "Zorblatt Quimby"
PLANTED_ID = "planted-conv-0001"
AS_OF = "2024-12-31T00:00:00Z"
HASH_CFG = "embeddings:\n  backend: hash\n"

PLANTED = conversation(PLANTED_ID, [
    ("user", f"I moved to Quokkaville last spring. My friend {NAME} makes the best {PHRASE} in town."),
    ("assistant", f"That sounds lovely! What makes {NAME}'s {PHRASE} special?"),
    ("user", f"I love {PHRASE}. I am a {PHRASE} collector and I hate cheap jam."),
    ("assistant", "A fine hobby."),
], title="Quokkaville jam notes", start=1_700_000_000.0)


def _files(db: Path) -> list[Path]:
    return [p for p in (db, db.with_name(db.name + "-wal"), db.with_name(f"{db.stem}.graph_events.jsonl"))
            if p.exists()]


def _copy_vault(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    for p in _files(src):
        shutil.copy2(p, dst.parent / p.name.replace(src.stem, dst.stem, 1))
    return dst


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("forget")
    cfg = root / "hash.yaml"
    cfg.write_text(HASH_CFG, encoding="utf-8")
    export = write_export(root / "planted.json", [PLANTED])
    db = root / "base.db"
    with Vault.open(db, config_path=cfg) as v:
        v.ingest([sample_path(), export], as_of=AS_OF)
    return {"db": db, "cfg": cfg, "export": export, "root": root}


@pytest.fixture
def vault(built, tmp_path) -> Path:
    return _copy_vault(built["db"], tmp_path / "v.db")


def _cid(db: Path, cfg: Path) -> str:
    with Vault.open(db, config_path=cfg) as v:
        return v.conn.execute("SELECT conversation_id FROM conversations WHERE export_conversation_id=?",
                              (PLANTED_ID,)).fetchone()[0]


def _grep(db: Path, needle: str) -> list[str]:
    return [p.name for p in _files(db) if needle.lower().encode() in p.read_bytes().lower()]


def _findable(db: Path, cfg: Path) -> dict[str, bool]:
    """Where the phrase (or the planted friend's name) can be found: CLI reads, MCP tools, node store, bytes."""
    c = ["--db", str(db), "--config", str(cfg)]
    got = {}
    got["search"] = _mentions(json.loads(run_cli("search", PHRASE, "--json", *c).stdout))
    got["why"] = _mentions(json.loads(run_cli("why", PHRASE, "--json", *c).stdout))
    got["facts"] = NAME.lower() in run_cli("facts", "--json", *c).stdout.lower()
    got["self"] = PHRASE in run_cli("self", "list", "--json", *c).stdout.lower()
    got["mcp"] = _mcp_finds(db, cfg)
    with Vault.open(db, config_path=cfg, readonly=True) as v:
        nodes = v.conn.execute("SELECT count(*) FROM nodes WHERE instr(lower(canonical_name || ' ' || "
                               "coalesce(payload, '')), ?) > 0 OR id IN (SELECT node_id FROM provenance_entries "
                               "WHERE instr(lower(verbatim_excerpt), ?) > 0)", (PHRASE, PHRASE)).fetchone()[0]
    got["nodes"] = nodes > 0
    got["bytes"] = bool(_grep(db, PHRASE) or _grep(db, NAME) or _grep(db, "Quokkaville jam notes"))
    return got


_ECHO = ("query", "parsed", "request", "lanes")   # what a read echoes of the question itself


def _mentions(answer: dict) -> bool:
    """Whether an answer names the phrase or the planted friend anywhere but in its echo of the question."""
    kept = {k: v for k, v in answer.items() if k not in _ECHO}
    text = json.dumps(kept, default=str, ensure_ascii=False).lower()
    return PHRASE in text or NAME.lower() in text


def _mcp_finds(db: Path, cfg: Path) -> bool:
    from mcp import Client

    from kenning.serve.mcp_server import build_server

    async def call() -> list[dict]:
        async with Client(build_server(db, cfg)) as client:
            got = []
            for tool, args in (("search", {"query": PHRASE, "k": 10}), ("why", {"query": PHRASE}),
                               ("beliefs_list", {"limit": 500}), ("context", {"request": f"What about {PHRASE}?"})):
                res = await client.call_tool(tool, args)
                assert not res.is_error, (tool, res.content)
                got.append(res.structured_content or {})
            return got

    return any(_mentions(a) for a in anyio.run(call))


@pytest.mark.slow
def test_the_phrase_is_findable_before(built):
    found = _findable(built["db"], built["cfg"])
    assert all(found.values()), found     # every read finds it before: the checks after are not vacuous


@pytest.mark.slow
def test_forget_one_conversation_everywhere(vault, built):
    cfg = built["cfg"]
    cid = _cid(vault, cfg)
    before = dump(vault)
    with Vault.open(vault, config_path=cfg) as v:
        # stage 2A's state rows are keyed by the message's rowid (N12)
        msg_rowids = {str(r[0]) for r in v.conn.execute("SELECT rowid FROM messages WHERE conversation_id=?", (cid,))}
        report = forget(v.conn, v.config, "conversation", cid, apply=True)
    assert report.applied and report.vacuumed and [c["conversation_id"] for c in report.conversations] == [cid]
    n = sum(1 for r in before["messages"] if r[1] == cid)
    assert n >= 4 and report.messages == n and report.removed["conversations"] == 1
    assert report.removed.get("assertions", 0) >= 1 and report.removed.get("search_docs", 0) >= 4
    found = _findable(vault, cfg)
    assert not any(found.values()), found
    after = dump(vault)
    _only_related_rows_changed(before, after, {**report.keys, "message_rowid": msg_rowids})
    # nothing unrelated changed: the raw layer of every other conversation, and per-message rows of other messages
    gone = {r[0] for r in before["messages"] if r[1] == cid}
    for table, key in (("conversations", 0), ("messages", 0), ("message_parts", 1), ("entity_mentions", 1),
                       ("time_mentions", 1), ("assertions", 1)):
        cols = _columns(vault, table)
        k = cols.index("message_id" if table not in ("conversations",) else "conversation_id")
        if table == "messages":
            k = cols.index("message_id")
        kept = sorted(r for r in before[table] if r[k] not in gone and r[k] != cid)
        assert _strip_changed(table, kept, cols) == _strip_changed(table, after[table], cols), table
    # the forget log says what and how much, never the content
    with Vault.open(vault, config_path=cfg, readonly=True) as v:
        log = v.conn.execute("SELECT selector, conversations, messages, counts_json, vacuumed FROM forget_log"
                             ).fetchall()
    assert len(log) == 1 and log[0][:3] == ("conversation", 1, n) and log[0][4] == 1
    assert cid not in log[0][3] and "marmalade" not in log[0][3].lower()


# Tables recomputed as a whole (a rebuilt graph, index internals, counters) or that record the forget itself.
RECOMPUTED = {"graph_nodes", "graph_edges", "search_term_docs", "runs", "run_events", "forget_log",
              "forgotten_conversations", "knowledge_commits", "knowledge_commit_mutations", "nodes", "aliases",
              "edges", "provenance_entries", "extraction_outcome_events", "vault_meta", "search_state",
              "vector_state", "knowledge_state"}


def _only_related_rows_changed(before: dict, after: dict, keys: dict[str, set[str]]) -> None:
    """Every row that went names a forgotten key; every row that changed named one before (a pointer cleared, a
    list shortened); no other row of any table moved (the dump of tests/vault_dump.py, table by table). FTS5 and
    vec0 shadow tables follow their owners; embedding-cache and vector rows are keyed by hashes and rowids."""
    forgotten = set().union(*keys.values())
    rowids = keys.get("search_doc", set()) | keys.get("vector", set()) | keys.get("message_rowid", set())

    def related(row: tuple) -> bool:
        return any((isinstance(x, str) and any(k in x for k in forgotten)) or
                   (isinstance(x, int) and str(x) in rowids) for x in row)

    problems = {}
    for table in sorted(set(before) | set(after)):
        if table in RECOMPUTED or table.startswith(("search_fts", "fts_nodes", "wiki_beliefs_fts", "vec_items_")):
            continue
        b, a = set(before.get(table, [])), set(after.get(table, []))
        gone, new = b - a, a - b
        changed_from = {r[0] for r in gone if related(r)}
        unrelated_gone = [r for r in gone if not related(r) and r[0] not in {n[0] for n in new}]
        if table == "embedding_cache":
            unrelated_gone = []          # keyed by the hash of a forgotten text
        unexplained_new = [r for r in new if r[0] not in changed_from]
        if unrelated_gone or unexplained_new:
            problems[table] = {"gone": len(unrelated_gone), "new_or_changed": len(unexplained_new)}
    assert not problems, problems


def _columns(db: Path, table: str) -> list[str]:
    with Vault.open(db, readonly=True) as v:
        return [r[1] for r in v.conn.execute(f'PRAGMA table_info("{table}")')]


def _strip_changed(table: str, rows: list, cols: list[str]) -> list:
    """Assertions may lose a pointer to a forgotten one (superseded_by): compare without those columns."""
    if table != "assertions":
        return sorted(rows)
    drop = {cols.index("superseded_by_assertion_id"), cols.index("supersession_type")}
    return sorted(tuple(x for i, x in enumerate(r) if i not in drop) for r in rows)


def test_preview_changes_nothing(vault, built):
    before = dump(vault)
    with Vault.open(vault, config_path=built["cfg"]) as v:
        report = forget(v.conn, v.config, "matching", PHRASE)
    assert not report.applied and len(report.conversations) == 1 and report.messages >= 4
    assert dump(vault) == before


def test_selectors(vault, built):
    with Vault.open(vault, config_path=built["cfg"]) as v:
        assert [c["conversation_id"] for c in forget(v.conn, v.config, "conversation", "Quokkaville jam notes"
                                                     ).conversations] == [_cid(vault, built["cfg"])]
        assert len(forget(v.conn, v.config, "source", "planted.json").conversations) == 1
        assert len(forget(v.conn, v.config, "source", "sample-chatgpt-export.zip").conversations) == 40
        between = forget(v.conn, v.config, "between", ("2023-11-14", "2023-11-14")).conversations
        assert "Quokkaville jam notes" in [c["title"] for c in between] and len(between) < 5
        assert forget(v.conn, v.config, "matching", "no such phrase anywhere").conversations == []
        for sel, val in (("between", ("2024-01-01", "2023-01-01")), ("between", ("soon", "later")),
                         ("matching", "x")):
            with pytest.raises(ForgetError):
                forget(v.conn, v.config, sel, val)


@pytest.mark.slow
def test_cli_reimport_and_include_forgotten(vault, built):
    c = ["--db", str(vault), "--config", str(built["cfg"])]
    preview = run_cli("forget", "--matching", PHRASE, "--json", *c)
    assert json.loads(preview.stdout)["applied"] is False
    assert run_cli("forget", "--matching", PHRASE, *c).stderr.count("preview only") == 1
    done = json.loads(run_cli("forget", "--matching", PHRASE, "--yes", "--json", *c).stdout)
    assert done["applied"] and done["messages"] >= 4
    again = run_cli("forget", "--matching", PHRASE, "--yes", *c)
    assert "nothing to forget" in again.stderr
    assert json.loads(run_cli("forget", "--log", "--json", *c).stdout)[0]["selector"] == "matching"
    # a re-import of the same export skips it …
    run_cli("ingest", str(built["export"]), "--as-of", AS_OF, "-q", *c)
    assert not _mentions(json.loads(run_cli("search", PHRASE, "--json", *c).stdout))
    assert not _grep(vault, PHRASE)
    # … and so does an export that holds it beside something new
    newer = write_export(vault.parent / "newer.json", [PLANTED, conversation("other-conv", [
        ("user", "I started learning the cello this week."), ("assistant", "Wonderful!")], title="Cello")])
    runs = json.loads(run_cli("ingest", str(newer), "--as-of", AS_OF, "--stages", "1", "--json", *c).stdout)["runs"]
    assert runs[0]["counts"]["conversations_forgotten_skipped"] == 1 and runs[0]["counts"]["conversations_new"] == 1
    assert not _grep(vault, PHRASE)
    # … unless asked
    run_cli("ingest", str(built["export"]), "--as-of", AS_OF, "-q", "--include-forgotten", *c)
    assert _mentions(json.loads(run_cli("search", PHRASE, "--json", *c).stdout))
    bad = run_cli("forget", *c, check=False)
    assert bad.returncode != 0 and "exactly one of" in bad.stderr


def test_mcp_beliefs_list_limit_is_capped(built):
    from mcp import Client

    from kenning.serve.mcp_server import MAX_BELIEFS, build_server

    async def call() -> list:
        async with Client(build_server(built["db"], built["cfg"])) as client:
            return [await client.call_tool("beliefs_list", {"limit": n}) for n in (-1, MAX_BELIEFS + 1, 3)]

    minus, over, ok = anyio.run(call)
    assert minus.is_error and over.is_error and "between 1 and" in str(minus.content)
    assert not ok.is_error and len(ok.structured_content["beliefs"]) == 3


@pytest.mark.slow
def test_no_vacuum_then_scrub_and_a_busy_reader(vault, built):
    import apsw

    from kenning.forget.apply import scrub

    c = ["--db", str(vault), "--config", str(built["cfg"])]
    done = json.loads(run_cli("forget", "--matching", PHRASE, "--yes", "--no-vacuum", "--json", *c).stdout)
    assert done["applied"] and not done["vacuumed"]
    assert json.loads(run_cli("forget", "--log", "--json", *c).stdout)[0]["vacuumed"] == 0
    # a reader holding the vault open: the rewrite waits for another time instead of failing the forget
    reader = apsw.Connection(str(vault), flags=apsw.SQLITE_OPEN_READONLY)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM messages").fetchall()
    with Vault.open(vault, config_path=built["cfg"]) as v:
        v.conn.setbusytimeout(100)
        assert scrub(v.conn) is False
    reader.execute("COMMIT")
    reader.close()
    assert "rewritten" in run_cli("forget", "--scrub", *c).stderr
    assert json.loads(run_cli("forget", "--log", "--json", *c).stdout)[0]["vacuumed"] == 1
    assert not _grep(vault, PHRASE)


def test_deterministic_under_a_frozen_clock(built, tmp_path):
    dumps = []
    for name in ("a", "b"):
        db = _copy_vault(built["db"], tmp_path / name / "v.db")
        with Vault.open(db, config_path=built["cfg"]) as v:
            r = v.forget("matching", PHRASE, apply=True, as_of="2025-02-01T00:00:00Z")
        assert r.applied and r.forget_id
        dumps.append(dump(db))
    assert dumps[0] == dumps[1]


def test_a_busy_vault_is_a_clear_message_and_changes_nothing(vault, built, tmp_path):
    import apsw

    cfg = tmp_path / "busy.yaml"
    cfg.write_text(HASH_CFG + "vault:\n  busy_timeout_ms: 200\n", encoding="utf-8")
    before = dump(vault)
    writer = apsw.Connection(str(vault))
    writer.execute("BEGIN IMMEDIATE")
    try:
        got = run_cli("forget", "--matching", PHRASE, "--yes", "--db", str(vault), "--config", str(cfg), check=False)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert got.returncode == 1 and "another Kenning process is writing" in got.stderr and "Traceback" not in got.stderr
    assert dump(vault) == before


def test_forgetting_everything_leaves_a_consistent_nearly_empty_vault(vault, built):
    with Vault.open(vault, config_path=built["cfg"]) as v:
        first = v.forget("between", ("2022-01-01", "2023-06-30"), apply=True, vacuum=False)
        assert len(first.conversations) > 10
        assert v.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        rest = v.forget("between", ("1990-01-01", "2100-01-01"), apply=True)
        assert len(first.conversations) + len(rest.conversations) == 41
        conn = v.conn
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        count = lambda t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # noqa: E731
        for t in ("conversations", "messages", "assertions", "belief_nodes", "wiki_beliefs", "edges", "lexicon_terms",
                  "entity_mentions", "time_mentions", "rejects", "experiences"):
            assert count(t) == 0, t
        # what is left is the vault owner (SELF) and its knowledge node, nothing anyone said
        assert count("entities") <= 1 and count("nodes") <= 1 and count("search_docs") <= 1
        assert [r[0] for r in conn.execute("SELECT selector FROM forget_log ORDER BY forgotten_at_utc")] == [
            "between", "between"]
