"""Stages 2A–3 output must not drift: per-table fingerprints of synthetic vaults against a golden file.

The golden file (tests/data/entities_equivalence.json) was produced by the unoptimized stage code; a
performance change must reproduce it exactly. Each scenario ingests a synthetic export
(kenning.bench.synth) and fingerprints every table stages 2A, 2B and 3 write (sha256 over the rows in
primary-key order), plus the runs rows and run events of those stages.

Scenarios: the default configuration; a variant configuration (blockquotes ignored, small NER chunks,
TLD allowlist, no phone region, no bare years, no dateparser cross-check, fewer optional detectors);
and an incremental re-ingest (some messages edited, a conversation removed, a later clock), which
exercises 2A's per-message recompute, 2B's lexicon replacement and entity updates, and stage 3's history.

Only when the output is *meant* to change (a bug fix, a new detector version), regenerate with

    PYTHONPATH=src python tests/test_entities_equivalence.py --regenerate

and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from entity_corpus import corpus as entity_corpus  # noqa: E402
from exportkit import ingest  # noqa: E402
from exportkit import write_export as write_export_convs  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "data" / "entities_equivalence.json"

# Tables stages 2A, 2B and 3 write.
STAGE_TABLES = ("entity_mention_candidates", "entity_mentions", "time_mentions", "ner_model_runs",
                "ner_model_run_io", "detect_message_state", "stage_fingerprints", "entities", "lexicon_builds",
                "lexicon_term_candidates", "lexicon_terms", "entity_canonicalization_runs",
                "entity_canonical_name_history")
STAGES = ("2A", "2B", "3")
# The ingest stages the golden file was made with. Run ids are aliased by run order, so a stage added to the
# default ingest later (issue 7's "self") would renumber the second round's runs; the scenarios name the list.
GOLDEN_STAGES = "0,1,2A,2B,3"

VARIANT = {
    "pipeline": {"entity_detection": {"ignore_markdown_blockquotes": True, "ner_max_chars": 300, "ner_stride": 60,
                                      "domain_tld_allowlist_enabled": True}},
    "entities": {"detectors": {"phone_default_region": None, "optional_enabled": ["CVE", "HASHTAG", "HANDLE"]},
                 "time_mentions": {"bare_year_confidence": 0, "dateparser_crosscheck": False}},
}


def _digest(lines, aliases: dict[str, str] | None = None) -> tuple[int, str]:
    """Rows hashed after aliasing, in the aliased text's order: a table ordered by a real run id (ner_model_runs'
    primary key) would otherwise change its row order whenever a config key elsewhere changes the run ids."""
    texts = []
    for r in lines:
        text = repr(tuple(r))
        for real, alias in (aliases or {}).items():
            text = text.replace(real, alias)
        texts.append(text)
    h = hashlib.sha256()
    for text in sorted(texts):
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return len(texts), h.hexdigest()


def fingerprint(db: Path) -> dict[str, dict]:
    """{table: {"rows": n, "sha256": …}} for the stage tables, the stage runs and their events, and the input."""
    from kenning.store.connection import open_store

    conn = open_store(db, readonly=True)
    try:
        out = {}
        aliases = _run_aliases(conn)
        for t in STAGE_TABLES:
            pk = [r[1] for r in sorted(conn.execute(f'PRAGMA table_info("{t}")'), key=lambda r: r[5]) if r[5]]
            n, h = _digest(conn.execute(f'SELECT * FROM "{t}" ORDER BY {", ".join(pk)}'), aliases)
            out[t] = {"rows": n, "sha256": h}
        marks = ",".join("?" * len(STAGES))
        # args_json holds the export's temporary path; kenning_version is not the stages' output.
        n, h = _digest(conn.execute(
            "SELECT run_id, stage, seq, started_at_utc, finished_at_utc, status, counts_json, config_hash, clock_mode,"
            f" error FROM runs WHERE stage IN ({marks}) ORDER BY started_at_utc, stage, seq", STAGES), aliases)
        out["runs"] = {"rows": n, "sha256": h}
        n, h = _digest(conn.execute(
            f"SELECT e.* FROM run_events e JOIN runs r USING (run_id) WHERE r.stage IN ({marks}) "
            "ORDER BY r.started_at_utc, r.stage, r.seq, e.seq", STAGES), aliases)
        out["run_events"] = {"rows": n, "sha256": h}
        # The input: if this differs, the generator or stage 1 changed and the golden file is stale, not wrong.
        n, h = _digest(conn.execute("SELECT * FROM messages_raw ORDER BY message_id"), aliases)  # seed columns (V3)
        out["_input_messages"] = {"rows": n, "sha256": h}
        return out
    finally:
        conn.close()


def _run_aliases(conn) -> dict[str, str]:
    """Run IDs and config hashes hash the whole effective config, so a key added for a later stage changes them;
    the fingerprint names them by their place in the run order instead, keeping the golden file about 2A–3."""
    aliases: dict[str, str] = {}
    for run_id, cfg_hash in conn.execute("SELECT run_id, config_hash FROM runs ORDER BY started_at_utc, stage, seq"):
        aliases.setdefault(run_id, f"<run{len(aliases)}>")
        aliases.setdefault(cfg_hash, f"<config{len(aliases)}>")
    # NER run ids are uuid5 over the pipeline run id (E2), so they change with it
    for (ner_run,) in conn.execute("SELECT n.run_id FROM ner_model_runs n JOIN runs r ON r.run_id = n.pipeline_run_id "
                                   "ORDER BY r.started_at_utc, r.seq, n.model_name, n.model_version"):
        aliases.setdefault(ner_run, f"<ner{len(aliases)}>")
    return aliases


def _edit_export(src: Path, dst: Path) -> None:
    """A second export of the same vault: a few messages edited, one conversation gone."""
    convs = json.loads(src.read_text(encoding="utf-8"))
    edits = 0
    for conv in convs[1:]:
        for node in conv["mapping"].values():
            msg = node.get("message")
            parts = (msg or {}).get("content", {}).get("parts")
            if not parts or not isinstance(parts[0], str) or not parts[0]:
                continue
            if edits % 3 == 0:
                parts[0] += " Ping zoe@example.net about Project Phoenix on 2024-05-06, ip 10.1.2.3."
            elif edits % 3 == 1:
                parts[0] = parts[0].replace("a", "A", 2)
            else:
                parts[0] = "My sister Anna moved to Lisbon last week. #phx " + parts[0]
            edits += 1
            if edits >= 40:
                break
        if edits >= 40:
            break
    dst.write_text(json.dumps(convs[1:], ensure_ascii=False), encoding="utf-8")


def run_scenarios(workdir: Path) -> dict[str, dict]:
    from kenning.bench.synth import write_export

    out = {}
    export7 = workdir / "synth-100-7.json"
    write_export(export7, 100, 7)
    db = workdir / "default.db"
    ingest(db, export7, as_of="2024-12-31T00:00:00Z", stages=GOLDEN_STAGES)
    out["default_n100_seed7"] = fingerprint(db)

    edited = workdir / "synth-100-7-edited.json"
    _edit_export(export7, edited)
    ingest(db, edited, as_of="2025-02-01T00:00:00Z", stages=GOLDEN_STAGES)
    out["default_n100_seed7_then_edited"] = fingerprint(db)

    export11 = workdir / "synth-60-11.json"
    write_export(export11, 60, 11)
    db = workdir / "variant.db"
    ingest(db, export11, as_of="2024-12-31T00:00:00Z", overrides=VARIANT, stages=GOLDEN_STAGES)
    out["variant_n60_seed11"] = fingerprint(db)

    # Denser text: the benchmark's built-in templates (names, lexicon terms, detector bait on every line).
    dense = workdir / "dense.json"
    _bench_module().builtin_export(dense, 1500, 3)
    db = workdir / "dense.db"
    ingest(db, dense, as_of="2024-12-31T00:00:00Z", stages=GOLDEN_STAGES)
    out["bench_builtin_1500_seed3"] = fingerprint(db)

    # The hand-built corpus of the stage tests: every detector's bait, exclusions, imputed timestamps.
    hand = write_export_convs(workdir / "hand.json", entity_corpus())
    db = workdir / "hand.db"
    ingest(db, hand, as_of="2024-12-31T00:00:00Z", stages=GOLDEN_STAGES)
    out["hand_built_corpus"] = fingerprint(db)
    return out


def _bench_module():
    """benchmarks/entities.py (its builtin_export generator must stay as it is: the golden file depends on it)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "entities.py"
    spec = importlib.util.spec_from_file_location("kenning_bench_entities", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_stage_outputs_match_golden(tmp_path):
    pytest.importorskip("kenning.bench.synth")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    got = run_scenarios(tmp_path)
    assert set(got) == set(golden)
    for scenario, tables in golden.items():
        assert got[scenario]["_input_messages"] == tables["_input_messages"], (
            f"{scenario}: the input corpus changed (generator or stage 1), so the golden file is stale; "
            "regenerate it from the stage code this branch started from")
        diff = {t: (tables[t], got[scenario].get(t)) for t in tables if got[scenario].get(t) != tables[t]}
        assert not diff, f"{scenario}: stage output changed in {sorted(diff)}: {diff}"


if __name__ == "__main__":
    import argparse
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("--regenerate", action="store_true", help="rewrite the golden file from the current code")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        result = run_scenarios(Path(d))
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if args.regenerate:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN}")
    else:
        print(text)
