"""Stage 4 (rules only) on the LoCoMo dev conversations: fact coverage and hand-labelled precision.

    python benchmarks/extraction.py [--split dev] [--sample 100] [--seed 5]
                                    [--labels benchmarks/data/extraction_labels.jsonl] [--write-sample PATH]
    python benchmarks/extraction.py --synth 2000      # stage 4 speed on a synthetic export

Coverage: the share of ``session_N_observation`` facts (per speaker, with the turn that states them) whose evidence
turn yields at least one assertion about that speaker. Precision: a seeded random sample of the run's assertions,
each labelled by hand (correct / incorrect: is the claim a faithful reading of the quoted words about the right
subject?); the labels live in ``benchmarks/data/extraction_labels.jsonl``. ``--write-sample`` writes the current
sample with empty labels for (re)labelling after the extractor changes.

The LoCoMo files are imported by Kenning's transcript importer (issue 9, ``kenning ingest 26.json``): one
conversation per session, one message per turn with the speaker as ``author_name`` (neither speaker is the vault
owner, so both get their own PERSON entity), the session date as the turns' time, ``transcript_participants``. Then
stages 2A, 2B, 3 and 4 run as ``kenning ingest`` runs them.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kenning.api import Vault  # noqa: E402
from kenning.sources.jcs import canonicalize  # noqa: E402
from kenning.sources.locomo import dia_id, evidence_ids  # noqa: E402
from kenning.store.connection import rows  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "locomo"
if not DATA.exists():
    DATA = Path("/work/shared/data/locomo")
SPLITS = {"dev": ["26", "30", "41", "42", "43"], "test": ["44", "47", "48", "49", "50"]}
LABELS = ROOT / "benchmarks" / "data" / "extraction_labels.jsonl"


def load_locomo(vault: Vault, names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Import the given LoCoMo files with Kenning's own transcript importer (stages 0–1, issue 9: one
    conversation per session, one message per turn, ``author_name`` = the speaker, ``dia_id`` kept as the turn
    id, neither speaker the vault owner). Returns (dia key "<file>/D1:3" → message_id, conversation_id → the
    benchmark's session key "locomo:<file>:<n>" used in the labels)."""
    vault.ingest([DATA / f"{name}.json" for name in names], as_of="2025-01-01T00:00:00Z", stages="0,1")
    prefix = {}
    for name in names:
        obj = json.loads((DATA / f"{name}.json").read_text())
        prefix[f"locomo:{obj['speaker_a']}:{obj['speaker_b']}:{obj.get('session_1_date_time')}"] = name
    turn_ids: dict[str, str] = {}
    conv_keys: dict[str, str] = {}
    for r in rows(vault.conn, "SELECT m.message_id, m.export_message_id, c.conversation_id, "
                              "c.export_conversation_id FROM messages m JOIN conversations c USING(conversation_id) "
                              "WHERE c.source_kind = 'transcript'"):
        head, _, session = r["export_conversation_id"].rpartition("/session_")
        name = prefix[head]
        conv_keys[r["conversation_id"]] = f"locomo:{name}:{int(session)}"
        turn_ids[f"{name}/{dia_id(r['export_message_id']) or r['export_message_id']}"] = r["message_id"]
    return turn_ids, conv_keys


def observations(names: list[str]) -> list[dict]:
    out = []
    for name in names:
        obj = json.loads((DATA / f"{name}.json").read_text())
        for key, per_speaker in obj.items():
            if not key.endswith("_observation"):
                continue
            for speaker, facts in per_speaker.items():
                for fact in facts:
                    text, ev = (fact[0], fact[1]) if isinstance(fact, list) and len(fact) > 1 else (fact, [])
                    out.append({"file": name, "session": key, "speaker": speaker, "fact": text,
                                "evidence": evidence_ids(ev if isinstance(ev, list) else [ev])})
    return out


def run(split: str, sample: int, seed: int, labels_path: Path, write_sample: Path | None) -> dict:
    names = SPLITS[split]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        with Vault.open(db) as v:
            turn_ids, conv_keys = load_locomo(v, names)
            t0 = time.perf_counter()
            results = v.ingest([], as_of="2025-01-01T00:00:00Z", stages="2A,2B,3")
            t1 = time.perf_counter()
            r4 = v.ingest([], as_of="2025-01-01T00:00:00Z", stages="4")[0]
            t2 = time.perf_counter()
            assertions = rows(v.conn, """
                SELECT a.assertion_id, a.message_id, m.export_message_id AS dia, m.author_name AS speaker,
                       m.text_raw, s.canonical_name AS subject, s.entity_type AS subject_type,
                       p.canonical_label AS predicate, coalesce(o.canonical_name, json_extract(a.object_value, '$'))
                       AS object, a.object_value_type, a.modality, a.polarity, a.surface_text AS quote,
                       a.confidence_final, c.conversation_id AS conv,
                       json_extract(a.raw_assertion_json, '$.extraction.aspect') AS aspect
                FROM assertions a JOIN messages m USING(message_id) JOIN conversations c USING(conversation_id)
                JOIN predicates p USING(predicate_id) JOIN entities s ON s.entity_id = a.subject_entity_id
                LEFT JOIN entities o ON o.entity_id = a.object_entity_id ORDER BY a.assertion_id""")
            people = {r["canonical_name"].casefold(): r["entity_id"] for r in rows(v.conn, "SELECT entity_id, "
                      "canonical_name FROM entities WHERE entity_type='PERSON'")}
    for a in assertions:
        a["conv"] = conv_keys[a["conv"]]
    by_msg: dict[str, list[dict]] = {}
    for a in assertions:
        by_msg.setdefault(a["message_id"], []).append(a)
    obs = observations(names)
    covered = 0
    per_file: dict[str, list[int]] = {}
    for o in obs:
        mids = [turn_ids.get(f"{o['file']}/{d}") for d in o["evidence"]]
        hit = any(a["subject"].casefold() == o["speaker"].casefold() for mid in mids if mid
                  for a in by_msg.get(mid, []))
        covered += hit
        per_file.setdefault(o["file"], [0, 0])
        per_file[o["file"]][0] += hit
        per_file[o["file"]][1] += 1

    def key(a: dict) -> str:
        obj_text = a["object"] if not isinstance(a["object"], (dict, list)) else canonicalize(a["object"])
        return "|".join(str(x) for x in (a["conv"], a["dia"], a["subject"], a["predicate"], obj_text, a["polarity"],
                                           a["modality"], a["quote"]))

    # sampled in content order (not id order), so a change of pattern hashes alone never redraws the sample
    rng = random.Random(seed)
    pool = sorted(assertions, key=lambda a: (key(a), a["assertion_id"]))
    picked = rng.sample(pool, min(sample, len(pool)))
    labels = {}
    if labels_path.exists():
        for line in labels_path.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                labels[d["key"]] = d
    judged = [labels[key(a)]["label"] for a in picked if key(a) in labels and labels[key(a)].get("label")]
    if write_sample:
        write_sample.parent.mkdir(parents=True, exist_ok=True)
        with write_sample.open("w") as f:
            for a in picked:
                prev = labels.get(key(a), {})
                f.write(json.dumps({
                    "key": key(a), "conversation": a["conv"], "turn": a["dia"], "speaker": a["speaker"],
                    "statement": f"{a['subject']} {'NOT ' if a['polarity'] == 'negative' else ''}{a['predicate']} "
                                 f"{a['object'] if a['object'] is not None else ''}".strip()
                                 + (f" [{a['modality']}]" if a["modality"] != "state" else "")
                                 + (f" [{a['aspect']}]" if a["aspect"] else ""),
                    "quote": a["quote"], "turn_text": a["text_raw"], "label": prev.get("label"),
                    "note": prev.get("note", "")}, ensure_ascii=False) + "\n")
    n_msgs = len(turn_ids)
    return {
        "split": split, "files": names, "messages": n_msgs, "assertions": len(assertions),
        "assertions_about_speakers": sum(1 for a in assertions if a["subject"].casefold() in
                                         {o["speaker"].casefold() for o in obs}),
        "observations": len(obs), "covered": covered, "coverage": round(covered / len(obs), 4) if obs else None,
        "coverage_by_file": {k: round(v[0] / v[1], 4) for k, v in sorted(per_file.items())},
        "sample": len(picked), "labelled": len(judged),
        "precision": round(judged.count("correct") / len(judged), 4) if judged else None,
        "stage4_seconds": round(t2 - t1, 2), "stages_2A_3_seconds": round(t1 - t0, 2),
        "stage4_messages_per_second": round(n_msgs / (t2 - t1), 1) if t2 > t1 else None,
        "stage4_counts": {k: v for k, v in r4.counts.items() if k in ("assertions_total", "candidates_rule_based",
                                                                      "entities_created_during_grounding")},
        "people": len(people), "stages": [r.stage for r in results] + ["4"],
    }


def synth_speed(conversations: int, seed: int) -> dict:
    """Stage 4's speed on a ``kenning.bench.synth`` export: stages 0–3 untimed, then stage 4, then a rerun (the
    fingerprint shortcut) and a forced full recompute (fingerprint cleared: every conversation recomputed and
    diffed, nothing written)."""
    from kenning.bench.synth import write_export

    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "conversations.json"
        info = write_export(export, conversations, seed)
        db = Path(tmp) / "k.db"
        with Vault.open(db) as v:
            v.ingest([export], as_of="2025-01-01T00:00:00Z", stages="0,1,2A,2B,3")
            t0 = time.perf_counter()
            r4 = v.ingest([export], as_of="2025-01-01T00:00:00Z", stages="4")[0]
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            v.ingest([export], as_of="2025-01-02T00:00:00Z", stages="4")
            rerun = time.perf_counter() - t0
            v.conn.execute("DELETE FROM stage_fingerprints WHERE stage='4'")
            t0 = time.perf_counter()
            r4b = v.ingest([export], as_of="2025-01-03T00:00:00Z", stages="4")[0]
            forced = time.perf_counter() - t0
            # baseline: one precompiled regex pass ("I live in X" / "I work at X") over the same texts
            texts = [t for (t,) in v.conn.execute("SELECT text_raw FROM messages WHERE text_raw IS NOT NULL "
                                                  "AND role IN ('user', 'assistant')")]
            base_re = re.compile(r"\b[Ii][ \t]+(?:live|work|moved)[ \t]+(?:in|at|to)[ \t]+[A-Z]\w+")
            t0 = time.perf_counter()
            base_hits = sum(1 for t in texts for _ in base_re.finditer(t))
            base = time.perf_counter() - t0
        return {"conversations": info["conversations"], "messages": info["messages"],
                "assertions": r4.counts["assertions_total"], "stage4_seconds": round(first, 2),
                "stage4_messages_per_second": round(info["messages"] / first, 1),
                "rerun_seconds": round(rerun, 2), "forced_recompute_seconds": round(forced, 2),
                "forced_recompute_writes": r4b.counts["assertions_inserted"] + r4b.counts["assertions_updated"]
                + r4b.counts["assertions_deleted"],
                "baseline_one_regex_seconds": round(base, 3), "baseline_hits": base_hits,
                "stage4_vs_baseline": round(first / base, 1) if base else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=sorted(SPLITS), default="dev")
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--write-sample", type=Path, default=None)
    ap.add_argument("--synth", type=int, default=None, metavar="N",
                    help="instead: stage 4's speed on a kenning.bench.synth export of N conversations")
    args = ap.parse_args()
    if args.synth:
        print(json.dumps(synth_speed(args.synth, args.seed), indent=2))
        return
    res = run(args.split, args.sample, args.seed, args.labels, args.write_sample)
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
