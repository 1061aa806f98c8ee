"""The decomposer end to end on real vaults: ingest, the six invariants of seed 000 §9, rollback and backfill (§6),
determinism, one transaction per stage, and the ledger feed (`kenning why`)."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from conftest import run_cli
from selfbeliefs.helpers import AS_OF, SELF_TABLES, export, hash_config, multi_export
from vault_dump import dump


def ingest(tmp_path: Path, db: Path, src: Path, cfg: Path, as_of: str = AS_OF):
    return run_cli("ingest", str(src), "--config", str(cfg), "--stages", "0,1,self", "--as-of", as_of, db=db)


def cli_json(*args, db, cfg):
    return json.loads(run_cli(*args, "--config", str(cfg), "--json", db=db).stdout)


@pytest.fixture
def vault(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    ingest(tmp_path, db, export(tmp_path), cfg)
    return db, cfg


def conn_of(db: Path) -> apsw.Connection:
    from kenning.store.connection import open_store

    return open_store(db)


def by_statement(nodes):
    return {n["statement"]: n for n in nodes}


def test_ingest_selects_experiences_and_builds_nodes(vault):
    db, cfg = vault
    nodes = by_statement(cli_json("self", "list", db=db, cfg=cfg))
    assert set(nodes) == {"I am patient with people.", "I hate mornings.", "I am a night owl.",
                          "I value quiet evenings.", "I am not patient with people."}
    assert nodes["I value quiet evenings."]["belief_type"] == "VALUE"
    assert nodes["I hate mornings."]["polarity"] == "deny"         # aversion (S10)
    c = conn_of(db)
    exps = list(c.execute("SELECT type, selected_reason_json FROM experiences ORDER BY occurred_at"))
    assert len(exps) == 3 and all(t == "self_definition" for t, _ in exps)
    reasons = [json.loads(r) for _, r in exps]
    assert reasons[0][0]["cue"] == "first_person_self_statement" and reasons[0][0]["text"].startswith("I am patient")
    # every message read is recorded with why it was (not) selected; assistant messages are never read
    scans = dict(c.execute("SELECT reason, COUNT(*) FROM experience_scans GROUP BY reason"))
    assert scans == {"self_statement": 3}
    [version] = [v["extractor_version"] for v in cli_json("self", "versions", db=db, cfg=cfg)]
    assert {r[0] for r in c.execute("SELECT extractor_version FROM belief_occurrences")} == {version}
    # the request in the last message is rejected, the denial is kept with its span
    show = cli_json("self", "show", nodes["I am not patient with people."]["belief_id"][:10], db=db, cfg=cfg)
    assert [e["quote"] for e in show["evidence"]] == ["I am not patient with people."]
    assert show["conflicts"][0]["type"] == "contradiction"


def test_self_beliefs_are_published_to_the_ledger_and_why_finds_them(vault):
    db, cfg = vault
    out = run_cli("why", "night owl", "--config", str(cfg), "--json", db=db).stdout
    res = json.loads(out)
    text = json.dumps(res)
    assert "I am a night owl." in text and "I'm a night owl" in text    # the statement and its verbatim quote
    c = conn_of(db)
    node = c.execute("SELECT belief_id FROM belief_nodes WHERE statement = 'I am a night owl.'").fetchone()[0]
    src = c.execute("SELECT p.quote, p.char_start, p.char_end, p.message_id FROM belief_provenance bp JOIN "
                    "wiki_claim_provenance p ON p.id = bp.provenance_id WHERE bp.belief_id = ?", (node,)).fetchall()
    assert len(src) == 1
    quote, s, e, mid = src[0]
    raw = c.execute("SELECT text_raw FROM messages WHERE message_id = ?", (mid,)).fetchone()[0]
    assert raw[s:e] == quote


def test_rerun_changes_nothing_and_runs_are_deterministic(tmp_path, vault):
    db, cfg = vault
    before = dump(db, SELF_TABLES)
    r = ingest(tmp_path, db, export(tmp_path), cfg)
    assert "experiences processed 0" in r.stdout.replace("\n", " ") or "experiences_processed" not in r.stdout
    assert dump(db, SELF_TABLES) == before
    db2 = tmp_path / "v2.db"
    ingest(tmp_path, db2, export(tmp_path), cfg)
    ex = {"extractor_versions": {"first_seen_at"}}
    assert dump(db2, SELF_TABLES, ex) == dump(db, SELF_TABLES, ex)


def test_invariants_1_2_3_in_the_schema(vault):
    db, _ = vault
    c = conn_of(db)
    n = c.execute("SELECT * FROM belief_nodes LIMIT 1")
    cols = [d[0] for d in n.getdescription()]
    row = dict(zip(cols, n.fetchone()))
    # 1. one node per canonical meaning (hash + polarity, S1)
    with pytest.raises(apsw.ConstraintError):
        c.execute(f"INSERT INTO belief_nodes({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                  tuple({**row, "belief_id": "zz-other"}.values()))
    # 2. one occurrence per (belief, source, version)
    o = c.execute("SELECT * FROM belief_occurrences LIMIT 1")
    ocols = [d[0] for d in o.getdescription()]
    orow = dict(zip(ocols, o.fetchone()))
    with pytest.raises(apsw.ConstraintError):
        c.execute(f"INSERT INTO belief_occurrences({', '.join(ocols)}) VALUES ({', '.join('?' * len(ocols))})",
                  tuple({**orow, "occurrence_id": "zz-other"}.values()))
    # 3. ordered link pairs
    links = list(c.execute("SELECT from_belief_id, to_belief_id FROM tentative_links"))
    assert links and all(a < b for a, b in links)
    a, b = links[0]
    with pytest.raises(apsw.ConstraintError):
        c.execute("UPDATE tentative_links SET from_belief_id = ?, to_belief_id = ? WHERE from_belief_id = ?",
                  (b, a, a))


def test_invariant_4_accepting_a_link_does_not_merge(vault):
    db, cfg = vault
    links = cli_json("self", "links", db=db, cfg=cfg)
    assert links
    lk = links[0]
    before = cli_json("self", "list", db=db, cfg=cfg)
    run_cli("self", "links", "--accept", lk["link_id"][:12], "--config", str(cfg), db=db)
    after = cli_json("self", "list", db=db, cfg=cfg)
    assert {n["belief_id"] for n in after} == {n["belief_id"] for n in before}     # nothing merged
    acc = cli_json("self", "links", "--status", "accepted", db=db, cfg=cfg)
    assert [x["link_id"] for x in acc] == [lk["link_id"]] and acc[0]["status_reason"] == "user"
    # the explicit merge
    res = json.loads(run_cli("self", "merge", lk["from_belief_id"], lk["to_belief_id"], "--config", str(cfg),
                             "--json", db=db).stdout)
    assert res["merged"] == lk["from_belief_id"] and res["occurrences_moved"] == 1
    merged = cli_json("self", "list", db=db, cfg=cfg)
    assert lk["from_belief_id"] not in {n["belief_id"] for n in merged}
    assert next(n for n in merged if n["belief_id"] == lk["to_belief_id"])["evidence"] == 2
    # the other link is closed by reject
    rest = cli_json("self", "links", db=db, cfg=cfg)
    if rest:
        run_cli("self", "links", "--reject", rest[0]["link_id"], "--config", str(cfg), db=db)
        assert rest[0]["link_id"] in {x["link_id"] for x in cli_json("self", "links", "--status", "rejected",
                                                                       db=db, cfg=cfg)}


def test_interactive_link_review(vault):
    db, cfg = vault
    links = cli_json("self", "links", db=db, cfg=cfg)
    answers = "r\n" + "s\n" * (len(links) - 1)
    run_cli("self", "links", "-i", "--config", str(cfg), db=db, input=answers)
    rejected = cli_json("self", "links", "--status", "rejected", db=db, cfg=cfg)
    assert [x["link_id"] for x in rejected] == [links[0]["link_id"]]


def test_invariant_5_ratchet(vault):
    db, cfg = vault
    c = conn_of(db)
    bid = c.execute("SELECT belief_id FROM stream_assignments WHERE primary_stream = 'identity' LIMIT 1").fetchone()[0]
    with pytest.raises(apsw.ConstraintError, match="ratchet"):
        c.execute("UPDATE stream_assignments SET primary_stream = 'state' WHERE belief_id = ?", (bid,))
    c.close()
    bad = run_cli("self", "demote", bid[:10], "--to", "state", "--trigger", "because", "--config", str(cfg), db=db,
                  check=False)
    assert bad.returncode == 1 and "explicit trigger" in bad.stderr
    run_cli("self", "demote", bid[:10], "--to", "state", "--trigger", "explicit_obsolescence", "--config", str(cfg),
            db=db)
    show = cli_json("self", "show", bid, db=db, cfg=cfg)
    assert show["stream"] == "state" and show["migration_history"][-1]["trigger"] == "explicit_obsolescence"


def test_invariant_6_state_vs_state_never_conflicts(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    ingest(tmp_path, db, export(tmp_path, [("user", "I am tired right now."), ("assistant", "ok"),
                                           ("user", "I am not tired right now."), ("assistant", "ok"),
                                           ("user", "I am always anxious."), ("assistant", "ok"),
                                           ("user", "I am not anxious right now.")]), cfg)
    nodes = by_statement(cli_json("self", "list", db=db, cfg=cfg))
    assert nodes["I am tired."]["stream"] == "state" and nodes["I am not tired."]["stream"] == "state"
    assert nodes["I am tired."]["conflict_count"] == 0 and nodes["I am not tired."]["conflict_count"] == 0
    # a state against a stable (identity) pattern does conflict
    edges = cli_json("self", "conflicts", db=db, cfg=cfg)
    pairs = [{e["a_statement"], e["b_statement"]} for e in edges]
    assert pairs == [{"I am anxious.", "I am not anxious."}]


def test_state_to_identity_migration(tmp_path):
    """The same feeling said in 6 conversations over 20 days: spread, diversity and activation pass → identity."""
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    day = 86400
    convs = [(f"c{i}", 1700000000 + i * 4 * day, [("user", "I feel anxious right now.")]) for i in range(6)]
    src = multi_export(tmp_path / "multi.json", convs)
    ingest(tmp_path, db, src, cfg, as_of="2023-12-06T00:00:00Z")
    [n] = cli_json("self", "list", db=db, cfg=cfg)
    assert n["stream"] == "identity" and n["migrated_from"] == "state" and n["evidence"] == 6
    show = cli_json("self", "show", n["belief_id"], db=db, cfg=cfg)
    h = show["migration_history"][-1]
    assert h["reason"] == "promote_state_to_identity" and h["spread"] >= 0.7 and h["diversity"] >= 0.6
    assert show["score"]["half_life_days"] == 60      # activation now decays at the identity rate


def test_rollback_and_backfill(vault):
    db, cfg = vault
    [v] = cli_json("self", "versions", db=db, cfg=cfg)
    skip = json.loads(run_cli("self", "backfill", "--config", str(cfg), "--json", "--as-of", AS_OF, db=db).stdout)
    assert skip["experiences_processed"] == 0                          # already processed by this version
    rb = json.loads(run_cli("self", "rollback", v["extractor_version"], "--config", str(cfg), "--json",
                            "--as-of", AS_OF, db=db).stdout)
    assert rb["occurrences_deleted"] == 5 and rb["experiences_reset"] == 3 and rb["nodes_without_evidence"] == 5
    assert cli_json("self", "list", db=db, cfg=cfg) == []
    c = conn_of(db)
    assert c.execute("SELECT COUNT(*) FROM belief_occurrences WHERE deleted_at IS NULL").fetchone()[0] == 0
    assert c.execute("SELECT COUNT(*) FROM belief_nodes WHERE activation > 0").fetchone()[0] == 0
    # the ledger marks them superseded (no longer believed), keeping their history
    assert c.execute("SELECT COUNT(*) FROM wiki_beliefs WHERE superseded_at IS NULL AND subject = 'SELF'"
                     ).fetchone()[0] == 0
    c.close()
    again = json.loads(run_cli("self", "backfill", "--config", str(cfg), "--json", "--as-of", AS_OF, db=db).stdout)
    assert again["experiences_processed"] == 3
    assert len(cli_json("self", "list", db=db, cfg=cfg)) == 5
    bad = run_cli("self", "rollback", "ev1-nope", "--config", str(cfg), db=db, check=False)
    assert bad.returncode == 1 and "no extractor version" in bad.stderr


def test_conflict_resolution_methods(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    day = 86400
    convs = [("a", 1700000000, [("user", "I am a morning person.")]),
             ("b", 1700000000 + day, [("user", "I am a morning person.")]),
             ("c", 1700000000 + 9 * day, [("user", "I am not a morning person.")]),
             ("d", 1700000000 + 10 * day, [("user", "I love my job.")]),
             ("e", 1700000000 + 11 * day, [("user", "I don't love my job.")])]
    ingest(tmp_path, db, multi_export(tmp_path / "m.json", convs), cfg, as_of="2023-12-01T00:00:00Z")
    edges = {frozenset((e["a_statement"], e["b_statement"])): e for e in cli_json("self", "conflicts", db=db, cfg=cfg)}
    morning = edges[frozenset(("I am a morning person.", "I am not a morning person."))]
    assert morning["conflict_type"] == "contradiction" and morning["detection_method"] == "polarity_flip"
    job = edges[frozenset(("I love my job.", "I do not love my job."))]
    # evidence weight: said twice beats said once
    r = json.loads(run_cli("self", "conflicts", "--resolve", morning["edge_id"][:10], "--by", "evidence_weight",
                           "--config", str(cfg), "--json", db=db).stdout)
    nodes = by_statement(cli_json("self", "list", "--all", db=db, cfg=cfg))
    assert r["decisions"][0]["winner"] == nodes["I am a morning person."]["belief_id"]
    assert nodes["I am not a morning person."]["superseded_by"] == nodes["I am a morning person."]["belief_id"]
    assert "I am not a morning person." not in by_statement(cli_json("self", "list", db=db, cfg=cfg))
    # user override
    r = json.loads(run_cli("self", "conflicts", "--resolve", job["edge_id"], "--by", "user_override", "--keep",
                           nodes["I love my job."]["belief_id"][:8], "--config", str(cfg), "--json", db=db).stdout)
    assert r["decisions"][0]["winner"] == nodes["I love my job."]["belief_id"]
    assert cli_json("self", "conflicts", db=db, cfg=cfg) == []
    again = run_cli("self", "conflicts", "--resolve", job["edge_id"], "--by", "evidence_weight", "--config", str(cfg),
                    db=db, check=False)
    assert again.returncode == 1 and "already resolved" in again.stderr


def test_temporal_precedence_newer_wins(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    day = 86400
    convs = [("a", 1700000000, [("user", "I am a morning person.")]),
             ("b", 1700000000 + day, [("user", "I am a morning person.")]),
             ("c", 1700000000 + 9 * day, [("user", "I am not a morning person.")])]
    ingest(tmp_path, db, multi_export(tmp_path / "m.json", convs), cfg, as_of="2023-12-01T00:00:00Z")
    r = json.loads(run_cli("self", "conflicts", "--resolve-all", "--by", "temporal_precedence", "--config", str(cfg),
                           "--json", db=db).stdout)
    nodes = by_statement(cli_json("self", "list", "--all", db=db, cfg=cfg))
    assert r["resolved"] == 1 and r["decisions"][0]["winner"] == nodes["I am not a morning person."]["belief_id"]


def test_stage_is_one_transaction(tmp_path, monkeypatch):
    from kenning.api import Vault
    from kenning.pipeline.runner import StageFailed
    from kenning.selfbelief import extractor as ex_mod

    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    run_cli("ingest", str(export(tmp_path)), "--config", str(cfg), "--stages", "0,1", "--as-of", AS_OF, db=db)
    calls = {"n": 0}
    real = ex_mod.HTNBeliefExtractor.write

    def failing(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("injected failure in the second experience")
        return real(self, *a, **k)

    monkeypatch.setattr(ex_mod.HTNBeliefExtractor, "write", failing)
    with Vault.open(db, config_path=cfg) as v:
        with pytest.raises(StageFailed, match="injected"):
            v.ingest([], stages="self", as_of=AS_OF)
        counts = {t: v.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("experiences", "experience_scans", "belief_nodes", "belief_occurrences", "wiki_beliefs")}
        failed = v.conn.execute("SELECT status FROM runs WHERE stage = 'self'").fetchall()
    assert calls["n"] == 2
    assert counts == {"experiences": 0, "experience_scans": 0, "belief_nodes": 0, "belief_occurrences": 0,
                      "wiki_beliefs": 0}
    assert failed == [("failed",)]
