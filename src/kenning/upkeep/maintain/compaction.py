"""§42 compaction: execution traces older than 180 days are archived into a per-procedure summary (count, first
and last run) kept in the upkeep's state; UsageEvents older than 30 days on non-Tier-A nodes are counted — the
§34 experience window already folds events that leave it into ``older_event_summary`` counters, so nothing is
rewritten here (G41)."""

from __future__ import annotations

import json
from typing import Any

from kenning.knowledge.lifecycle import sparsity_tier
from kenning.knowledge.ops import ArchiveNode
from kenning.store import upkeep_maintain as msql
from kenning.upkeep.maintain.context import StepContext


def run_compaction(sc: StepContext) -> dict[str, Any]:
    c = sc.config.maintain.cleanup
    counts: dict[str, Any] = {"trace_compacted_count": 0}
    traces = msql.old_traces(sc.conn, sc.days_before(c.trace_summary_days))
    if traces:
        summary = json.loads(msql.state_get(sc.conn, "trace_summary") or "{}")
        for t in traces:
            payload = json.loads(t["payload"]) if isinstance(t["payload"], str) else (t["payload"] or {})
            key = payload.get("procedure_id") or payload.get("procedure") or "unattributed"
            s = summary.setdefault(key, {"count": 0, "first": t["created_at"], "last": t["created_at"]})
            s["count"] += 1
            s["first"], s["last"] = min(s["first"], t["created_at"]), max(s["last"], t["created_at"])
        msql.state_set(sc.conn, "trace_summary", json.dumps(summary, sort_keys=True))
        sc.write_batches("compaction", "§42 compaction: traces older than "
                                       f"{c.trace_summary_days:g} days into their summary",
                         [ArchiveNode(id=t["id"], reason="§42 compaction: summarized") for t in traces])
        counts["trace_compacted_count"] = len(traces)
    lc = sc.config.knowledge.lifecycle
    past = 0
    for r in msql.old_usage_events(sc.conn, sc.days_before(c.usage_event_days)):
        tier = sparsity_tier(r["node_kind"], entity_type=r["entity_type"], lifecycle_state=r["lifecycle_state"],
                             cfg=lc)
        if tier != "A":
            past += r["old_events"]
    counts["usage_events_past_window"] = past  # informational, not a change (G41)
    return counts
