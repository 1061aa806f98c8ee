"""Stage 6 — graph materialization (seed 001 §6), one transaction.

Data quality check (§6.0.2) → core nodes and edges (§6.4–§6.5.5, ``graph.build``) → temporal profile
(§6.6, ``graph.profile``; its tier-3 LLM calls, when asked for, are logged in this transaction) → ``graph_nodes`` / ``graph_edges`` rewritten in the seed's order. Upstream tables are
only read; a rerun on the same input writes identical rows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kenning.graph.build import GraphBuilder, build_core
from kenning.graph.profile import build_profiles
from kenning.pipeline.runner import StageContext
from kenning.store import graph as gsql
from kenning.store import temporal as tsql


class GraphMaterialization:
    name = "6"
    title = "graph"

    @staticmethod
    def model_wanted(config: Any, explicit: bool) -> bool:
        """M30/T34: the temporal profile's LLM tier asks the model under an explicit --llm, or with
        graph.profile.enable_llm_classification (off by default), like stage 4 (A32)."""
        return explicit or config.graph.profile.enable_llm_classification

    def run(self, ctx: StageContext) -> dict[str, Any]:
        missing = tsql.missing_tables(ctx.conn, tsql.STAGE4_TABLES + ("assertion_temporalized", "graph_nodes"))
        if missing:
            raise RuntimeError(f"stage 6 needs stages 1–5 first; missing tables: {', '.join(missing)}")
        gcfg = ctx.config.graph
        q = gsql.quality(ctx.conn)
        if q["assertions"] and q["temporalized"] != q["assertions"]:
            ctx.warn("TEMPORALIZED_INCOMPLETE", "some assertions have no stage-5 row; run stage 5 first",
                     assertions=q["assertions"], temporalized=q["temporalized"])
        if q["valid_from_rate"] is not None and q["valid_from_rate"] < 0.2:
            ctx.event("INFO", "SPARSE_VALID_TIME", "few assertions have a valid_from: the profile windows will be sparse",
                      rate=q["valid_from_rate"])
        if not q["self_present"]:
            ctx.event("INFO", "NO_SELF", "no SELF entity: the profile falls back to the busiest subject")
        data = gsql.load_inputs(ctx.conn)
        g = GraphBuilder(ctx.ids)
        build_core(g, data, gcfg)
        pstats: dict[str, Any] = {}
        if gcfg.profile.enable_temporal_profiles:
            pstats = build_profiles(g, data, gcfg.profile, config=ctx.config, ctx=ctx)
        nodes, edges = g.rows()
        gsql.replace_graph(ctx.conn, nodes, edges)
        counts: dict[str, Any] = {"quality": q}
        counts["nodes_by_type"] = dict(sorted(Counter(n[1] for n in nodes).items()))
        counts["edges_by_type"] = dict(sorted(Counter(e[1] for e in edges).items()))
        counts["assertions_by_status"] = q["status_distribution"]
        counts["assertions_by_detection_tier"] = dict(sorted(Counter(
            str(min(a["subject_detection_tier"] or 5, a["object_detection_tier"] or 5))
            for a in data["assertions"]).items()))
        counts["conflict_groups_by_type"] = dict(sorted(Counter(c["conflict_type"] for c in data["conflicts"]).items()))
        counts["entities_with_salience"] = sum(1 for e in data["entities"] if e["salience_score"])
        counts["llm_classification_calls"] = 0
        counts.update({k: v for k, v in sorted({**g.stats, **pstats}.items())})
        counts["nodes"], counts["edges"] = len(nodes), len(edges)
        ctx.progress(records=len(nodes), total=len(nodes), file="stage 6", unit="nodes")
        return counts
