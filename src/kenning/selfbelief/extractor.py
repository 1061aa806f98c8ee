"""HTNBeliefExtractor (seed 000 §1): one experience through all 13 phases.

    ex = HTNBeliefExtractor(conn, config, clock=clock, ids=ids, run_id=run_id, extractor_version=ev, llm=llm)
    result = ex.extract_and_update_self_knowledge(experience)     # an `experiences` row (+ its message text)
    ex.finish()                                                   # link ageing, final scores, ledger

Phases 1–8 only read (the analysis, embeddings, resolution); phases 9–13 write in one transaction scope — a
savepoint inside a stage's transaction, or a transaction of its own when the caller has none (then two processes
can resolve the same new belief at once, and ``unique_canonical_hash_retry`` settles it: one node, two
occurrences). ``before_write(experience, plans)`` is called between the two halves.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import orjson

from kenning.config import Config
from kenning.selfbelief.analyze import Analyzer
from kenning.selfbelief.conflicts import ConflictEngine
from kenning.selfbelief.embedder import HTNBeliefEmbedder
from kenning.selfbelief.links import TentativeLinkService
from kenning.selfbelief.render import render_statement
from kenning.selfbelief.resolver import BeliefMatchVerifier, BeliefResolver, ResolutionResult
from kenning.selfbelief.scoring import ScoringService
from kenning.selfbelief.streams import StreamClassifier, StreamService
from kenning.selfbelief.text import mask
from kenning.selfbelief.types import Analysis, AnalyzedAtom
from kenning.sources.jcs import canonicalize
from kenning.store import selfbeliefs as sql
from kenning.store.connection import write_scope


@dataclass
class Plan:
    atom: AnalyzedAtom
    vector: np.ndarray | None
    resolution: ResolutionResult


@dataclass
class ExtractionResult:
    experience_id: str
    analysis: Analysis
    nodes_created: list[str] = field(default_factory=list)
    nodes_matched: list[str] = field(default_factory=list)
    occurrences: list[str] = field(default_factory=list)
    tentative_links: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    migrations: list[dict] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)
    retries: int = 0

    def counts(self) -> dict[str, int]:
        return {"atoms": len(self.analysis.atoms), "rejected": len(self.analysis.rejected),
                "nodes_created": len(self.nodes_created), "nodes_matched": len(self.nodes_matched),
                "occurrences": len(self.occurrences), "tentative_links": len(self.tentative_links),
                "conflicts": len(self.conflicts), "migrations": len(self.migrations),
                "concurrency_retries": self.retries}


def _ranges(js: str | None) -> list[tuple[int, int]]:
    if not js:
        return []
    return [(int(r["char_start"]), int(r["char_end"])) for r in orjson.loads(js)]


def experience_text(exp: dict) -> tuple[str, int]:
    """The experience's window of its message, code fences / blockquotes / citation markers blanked (offsets kept)."""
    raw = exp["text_raw"] or ""
    start, end = int(exp["text_start"]), int(exp["text_end"])
    hidden = _ranges(exp.get("code_fence_ranges_json")) + _ranges(exp.get("blockquote_ranges_json")) + \
        _ranges(exp.get("citation_ranges_json"))
    window = raw[start:end]
    return mask(window, [(a - start, b - start) for a, b in hidden if b > start and a < end]), start


class HTNBeliefExtractor:
    def __init__(self, conn, config: Config, *, clock, ids, run_id: str, extractor_version: str, llm: Any = None,
                 llm_mode: str = "none", warn: Callable[..., None] | None = None,
                 before_write: Callable[[dict, list[Plan]], None] | None = None, sleep=None):
        self.conn, self.config, self.clock, self.ids = conn, config, clock, ids
        self.run_id, self.version, self.llm_mode = run_id, extractor_version, llm_mode
        self.sb = config.self_beliefs
        self.warn = warn or (lambda *a, **k: None)
        self.before_write = before_write
        llm_on = llm is not None and getattr(llm, "enabled", False)
        self.analyzer = Analyzer(config, llm if llm_on else None)
        self.embedder = HTNBeliefEmbedder(conn, config, clock, self.warn)
        verifier = BeliefMatchVerifier(llm, self.sb.models.verifier_model) \
            if llm_on and self.sb.resolution.verifier.enabled else None
        kw = {"sleep": sleep} if sleep is not None else {}
        self.resolver = BeliefResolver(conn, config, self.embedder, verifier, **kw)
        self.classifier = StreamClassifier(self.sb.streams)
        self.streams = StreamService(conn, config, clock, ids)
        self.links = TentativeLinkService(conn, config, clock, ids, extractor_version)
        self._conflicts: ConflictEngine | None = None
        self.scoring = ScoringService(conn, config, clock)
        self.touched: set[str] = set()
        self.totals: Counter = Counter()

    @property
    def conflicts(self) -> ConflictEngine:
        if self._conflicts is None:
            self._conflicts = ConflictEngine(self.conn, self.config, self.clock, self.ids, self.embedder,
                                             self.resolver.thresholds.tension)
        return self._conflicts

    # -- phases 1–8 (reads) -----------------------------------------------------------------------------------
    def analyze_experience(self, exp: dict) -> Analysis:
        text, offset = experience_text(exp)
        meta = orjson.loads(exp["metadata_json"]) if exp.get("metadata_json") else {}
        source = "profile" if exp.get("context_kind") == self.sb.detector.profile_context_kind else exp["source_kind"]
        return self.analyzer.analyze(text, conversation_id=exp["conversation_id"], metadata=meta, source=source,
                                     message_id=exp["message_id"], item_key=exp["experience_id"], offset=offset)

    def plan(self, exp: dict, analysis: Analysis) -> list[Plan]:
        vecs = self.embedder.embed_batch([a.atom.canonical_text for a in analysis.atoms])
        self.embedder.prefetch(vecs)      # one pass over the index for all the atoms of the experience
        plans = []
        for i, a in enumerate(analysis.atoms):
            v = vecs[i] if vecs is not None else None
            r = self.resolver.resolve(a.atom.canonical_text, a.atom.canonical_hash, a.polarity, v,
                                      message_id=exp["message_id"], item_key=f"{exp['experience_id']}@{i}")
            plans.append(Plan(a, v, r))
        return plans

    def extract_and_update_self_knowledge(self, experience: dict) -> ExtractionResult:
        analysis = self.analyze_experience(experience)              # 1–6
        plans = self.plan(experience, analysis)                      # 7–8
        if self.before_write is not None:
            self.before_write(experience, plans)
        with write_scope(self.conn):                                 # 9–13
            self.embedder.check_fresh()   # another writer may have added nodes before this one got the lock
            result = self.write(experience, analysis, plans)
        self.totals.update(result.counts())
        return result

    # -- phases 9–13 (writes) ---------------------------------------------------------------------------------
    def write(self, exp: dict, analysis: Analysis, plans: list[Plan]) -> ExtractionResult:
        now = self.clock.now()
        res = ExtractionResult(exp["experience_id"], analysis)
        ctx = analysis.source_context
        here: set[str] = set()
        aversion = self.sb.epistemics.cues.aversion
        # this version's occurrences are the experience's evidence from now on (so the scores below count them)
        sql.set_current_version(self.conn, exp["experience_id"], self.version)
        for p in plans:
            a, r = p.atom, p.resolution
            outcome, node_id = r.outcome, r.matched_node_id
            created = False
            if outcome in ("no_match", "uncertain"):
                row = {"belief_id": self.ids.make("belief_node", a.atom.canonical_hash, a.polarity),
                       "canonical_text": a.atom.canonical_text, "canonical_hash": a.atom.canonical_hash,
                       "belief_type": a.atom.belief_type, "polarity": a.polarity,
                       "embedding": np.ascontiguousarray(p.vector, dtype="<f4").tobytes() if p.vector is not None
                       else None, "embedding_model": self.embedder.model_id if p.vector is not None else None,
                       "activation": 0.0, "core_score": 0.0, "status": "surface", "conflict_count": 0,
                       "created_at": now, "last_reinforced_at": now,
                       "statement": render_statement(a.atom.canonical_text, a.polarity, aversion,
                                                     self.config.beliefs.statement_max_chars),
                       "extractor_version": self.version}
                node_id, created, retries = self.resolver.create_node(row)
                res.retries += retries
                if not created:  # another writer made it meanwhile: this is a match after all
                    r.signals["concurrency_retry"] = retries
                    outcome = "match"
                else:
                    self.embedder.index_node(node_id, a.atom.canonical_text, a.polarity, p.vector)
                    self.streams.assign_initial(node_id, self.classifier.classify(
                        a.atom.belief_type, a.epistemics.frame.temporal_scope))
                    res.nodes_created.append(node_id)
            if not created:
                res.nodes_matched.append(node_id)
            res.outcomes[outcome] += 1
            occ = self._occurrence(exp, a, node_id, ctx, r, outcome, now)
            sql.upsert_occurrence(self.conn, occ)
            res.occurrences.append(occ["occurrence_id"])
            if not created:
                sql.update_node(self.conn, node_id, {"last_reinforced_at": now})
            # tentative links (§4.12)
            sig = {"experience_id": exp["experience_id"], "occurrence_id": occ["occurrence_id"],
                   "similarity": round(r.match_confidence, 6), "at": now}
            if outcome == "uncertain" and r.best is not None and r.best.belief_id != node_id:
                link = self.links.create_or_update(node_id, r.best.belief_id, sig)
                res.tentative_links.append(link["link_id"])
                # an uncertain match involving both ends of a known link supports it (one query for the band)
                known = sql.links_between(self.conn, r.best.belief_id, [o.belief_id for o in r.band[1:]])
                for other in r.band[1:]:
                    if other.belief_id in known:
                        self.links.update_evidence(known[other.belief_id], "both", sig)
            elif outcome == "match":
                for link in self.links.definite_match(node_id, sig):
                    res.tentative_links.append(link["link_id"])
            # conflicts (§4.15)
            node = sql.nodes_by_ids(self.conn, [node_id], with_embedding=True)[node_id]
            vec = p.vector
            if node.get("embedding") is not None and node.get("embedding_model") == self.embedder.model_id:
                vec = np.frombuffer(node["embedding"], dtype="<f4")
            for e in self.conflicts.detect(node, vec, occ):
                res.conflicts.append(e["edge_id"])
                here.update((e["node_a_id"], e["node_b_id"]))
            here.add(node_id)
        # scoring (§4.16–4.17) and migration (§4.14)
        scores = self.scoring.score(sorted(here))
        for bid in sorted(set(res.nodes_created) | set(res.nodes_matched)):
            a = sql.get_assignment(self.conn, bid)
            s = scores.get(bid)
            if a is not None and s is not None:
                entry = self.streams.check_migration(bid, a, s, s["activation"])
                if entry is not None:
                    res.migrations.append({"belief_id": bid, **entry})
        if res.migrations:
            self.scoring.score([m["belief_id"] for m in res.migrations])  # half-life follows the new stream
        sql.insert_experience_run(self.conn, {"experience_id": exp["experience_id"], "extractor_version": self.version,
                                              "processed_at": now, "run_id": self.run_id, "llm_mode": self.llm_mode,
                                              "counts_json": canonicalize(res.counts())})
        self.touched.update(here)
        return res

    def _occurrence(self, exp: dict, a: AnalyzedAtom, node_id: str, ctx, r: ResolutionResult, outcome: str,
                    now: str) -> dict:
        epi = a.epistemics
        signals = {"epistemics": epi.signals, "epistemics_source": epi.source, "resolution": r.signals,
                   "atom": a.atom.signals, "origin": a.atom.origin}
        return {
            "occurrence_id": self.ids.make("belief_occurrence", node_id, exp["experience_id"], self.version),
            "belief_id": node_id, "source_experience_id": exp["experience_id"], "extractor_version": self.version,
            "raw_text": a.atom.original_text,
            "raw_span": canonicalize([{"start": s, "end": e} for s, e in a.atom.spans]),
            "source_weight": ctx.source_weight, "atom_confidence": a.confidence,
            "epistemic_frame": canonicalize(epi.frame.as_dict()), "epistemic_confidence": epi.confidence,
            "match_confidence": r.match_confidence, "context_id": ctx.context_id, "created_at": now,
            "deleted_at": None, "message_id": exp["message_id"], "occurred_at": exp.get("occurred_at"),
            "belief_type": a.atom.belief_type, "atom_polarity": a.atom.polarity, "resolution": outcome,
            "signals_json": canonicalize(signals), "run_id": self.run_id,
        }

    # -- after a batch ----------------------------------------------------------------------------------------
    def finish(self, publish: bool = True) -> dict[str, Any]:
        """Age the pending links, rescore every node touched, publish them into the belief ledger."""
        out: dict[str, Any] = {}
        if not self.touched:
            return out
        with write_scope(self.conn):
            out.update(self.links.refresh_all())
            self.scoring.score(sorted(self.touched))
            if publish and self.sb.ledger.enabled:
                from kenning.selfbelief.ledger_feed import publish_nodes

                out.update(publish_nodes(self.conn, self.config, _RunAdapter(self), sorted(self.touched)))
        return out


@dataclass
class _RunAdapter:
    """What the belief ledger needs from a run (kenning.beliefs.ledger.RunLike), from an extractor."""

    ex: HTNBeliefExtractor

    def __post_init__(self):
        self.conn, self.config, self.clock, self.ids = self.ex.conn, self.ex.config, self.ex.clock, self.ex.ids
        self.run_id = self.ex.run_id
        self.started_at_utc = self.ex.clock.now()

    def warn(self, code: str, message: str, **context: Any) -> None:
        self.ex.warn(code, message, **context)
