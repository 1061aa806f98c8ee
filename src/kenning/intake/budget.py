"""§23 DailyExtractionBudget (I9): deep slots (with slots reserved for the critical lane), tokens and USD per UTC
day of the run clock. Over budget defers (the item waits in the queue as priority 'deferred'), never drops."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import apsw
import orjson

from kenning.store import intake as isql


def _day(now: str) -> str:
    return now[:10]


@dataclass
class DailyExtractionBudget:
    """The seed's budget, limits from config and usage from ``extraction_budget_days`` for the clock's day."""
    conn: apsw.Connection
    config: Any
    now: str
    calibrating: bool = False

    def __post_init__(self) -> None:
        b = self.config.intake.budget
        self.day = _day(self.now)
        self.usage = isql.budget_day(self.conn, self.day, self.now)
        self.deep_max_total = (self.config.intake.calibration.first_week_deep_max_total if self.calibrating
                               else b.deep_max_total)
        self.reserved_critical_slots = min(b.reserved_critical_slots, self.deep_max_total)
        self.token_max_total, self.usd_max_total = b.token_max_total, b.usd_max_total
        self.surface_caps = {"browser": b.deep_max_browser, "note": b.deep_max_notes, "document": b.deep_max_docs}
        raw = self.usage.get("deep_by_surface") or "{}"
        self.by_surface: dict[str, int] = orjson.loads(raw) if isinstance(raw, str) else dict(raw)

    def _money_ok(self) -> bool:
        return (self.usage["tokens_used"] < self.token_max_total
                and self.usage["usd_used"] < self.usd_max_total)

    def deep_ok(self, surface: str = "chat") -> bool:
        """A normal deep slot is free: the reserved critical slots are not counted as free for normal work, and a
        surface with its own cap (browser, note, document) has room under it."""
        normal_cap = self.deep_max_total - self.reserved_critical_slots
        normal_used = self.usage["deep_used"] - min(self.usage["critical_used"], self.reserved_critical_slots)
        cap = self.surface_caps.get(surface)
        if cap is not None and self.by_surface.get(surface, 0) >= cap:
            return False
        return normal_used < normal_cap and self._money_ok()

    def critical_deep_ok(self) -> bool:
        return self.usage["deep_used"] < self.deep_max_total and self._money_ok()

    def take_deep(self, critical: bool = False, surface: str = "chat") -> None:
        delta = {"deep_used": 1, **({"critical_used": 1} if critical else {})}
        isql.budget_add(self.conn, self.day, **delta)
        for k, v in delta.items():
            self.usage[k] += v
        if not critical and surface in self.surface_caps:
            isql.budget_surface(self.conn, self.day, surface)
            self.by_surface[surface] = self.by_surface.get(surface, 0) + 1

    def note_deferred(self) -> None:
        isql.budget_add(self.conn, self.day, deferred=1)
        self.usage["deferred"] += 1

    def spend(self, tokens: int) -> None:
        usd = round(tokens / 1000.0 * self.config.intake.budget.usd_per_1k_tokens, 6)
        if tokens or usd:
            isql.budget_add(self.conn, self.day, tokens_used=tokens, usd_used=usd)
            self.usage["tokens_used"] += tokens
            self.usage["usd_used"] += usd

    def as_dict(self) -> dict[str, Any]:
        return {"day": self.day, "deep_max_total": self.deep_max_total, "deep_used": self.usage["deep_used"],
                "deep_by_surface": dict(self.by_surface),
                "reserved_critical_slots": self.reserved_critical_slots,
                "critical_used": self.usage["critical_used"], "token_max_total": self.token_max_total,
                "tokens_used": self.usage["tokens_used"], "usd_max_total": self.usd_max_total,
                "usd_used": self.usage["usd_used"], "deferred_today": self.usage["deferred"],
                "last_reset_at": self.usage["last_reset_at"]}


FIRST_WEEK_DAYS = 7


def calibrating(conn: apsw.Connection, config: Any, now: str, days: int | None = None) -> bool:
    """§20A.5: the first ``calibration.days`` days (thresholds) or first week (deep slots) after the vault's first
    observation (I5)."""
    first = isql.first_observed_at(conn) or now
    try:
        start = datetime.fromisoformat(first.replace("Z", "+00:00"))
        at = datetime.fromisoformat(now.replace("Z", "+00:00"))
    except ValueError:
        return False
    return at - start < timedelta(days=config.intake.calibration.days if days is None else days)
