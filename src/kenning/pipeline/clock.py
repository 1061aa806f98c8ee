"""The run clock. Frozen (``--as-of``) for deterministic runs, wall time otherwise."""

from __future__ import annotations

from dataclasses import dataclass

from kenning.sources.timestamps import normalize_to_utc, now_utc


class ClockError(ValueError):
    pass


@dataclass(frozen=True)
class Clock:
    frozen_at: str | None = None

    @classmethod
    def from_option(cls, as_of: str | None) -> "Clock":
        if as_of is None:
            return cls(None)
        ts = normalize_to_utc(as_of)
        if ts is None:
            raise ClockError(f"--as-of {as_of!r} is not a timestamp; use ISO-8601 like 2024-05-01T12:00:00Z")
        return cls(ts)

    @property
    def mode(self) -> str:
        return "frozen" if self.frozen_at else "wall"

    def now(self) -> str:
        return self.frozen_at or now_utc()
