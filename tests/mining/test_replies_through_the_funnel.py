"""Issue 18 part 4 end to end (audit, I172): the user's turn after an assistant suggestion decides it (§20B, I21),
so `kenning ingest` must mine that turn however short or plain it is. Before I172 the funnel skipped "No, I'd
rather not." (score 0.18) and a change of subject, so through the real CLI no rejection was recorded, no uncontested
suggestion was kept and only acceptances matching the funnel's narrow pattern were written — while the
miners-only benchmark said 1.0."""

from __future__ import annotations

from pathlib import Path

from kenning.api import Vault
from kenning.store import knowledge as ksql
from kenning.store import mining as msql
from tests.conftest import run_kenning
from tests.intake.helpers import conversation, write_export

SUGGESTION = ("Here's how to clean the espresso machine: first descale it with citric acid, then flush it twice "
              "with water, and finally wipe the steam wand.")
STANDING = "I can also suggest: every Sunday evening, check the drive's free space."


def test_replies_to_suggestions_are_mined_through_ingest(tmp_path):
    export = write_export(tmp_path / "conversations.json", [
        conversation("c-rejected", "Backups", [("user", "Whenever a backup fails, remind me to rerun it tonight."),
                                               ("assistant", STANDING), ("user", "No, I'd rather not.")]),
        conversation("c-accepted", "Coffee", [("user", "My coffee tastes bitter."), ("assistant", SUGGESTION),
                                              ("user", "Ooh, good idea.")], t0=1700100000),
        conversation("c-moved-on", "Coffee again", [("user", "My coffee tastes bitter."),
                                                    ("assistant", SUGGESTION.replace("espresso", "moka")),
                                                    ("user", "By the way, I moved to Lisbon last year.")],
                     t0=1700200000),
        conversation("c-silence", "Coffee, no answer", [("user", "My tea tastes bitter."),
                                                        ("assistant", SUGGESTION.replace("espresso machine",
                                                                                         "kettle"))],
                     t0=1700300000),
    ])
    cfg = tmp_path / "hash.yaml"
    cfg.write_text("embeddings:\n  backend: hash\n", encoding="utf-8")
    db = tmp_path / "v.db"
    r = run_kenning("ingest", str(export), "--db", str(db), "--config", str(cfg), "--as-of", "2024-06-01T00:00:00Z",
                    "--llm", "none", "-q")
    assert r.returncode == 0, r.stderr
    with Vault.open(db, overrides={"embeddings": {"backend": "hash"}}) as v:
        (rejected,) = msql.rejected_options(v.conn)
        assert rejected["node_kind"] == "standing_procedure" and rejected["quote"] == STANDING
        procs = {n["canonical_name"]: n for n in ksql.list_nodes(v.conn, kind="procedure", active=None, limit=100)}
        assert set(procs) == {"clean the espresso machine", "clean the moka machine"}   # nothing from silence
        accepted = procs["clean the espresso machine"]
        assert any(p["entry_type"] == "user_acceptance" for p in ksql.get_provenance(v.conn, accepted["id"]))
        moved_on = procs["clean the moka machine"]
        assert (moved_on["lifecycle_state"], moved_on["lifecycle_substate"]) == ("suggested", "candidate")
        assert not any(p["entry_type"] == "user_acceptance" for p in ksql.get_provenance(v.conn, moved_on["id"]))
        # the funnel's decision on each reply: mined, with the score of explicit intent, never skipped
        decided = {text: (d, s) for text, d, s in v.conn.execute(
            "SELECT m.text_raw, d.decision, d.score FROM intake_dispatch_decisions d JOIN intake_observations o "
            "USING (observation_id) JOIN messages m ON m.message_id = o.message_id WHERE m.role = 'user'")}
        for reply in ("No, I'd rather not.", "Ooh, good idea.", "By the way, I moved to Lisbon last year."):
            assert decided[reply][0] in ("shallow", "deep") and decided[reply][1] == 1.0, (reply, decided[reply])


def test_the_funnel_skips_no_turn_a_miner_reads_on_the_tuning_bank(tmp_path):
    """I173: every planted positive of the TUNING bank is mined through ingest, not skipped by the funnel — the
    turns whose meaning is in the turn before (an answer to the assistant's question, steps carried on in a second
    message), a rule after a "Standing instruction:" lead, and procedures only the miner's own rules recognise.
    (The held-out bank is measured by `benchmarks/mining.py --bank heldout --through-ingest`, never here.)"""
    import orjson

    from kenning.bench.synth import write_export as synth_export

    stats = synth_export(tmp_path / "export.json", 2, 11, mining_conversations=160, mining_bank="tuning")
    planted = orjson.loads(Path(stats["manifest_path"]).read_bytes())["mining"]["planted"]
    with Vault.open(tmp_path / "v.db", overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([tmp_path / "export.json"], as_of="2026-01-01T00:00:00Z", llm="none", stages="0,1,knowledge,intake")
        decided = dict(v.conn.execute(
            "SELECT m.export_message_id, d.decision FROM intake_dispatch_decisions d JOIN intake_observations o "
            "USING (observation_id) JOIN messages m ON m.message_id = o.message_id"))
    positives = [t for t in planted if t["positive"] and t["class"] in
                 ("goal", "obligation", "procedure", "standing_procedure", "memory_directive")]
    replies = [t for t in planted if t["class"] in ("acceptance", "rejection", "contested", "uncontested")]
    assert len(positives) > 100 and replies
    skipped = [(t["class"], t["text"][:80]) for t in positives + replies if decided.get(t["message_id"]) == "skip"]
    assert skipped == []
    assert all(t["message_id"] in decided for t in positives + replies)
