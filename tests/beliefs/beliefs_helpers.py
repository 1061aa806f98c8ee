"""Build small wiki workspaces and chats for the belief-ledger tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kenning.sources.jcs import canonicalize, sha256_hex


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def sidecar(root: Path, page: str, beliefs: list[dict], declared_page: str | None = None) -> Path:
    return write(root, page[:-3] + ".beliefs.json",
                 json.dumps({"page": declared_page or page, "beliefs": beliefs}, indent=2))


def belief(bid: str, statement: str, footnotes: list[str], provs: list[str], **extra: Any) -> dict:
    b = {"belief_id": bid, "statement": statement, "topic": extra.pop("topic", "cities"),
         "wiki_section_anchor": extra.pop("wiki_section_anchor", "#where"), "footnote_ids": footnotes,
         "provenance_ids": provs}
    b.update(extra)
    return b


def minimal_wiki(root: Path) -> Path:
    """One content page with two cited quotes, a sidecar with a superseded and a current belief."""
    write(root, "raw/notes/a.md", "Diary. Anna lives in Lyon. Later: Anna moved to Nantes in May.\n")
    write(root, "wiki/people/anna.md",
          "# Anna\n\n## Where\n\nAnna lives in Nantes.[^2] She used to live in Lyon.[^1]\n\n"
          '[^1]: raw/notes/a.md: "Anna lives in Lyon."\n'
          '[^2]: raw/notes/a.md: "Anna moved to Nantes in May." <!-- prov:p-nantes -->\n')
    sidecar(root, "wiki/people/anna.md", [
        belief("b-lyon", "Anna lives in Lyon.", ["1"], ["wiki/people/anna.md#fn1"], subject="Anna",
               predicate="lives_in", object="Lyon", asserted_at="2026-01-01", superseded_at="2026-05-20",
               superseded_by_belief_id="b-nantes", supersession_reason="contradicted_by_new_source"),
        belief("b-nantes", "Anna lives in Nantes.", ["2"], ["p-nantes"], subject="Anna", predicate="lives_in",
               object="Nantes", asserted_at="2026-05-20"),
    ])
    write(root, "wiki/log.md", "# Log\n\n- created Anna\n")
    return root


def load_sidecar(root: Path, page: str) -> dict:
    return json.loads((root / (page[:-3] + ".beliefs.json")).read_text())


def save_sidecar(root: Path, page: str, data: dict) -> None:
    (root / (page[:-3] + ".beliefs.json")).write_text(json.dumps(data, indent=2))


# ---- conversations written straight into the raw layer -------------------------------------------------

def add_conversation(conn, cid: str, title: str, messages: list[tuple[str, str, str, str]], run_id: str = "test-run"):
    """messages: (message_id, role, created_at_utc, text). Rows as stage 1 writes them (fields it requires)."""
    raw = canonicalize({"id": cid, "title": title})
    conn.execute("INSERT OR IGNORE INTO runs(run_id, stage, seq, started_at_utc, status, config_hash, clock_mode, "
                 "kenning_version) VALUES (?,?,?,?,?,?,?,?)",
                 (run_id, "test", 1, "2024-01-01T00:00:00.000Z", "ok", "x", "frozen", "test"))
    conn.execute("INSERT INTO conversations(conversation_id, export_conversation_id, title, created_at_utc, "
                 "updated_at_utc, message_count, raw_conversation_json, raw_sha256, import_key, first_run_id, "
                 "last_changed_run_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 (cid, cid, title, messages[0][2], messages[-1][2], len(messages), raw, sha256_hex(raw), cid,
                  run_id, run_id))
    for i, (mid, role, ts, text) in enumerate(messages):
        mraw = canonicalize({"id": mid, "text": text})
        conn.execute("INSERT INTO messages(message_id, conversation_id, role, tree_path, order_index, created_at_utc, "
                     "timestamp_quality, content_type, text_raw, raw_message_json, raw_sha256, first_run_id, "
                     "last_changed_run_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     (mid, cid, role, str(i), i, ts, "original", "text", text, mraw, sha256_hex(mraw), run_id, run_id))


def table_rows(conn, table: str, order: str) -> list[tuple]:
    return list(conn.execute(f"SELECT * FROM {table} ORDER BY {order}"))
