"""Stage 4 (rules only) on the LoCoMo dev conversations: fact coverage and hand-labelled precision.

    python benchmarks/extraction.py [--split dev] [--sample 100] [--seed 5]
                                    [--labels benchmarks/data/extraction_labels.jsonl] [--write-sample PATH]
    python benchmarks/extraction.py --synth 2000      # stage 4 speed on a synthetic export

Coverage: the share of ``session_N_observation`` facts (per speaker, with the turn that states them) whose evidence
turn yields at least one assertion about that speaker. Precision: a seeded random sample of the run's assertions,
each labelled by hand (correct / incorrect: is the claim a faithful reading of the quoted words about the right
subject?); the labels live in ``benchmarks/data/extraction_labels.jsonl``. ``--write-sample`` writes the current
sample with empty labels for (re)labelling after the extractor changes.

The transcript importer (issue 9) is not on main yet, so this script loads LoCoMo itself through the public store
functions: one conversation per session (``source_kind='transcript'``), one message per turn with the speaker as
``author_name`` and role ``unknown`` (neither speaker is the vault owner), times from ``session_N_date_time``, and a
``transcript_participants`` table shaped like issue 9's. Then stages 2A, 2B, 3 and 4 run as ``kenning ingest`` runs
them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
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
from kenning.sources.ids import IdFactory  # noqa: E402
from kenning.sources.jcs import canonicalize  # noqa: E402
from kenning.store import raw as raw_sql  # noqa: E402
from kenning.store.connection import rows, transaction  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "locomo"
if not DATA.exists():
    DATA = Path("/work/shared/data/locomo")
SPLITS = {"dev": ["26", "30", "41", "42", "43"], "test": ["44", "47", "48", "49", "50"]}
LABELS = ROOT / "benchmarks" / "data" / "extraction_labels.jsonl"
PARTICIPANTS_DDL = """CREATE TABLE IF NOT EXISTS transcript_participants (
  conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id), participant_key TEXT NOT NULL,
  name TEXT NOT NULL, aliases_json TEXT NOT NULL, is_self INTEGER NOT NULL CHECK (is_self IN (0, 1)),
  PRIMARY KEY (conversation_id, participant_key))"""
IDS = IdFactory()


def session_time(text: str) -> dt.datetime:
    """'1:56 pm on 8 May, 2023' → UTC datetime."""
    t = dt.datetime.strptime(" ".join(text.replace(",", "").split()), "%I:%M %p on %d %B %Y")
    return t.replace(tzinfo=dt.timezone.utc)


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def dia_id(text: str) -> str | None:
    m = re.fullmatch(r"\s*D:?(\d+):0*(\d+)\s*", text)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def evidence_ids(evidence) -> list[str]:
    items = evidence if isinstance(evidence, list) else [evidence]
    out = []
    for e in items:
        if isinstance(e, str):
            for piece in re.split(r"[;,\s]+(?=D)", e.strip()):
                d = dia_id(piece)
                if d and d not in out:
                    out.append(d)
    return out


def load_locomo(vault: Vault, names: list[str]) -> dict[str, str]:
    """Insert the sessions of the given LoCoMo files; returns dia key "<file>/D1:3" → message_id."""
    turn_ids: dict[str, str] = {}
    with transaction(vault.conn):
        vault.conn.execute(PARTICIPANTS_DDL)
        for name in names:
            obj = json.loads((DATA / f"{name}.json").read_text())
            a, b = obj["speaker_a"], obj["speaker_b"]
            for key in sorted((k for k in obj if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
                n = int(key.split("_")[1])
                turns = obj[key]
                start = session_time(obj[f"{key}_date_time"])
                raw = canonicalize({"locomo": name, "session": n, "date_time": obj[f"{key}_date_time"],
                                    "speakers": [a, b]})
                sha = hashlib.sha256(raw.encode()).hexdigest()
                cid = IDS.make("conversation", sha)
                conv = {"conversation_id": cid, "export_conversation_id": f"locomo:{name}:{n}",
                        "title": f"LoCoMo {name}: {a} & {b}, session {n}", "created_at_utc": iso(start),
                        "updated_at_utc": iso(start), "message_count": len(turns), "raw_conversation_json": raw,
                        "source_kind": "transcript", "current_node_message_id": None, "raw_sha256": sha,
                        "import_key": sha, "first_run_id": "locomo-loader", "last_changed_run_id": "locomo-loader"}
                msgs = []
                for i, t in enumerate(turns):
                    text = t["text"]
                    if t.get("blip_caption"):
                        text = f"{text}\n[shares a photo: {t['blip_caption']}]"
                    raw_m = canonicalize(t)
                    mid = IDS.message(cid, t["dia_id"])
                    turn_ids[f"{name}/{dia_id(t['dia_id']) or t['dia_id']}"] = mid
                    msgs.append({
                        "message_id": mid, "conversation_id": cid, "role": "unknown", "parent_id": None,
                        "tree_path": str(i), "order_index": i, "created_at_utc": iso(start + dt.timedelta(seconds=30 * i)),
                        "timestamp_quality": "original", "content_type": "text", "text_raw": text,
                        "text_part_map_json": None, "code_fence_ranges_json": "[]", "blockquote_ranges_json": "[]",
                        "attachment_count": 0, "raw_message_json": raw_m, "export_message_id": t["dia_id"],
                        "export_parent_id": None, "author_name": t["speaker"], "recipient": None,
                        "export_content_type": None, "is_hidden": 0, "is_current_branch": 1,
                        "citation_ranges_json": "[]", "raw_sha256": hashlib.sha256(raw_m.encode()).hexdigest(),
                        "first_run_id": "locomo-loader", "last_changed_run_id": "locomo-loader"})
                raw_sql.insert_conversation(vault.conn, conv, msgs, [])
                vault.conn.executemany("INSERT INTO transcript_participants VALUES (?,?,?,?,?)",
                                       [(cid, a, a, "[]", 0), (cid, b, b, "[]", 0)])
    return turn_ids


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
                                "evidence": evidence_ids(ev)})
    return out


def run(split: str, sample: int, seed: int, labels_path: Path, write_sample: Path | None) -> dict:
    names = SPLITS[split]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        with Vault.open(db) as v:
            turn_ids = load_locomo(v, names)
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
                       a.confidence_final, c.export_conversation_id AS conv,
                       json_extract(a.raw_assertion_json, '$.extraction.aspect') AS aspect
                FROM assertions a JOIN messages m USING(message_id) JOIN conversations c USING(conversation_id)
                JOIN predicates p USING(predicate_id) JOIN entities s ON s.entity_id = a.subject_entity_id
                LEFT JOIN entities o ON o.entity_id = a.object_entity_id ORDER BY a.assertion_id""")
            people = {r["canonical_name"].casefold(): r["entity_id"] for r in rows(v.conn, "SELECT entity_id, "
                      "canonical_name FROM entities WHERE entity_type='PERSON'")}
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
        return {"conversations": info["conversations"], "messages": info["messages"],
                "assertions": r4.counts["assertions_total"], "stage4_seconds": round(first, 2),
                "stage4_messages_per_second": round(info["messages"] / first, 1),
                "rerun_seconds": round(rerun, 2), "forced_recompute_seconds": round(forced, 2),
                "forced_recompute_writes": r4b.counts["assertions_inserted"] + r4b.counts["assertions_updated"]
                + r4b.counts["assertions_deleted"]}


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
