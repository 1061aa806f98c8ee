"""A node's confidence as a person should read it (decision H3): §5's value now (Beta mean × the 90-day decay —
correct, but a goal last stated in 2023 reads 0.00 in 2026), beside the Beta mean of the evidence (how strongly it
was said) and when it was last said, so a live goal that nobody repeated lately does not look dead."""

from __future__ import annotations

import datetime as dt
from typing import Any

import apsw

from kenning.config import Config
from kenning.knowledge.read import current_breakdown
from kenning.sources.timestamps import normalize_to_utc
from kenning.store import knowledge as ksql

# The vault's own record of a node (the bridge's system entry) is no one saying it.
_NOT_SAID = frozenset({"system_record"})


def last_said(entries: list[dict[str, Any]]) -> str | None:
    """The latest time one of the node's quotes was said (its message's time), else None."""
    times = [e["created_at"] for e in entries
             if e.get("created_at") and e.get("message_id") and e.get("entry_type") not in _NOT_SAID]
    return max(times) if times else None


def reading(conn: apsw.Connection, config: Config, node: dict[str, Any], now: str,
            entries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """{confidence (decayed, now), beta_mean, last_said (ISO date or None), days_since_said (int or None)}."""
    now = normalize_to_utc(now) or now   # "2024-03-01T00:00:00Z" → the stored form the confidence math reads
    b = current_breakdown(conn, config, node, now)
    said = last_said(entries if entries is not None else ksql.get_provenance(conn, node["id"]))
    return {"confidence": round(b["confidence"], 3), "beta_mean": round(b["beta_mean"], 3),
            "last_said": said[:10] if said else None,
            "days_since_said": days_between(said, now) if said else None}


def days_between(said: str, now: str) -> int:
    """Calendar days from the day it was said to today (UTC dates), never negative."""
    return max(0, (dt.date.fromisoformat(now[:10]) - dt.date.fromisoformat(said[:10])).days)


def phrase(r: dict[str, Any]) -> str:
    """"0.00 now · 0.60 from the evidence · last said 2023-02-06 (1392 days ago)"."""
    out = f"{r['confidence']:.2f} now · {r['beta_mean']:.2f} from the evidence"
    if r.get("last_said"):
        out += f" · last said {r['last_said']} ({ago(r['days_since_said'])})"
    return out


def ago(days: int | None, *, short: bool = False) -> str:
    if days is None:
        return "never"
    if short:
        return f"{days}d"
    return "today" if days == 0 else "yesterday" if days == 1 else f"{days} days ago"
