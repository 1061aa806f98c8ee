"""`facts` through the ordered indexes (migration 0021, B40–B41): the same rows in the same order as the one-query
form it replaced, for every filter shape; the order key kept by triggers; the plans the indexes were made for;
and the query-latency benchmark section on a tiny vault."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from assertion_corpus import corpus
from exportkit import ingest, write_export
from kenning.api import Vault
from kenning.store import assertions as asql
from kenning.store.connection import rows, transaction

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

KEY = ("CASE WHEN m.created_at_utc IS NULL THEN '1' ELSE '0' || m.created_at_utc END || char(1) || m.conversation_id "
       "|| char(1) || printf('%012d', m.order_index)")


def reference(conn, subject_ids=None, predicate_norms=None, role=None, include_questions=True, limit=None):
    """The one-query form `facts` had before 0021 (an OR over subject and object, every row sorted)."""
    sql = asql.FACTS_SELECT + " WHERE 1=1"
    params: list = []
    if subject_ids:
        q = ",".join("?" * len(subject_ids))
        sql += f" AND (a.subject_entity_id IN ({q}) OR a.object_entity_id IN ({q}))"
        params += subject_ids + subject_ids
    if predicate_norms:
        q = ",".join("?" * len(predicate_norms))
        sql += f" AND (p.canonical_label_norm IN ({q}) OR p.category IN ({q}))"
        params += predicate_norms + predicate_norms
    if role:
        sql += " AND a.asserted_role=?"
        params.append(role)
    if not include_questions:
        sql += " AND a.modality <> 'question'"
    sql += asql.FACTS_ORDER
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return rows(conn, sql, params)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """The assertion corpus (corrections, retractions, both roles, questions) ingested to stage 4, replicated to
    3× by the benchmark's builder (copies interleave in time), then made hard to order: some messages lose their
    time, some share one time across conversations."""
    import queries as qb

    d = tmp_path_factory.mktemp("facts_order")
    path = d / "k.db"
    ingest(path, write_export(d / "export.json", corpus()), stages="0,1,2A,2B,3,4")
    with Vault.open(path) as v:
        base = v.conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0]
        qb.replicate(v.conn, 3 * base - 2)
        with transaction(v.conn):
            ids = [m for (m,) in v.conn.execute("SELECT DISTINCT message_id FROM assertions ORDER BY message_id")]
            v.conn.execute(f"UPDATE messages SET created_at_utc = NULL WHERE message_id IN "
                           f"({','.join('?' * len(ids[::7]))})", ids[::7])
            v.conn.execute(f"UPDATE messages SET created_at_utc = '2024-03-09T16:00:00.000Z' WHERE message_id IN "
                           f"({','.join('?' * len(ids[3::5]))})", ids[3::5])
    return path


def shapes(conn):
    subjects = [[e] for (e,) in conn.execute("SELECT entity_id FROM entities WHERE entity_id IN "
                                             "(SELECT subject_entity_id FROM assertions UNION "
                                             "SELECT object_entity_id FROM assertions) ORDER BY entity_id")]
    preds = [[p] for (p,) in conn.execute("SELECT canonical_label_norm FROM predicates WHERE assertion_count > 0")]
    preds += [[c] for (c,) in conn.execute("SELECT DISTINCT category FROM predicates WHERE assertion_count > 0")]
    preds += [["lives_in", "family"], ["no_such_predicate"]]
    return subjects, preds


def test_key_matches_message_and_follows_it(db, tmp_path):
    """Every assertion's key is its message's (the insert trigger and the message-update trigger ran); a message
    whose time or position changes carries its assertions' keys along; a rolled-back change leaves them as they
    were."""
    import shutil

    path = tmp_path / "k.db"
    shutil.copyfile(db, path)
    with Vault.open(path) as v:
        c = v.conn
        stale = f"SELECT COUNT(*) FROM assertions a JOIN messages m USING (message_id) WHERE a.message_order_key IS NOT ({KEY})"
        assert c.execute(stale).fetchone()[0] == 0
        assert c.execute("SELECT COUNT(*) FROM assertions WHERE message_order_key IS NULL").fetchone()[0] == 0
        mid, oi = c.execute("SELECT m.message_id, m.order_index FROM assertions a JOIN messages m USING (message_id) "
                            "WHERE m.created_at_utc IS NOT NULL ORDER BY a.assertion_id LIMIT 1").fetchone()
        keys = lambda: {k for (k,) in c.execute("SELECT message_order_key FROM assertions WHERE message_id=?",  # noqa: E731
                                                (mid,))}
        before = keys()
        with pytest.raises(RuntimeError):
            with transaction(c):
                c.execute("UPDATE messages SET created_at_utc='1999-01-01T00:00:00.000Z' WHERE message_id=?", (mid,))
                assert next(iter(keys())).startswith("01999-01-01T00:00:00.000Z\x01")
                raise RuntimeError("roll back")
        assert keys() == before
        with transaction(c):
            c.execute("UPDATE messages SET created_at_utc='1999-01-01T00:00:00.000Z', order_index=? WHERE message_id=?",
                      (oi + 1000, mid))
        (k,) = keys()
        assert k.startswith("01999-01-01T00:00:00.000Z\x01") and k.endswith("\x01%012d" % (oi + 1000))
        with transaction(c):
            c.execute("UPDATE messages SET created_at_utc=NULL WHERE message_id=?", (mid,))
        assert {x[0] for x in keys()} == {"1"}
        assert c.execute(stale).fetchone()[0] == 0
        # the message's facts moved to the end (no time sorts last), as the reference order says
        owner_rows = asql.facts(c, limit=None)
        assert owner_rows == reference(c) and owner_rows[-1]["message_id"] in {
            r["message_id"] for r in owner_rows if r["created_at_utc"] is None}


def test_same_rows_same_order_every_shape(db):
    with Vault.open(db, readonly=True) as v:
        c = v.conn
        subjects, preds = shapes(c)
        assert c.execute("SELECT COUNT(*) FROM messages m JOIN assertions a USING (message_id) "
                         "WHERE m.created_at_utc IS NULL").fetchone()[0] > 0
        checked = nonempty = 0
        for subj, pred, role, questions, limit in itertools.product(
                [None] + subjects[::3], [None] + preds[:6] + preds[-2:], [None, "user", "assistant"], [True, False],
                [None, 1, 5, 200]):
            kw = dict(subject_ids=subj, predicate_norms=pred, role=role, include_questions=questions, limit=limit)
            got = asql.facts(c, **kw)
            assert got == reference(c, **kw), kw
            checked += 1
            nonempty += bool(got)
        assert checked > 1500 and nonempty > 300  # the shapes do select rows
        owner = max(subjects, key=lambda s: len(reference(c, subject_ids=s)))
        assert len(reference(c, subject_ids=owner)) > 50


def test_plans_use_the_ordered_indexes(db):
    """The ids step walks one index per arm in key order (only ties on the key are sorted, the RIGHT PART of the
    ORDER BY): no sort of every matching row."""
    with Vault.open(db, readonly=True) as v:
        c = v.conn
        owner = c.execute("SELECT subject_entity_id FROM assertions GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1").fetchone()[0]

        def plan(**kw):
            sql, params = asql.facts_pick(c, limit=200, **kw)
            return " | ".join(r[3] for r in c.execute("EXPLAIN QUERY PLAN " + sql, params))

        plans = {"owner": plan(subject_ids=[owner]), "owner+role": plan(subject_ids=[owner], role="user"),
                 "predicate": plan(predicate_norms=["lives_in"]), "all": plan()}
        assert "idx_assertions_subject_order" in plans["owner"] and "idx_assertions_object_order" in plans["owner"]
        assert "idx_assertions_subject_order" in plans["owner+role"]
        assert "idx_assertions_predicate_order" in plans["predicate"]
        assert "idx_assertions_order" in plans["all"]
        for name, p in plans.items():
            assert "USE TEMP B-TREE FOR ORDER BY" not in p, (name, p)


def test_benchmark_section_smoke(tmp_path):
    """`run.py queries` machinery on a tiny vault: built (real ingest + replication + beliefs), every FK valid,
    every timed shape and the `why` mix reported next to the PK baseline."""
    import queries as qb

    db, info = qb.build(tmp_path, 1500, base_conversations=12, beliefs=200)
    assert info["assertions"] == 1500 and info["beliefs"] == 200
    with Vault.open(db, readonly=True) as v:
        assert v.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    r = qb.measure(db, 2)
    f = r["facts"]
    assert f["assertions"] == 1500 and f["baseline_pk_lookup"]["n"] == 10
    assert len(f["shapes"]) == 9 and all(s["n"] == 2 and s["p95_ms"] >= s["p50_ms"] > 0 for s in f["shapes"].values())
    assert f["shapes"]["about me (owner)"]["rows"] == 200
    assert r["why"]["beliefs"] == 200 and r["why"]["why_mixed_p95_ms"] > 0
    assert qb.build(tmp_path, 1500, base_conversations=12, beliefs=200)[1]["reused"] == str(db)


@pytest.mark.parametrize("cap", [0, 10**9])
def test_about_and_predicate_either_side_leads(db, cap, monkeypatch):
    """--about with --predicate: the rarer side's indexes lead (B43); with the choice forced either way (cap 0: the
    subject always leads) the answer is the reference's, and the owner with a rare predicate is led by the
    predicate when allowed."""
    monkeypatch.setattr(asql, "PREDICATE_DRIVE_CAP", cap)
    with Vault.open(db, readonly=True) as v:
        c = v.conn
        subjects, preds = shapes(c)
        owner = c.execute("SELECT subject_entity_id FROM assertions GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1").fetchone()[0]
        rare_pid = c.execute("SELECT predicate_id FROM assertions GROUP BY 1 ORDER BY COUNT(*), 1 LIMIT 1").fetchone()[0]
        assert asql._predicate_drives(c, [owner], [rare_pid]) is (cap > 0)
        for subj in subjects[::2]:
            for pred in preds:
                for limit in (None, 3):
                    kw = dict(subject_ids=subj, predicate_norms=pred, limit=limit)
                    assert asql.facts(c, **kw) == reference(c, **kw), kw


def test_facts_by_ids_are_the_facts_rows(db):
    """`history` / `conflicts` read the views of a few ids (B44): the same rows `facts` gives for them."""
    with Vault.open(db, readonly=True) as v:
        every = {r["assertion_id"]: r for r in reference(v.conn)}
        ids = sorted(every)[::9] + ["no-such-assertion"]
        got = asql.facts_by_ids(v.conn, ids)
        assert len(got) == len(ids) - 1 and {r["assertion_id"]: r for r in got} == {i: every[i] for i in ids[:-1]}
