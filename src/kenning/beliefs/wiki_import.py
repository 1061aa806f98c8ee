"""Import a wiki workspace (seed 002): pages, footnotes, claim provenance with verbatim quote anchors, and the
beliefs of the ``*.beliefs.json`` sidecars — after the hostile verifier's four belief checks pass.

One run takes the whole workspace. Every check runs over it; any failure rejects the run whole (the stage
raises `WikiRunRejected`, the runner rolls back and records the reasons on the failed run). Only then is
anything written. ``rebuild=True`` is `kenning reindex --rebuild-beliefs`: a missing or unparseable sidecar
warns and skips that page instead of rejecting.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from kenning.beliefs import ledger
from kenning.beliefs.judge import NOT_CHECKED, Judge, LLMJudge, ModelJudgeRequest, NoJudge, prompt_version
from kenning.beliefs.quotes import decode_raw, quote_hash
from kenning.beliefs.timeutil import TimeValueError, parse_instant, parse_valid_time
from kenning.pipeline.runner import StageContext
from kenning.pipeline.stage0 import check_namespace
from kenning.sources import wiki as wikisrc
from kenning.sources.jcs import jcs_hash
from kenning.store import beliefs as sql

SIDECAR_FIELDS = {
    "belief_id", "statement", "topic", "subject", "predicate", "object", "wiki_section_anchor", "footnote_ids",
    "provenance_ids", "asserted_at", "superseded_at", "superseded_by_belief_id", "supersession_reason",
    "source_valid_from", "source_valid_to", "contradicting_belief_ids", "confidence_hint",
}
# Fields the seed's writer records about its own runs; Kenning keeps its own run ids (W5).
IGNORED_FIELDS = {"asserted_in_run", "superseded_in_run", "supporting_count", "created_at", "workspace",
                  "wiki_document_id"}
WIKI_KINDS = ("wiki_page", "raw_source")


@dataclass(frozen=True)
class Finding:
    check: str          # sidecar | coverage | provenance_link | supersession_sanity | statement_support
    code: str
    message: str
    page: str | None = None
    belief_id: str | None = None

    def as_event(self) -> tuple[str, str, str, dict]:
        return ("ERROR", f"REJECTED_{self.code.upper()}", self.message,
                {"check": self.check, "reason": self.code, "page": self.page, "belief_id": self.belief_id})


class WikiRunRejected(RuntimeError):
    """The verifier rejected the run; nothing was committed. Carries every reason."""

    def __init__(self, root: str, findings: list[Finding], warnings: list[tuple] | None = None):
        self.root, self.findings = root, findings
        self.failure_events = [f.as_event() for f in findings] + list(warnings or [])
        self.failure_counts = {"rejected": len(findings), "reasons": sorted({f.code for f in findings})}
        head = "; ".join(f"{f.code}: {f.message}" for f in findings[:5])
        more = f" (+{len(findings) - 5} more)" if len(findings) > 5 else ""
        super().__init__(f"the verifier rejected {root}: {len(findings)} problem(s): {head}{more}")


@dataclass
class StagedPage:
    page: wikisrc.WikiPage
    structural: bool
    skipped: bool = False
    beliefs: list[dict] = field(default_factory=list)


class _Run:
    def __init__(self, ctx: StageContext, root: Path, workspace: str, judge: Judge, rebuild: bool):
        self.ctx, self.root, self.workspace, self.judge, self.rebuild = ctx, root, workspace, judge, rebuild
        self.cfg = ctx.config.beliefs
        self.wcfg = self.cfg.wiki
        self.findings: list[Finding] = []
        self.counts: dict[str, Any] = {}
        self.raw_texts: dict[str, tuple[str, str, int] | None] = {}  # path -> (text, sha256, size)
        self.provenance: dict[str, dict] = {}     # id -> row (staged)
        self.prov_page: dict[str, str] = {}
        self.failed_prov: set[str] = set()      # quotes already rejected (not found, file missing, …)
        self.footnotes: list[dict] = []
        self.pages: dict[str, StagedPage] = {}

    def reject(self, check: str, code: str, message: str, page: str | None = None, belief_id: str | None = None):
        self.findings.append(Finding(check, code, message, page, belief_id))

    # ---- reading --------------------------------------------------------------------------------------
    def raw_text(self, raw_path: str) -> tuple[str, str, int] | None:
        if raw_path not in self.raw_texts:
            p = self.raw_file(raw_path)
            try:
                size = p.stat().st_size
                if size > self.wcfg.max_raw_file_bytes:
                    self.raw_texts[raw_path] = None
                    return None
                data = p.read_bytes()
                self.raw_texts[raw_path] = (decode_raw(data), hashlib.sha256(data).hexdigest(), len(data))
            except OSError:
                self.raw_texts[raw_path] = None
        return self.raw_texts[raw_path]

    def raw_file(self, raw_path: str) -> Path:
        """Where a cited raw file is read from (a staged run overlays its new sources; wiki_verify_run)."""
        return self.root / raw_path

    def link_outside(self, raw_path: str) -> tuple[str, str] | None:
        """Issue 23 §2 (decision P10): the first symbolic link on the way to a cited raw file that resolves outside
        the folder it sits in (the workspace, or a staged run's folder), as (link, where it points); else None."""
        parts = PurePosixPath(raw_path).parts
        p = self.raw_file(raw_path)
        base = p.parents[len(parts) - 1] if parts else p
        real_base = base.resolve()
        cur = base
        for i, part in enumerate(parts):
            cur = cur / part
            if cur.is_symlink():
                target = cur.resolve()
                if not target.is_relative_to(real_base):
                    return "/".join(parts[:i + 1]), str(target)
        return None

    def scan_tree(self) -> wikisrc.WikiTree:
        """The pages and sidecars to check (a staged run overlays its staged pages on ``wiki/``)."""
        return wikisrc.scan(self.root, self.wcfg.wiki_dir, self.wcfg.raw_dir, self.wcfg.sidecar_suffix)

    def stage_provenance(self, sp: StagedPage, cited_keys: set[str]) -> None:
        page = sp.page
        raw_dir = self.wcfg.raw_dir.rstrip("/")
        for key, fn in page.footnotes.items():
            doc_id = self.doc_id("wiki_page", page.path)
            self.footnotes.append({"id": self.ctx.ids.make("footnote", doc_id, key), "document_id": doc_id,
                                   "footnote_key": key, "raw_path": fn.raw_path, "page_hint": fn.page_hint,
                                   "definition": fn.text, "line": fn.line, "reference_count": page.references[key]})
            for mark in fn.stray_prov_marks:
                self.ctx.warn("STRAY_PROVENANCE_MARKER", f"{page.path} [^{key}]: <!-- prov:{mark} --> follows no quote",
                              page=page.path, footnote=key)
            if sp.structural:
                continue   # structural pages are exempt from citation checks (seed 002)
            needed = key in cited_keys or page.references[key] > 0
            self.failed_prov.update(q.provenance_id for q in fn.quotes)
            if not fn.quotes:
                if needed:
                    self.reject("provenance_link", "footnote_without_quote",
                                f'{page.path} [^{key}] cites no verbatim quote ("…")', page.path)
                continue
            if fn.raw_path is None:
                self.reject("provenance_link", "footnote_without_raw_path",
                            f"{page.path} [^{key}] quotes a source but names no file under {raw_dir}/", page.path)
                continue
            parts = PurePosixPath(fn.raw_path).parts
            if ".." in parts or PurePosixPath(fn.raw_path).is_absolute():
                self.reject("provenance_link", "raw_path_outside_workspace",
                            f"{page.path} [^{key}] cites {fn.raw_path}, outside the workspace", page.path)
                continue
            link = None if self.ctx.inputs.get("follow_symlinks") else self.link_outside(fn.raw_path)
            if link is not None:
                self.reject("provenance_link", "raw_path_symlink_outside_workspace",
                            f"{page.path} [^{key}] cites {fn.raw_path}, but {link[0]} is a link to {link[1]}, "
                            "outside the workspace: Kenning does not read (or vouch for) files outside it unless "
                            "you pass --follow-symlinks", page.path)
                continue
            raw = self.raw_text(fn.raw_path)
            if raw is None:
                self.reject("provenance_link", "raw_source_missing",
                            f"{page.path} [^{key}] cites {fn.raw_path}, which cannot be read", page.path)
                continue
            text, _, _ = raw
            for q in fn.quotes:
                at = text.find(q.quote)
                if at < 0:
                    self.reject("provenance_link", "quote_not_found",
                                f'{page.path} [^{key}]: the quote "{q.quote[:80]}" is not in {fn.raw_path}', page.path)
                    continue
                if text.find(q.quote, at + 1) >= 0:
                    self.ctx.warn("QUOTE_AMBIGUOUS", f"{page.path} [^{key}]: the quote occurs more than once in "
                                  f"{fn.raw_path}; anchored at its first occurrence", page=page.path, footnote=key)
                row = {"id": q.provenance_id, "workspace": self.workspace, "document_id": doc_id, "footnote_key": key,
                       "source_kind": "raw_file", "raw_path": fn.raw_path,
                       "raw_document_id": self.doc_id("raw_source", fn.raw_path), "conversation_id": None,
                       "message_id": None, "char_start": at, "char_end": at + len(q.quote),
                       "page_hint": fn.page_hint, "quote": q.quote, "quote_hash": quote_hash(q.quote)}
                if q.provenance_id in self.provenance:
                    self.reject("provenance_link", "duplicate_provenance_id",
                                f"provenance id {q.provenance_id} is defined twice ({self.prov_page[q.provenance_id]} "
                                f"and {page.path} [^{key}])", page.path)
                    continue
                self.provenance[q.provenance_id] = row
                self.prov_page[q.provenance_id] = page.path
                self.failed_prov.discard(q.provenance_id)

    def doc_id(self, kind: str, path: str) -> str:
        return self.ctx.ids.make("document", self.workspace, kind, path)

    # ---- sidecar beliefs --------------------------------------------------------------------------------
    def parse_belief(self, page: wikisrc.WikiPage, sidecar: str, i: int, b: Any) -> dict | None:
        where = f"{sidecar} beliefs[{i}]"
        if not isinstance(b, dict):
            self.reject("sidecar", "invalid_belief", f"{where} is not an object", page.path)
            return None
        bid = b.get("belief_id")
        if not isinstance(bid, str) or not bid.strip():
            self.reject("sidecar", "invalid_belief", f"{where} has no belief_id", page.path)
            return None
        where = f"{sidecar} {bid}"
        problems: list[str] = []
        for k in sorted(set(b) - SIDECAR_FIELDS - IGNORED_FIELDS):
            self.ctx.warn("UNKNOWN_SIDECAR_FIELD", f"{where}: field {k!r} is not part of a belief; ignored",
                          page=page.path, belief_id=bid, field=k)

        def text(name: str, required: bool) -> str | None:
            v = b.get(name)
            if v is None:
                if required:
                    problems.append(f"{name} is required")
                return None
            if not isinstance(v, str) or (required and not v.strip()):
                problems.append(f"{name} must be a non-empty string")
                return None
            return v

        def id_list(name: str, required: bool) -> list[str]:
            v = b.get(name)
            if v is None and not required:
                return []
            if not isinstance(v, list) or (required and not v) or not all(isinstance(x, (str, int)) and
                                                                          not isinstance(x, bool) for x in v):
                problems.append(f"{name} must be a non-empty array of ids" if required else f"{name} must be an array")
                return []
            return [str(x) for x in v]

        statement = text("statement", True)
        topic = text("topic", True)
        anchor = text("wiki_section_anchor", True)
        subj, pred, obj = text("subject", False), text("predicate", False), text("object", False)
        footnote_ids = id_list("footnote_ids", True)
        provenance_ids = id_list("provenance_ids", True)
        contra = id_list("contradicting_belief_ids", False)
        if statement is not None and len(statement) > self.cfg.statement_max_chars:
            problems.append(f"statement is {len(statement)} characters; a belief is at most "
                            f"{self.cfg.statement_max_chars} (split it)")
        times: dict[str, str | None] = {}
        for name, parse in (("asserted_at", parse_instant), ("superseded_at", parse_instant),
                            ("source_valid_from", parse_valid_time), ("source_valid_to", parse_valid_time)):
            v = b.get(name)
            try:
                times[name] = parse(v, name) if v is not None else None
            except TimeValueError as e:
                problems.append(str(e))
                times[name] = None
        reason = b.get("supersession_reason")
        if reason is not None and reason not in self.cfg.supersession_reasons:
            problems.append(f"supersession_reason {reason!r} is not one of {', '.join(self.cfg.supersession_reasons)}")
        succ = b.get("superseded_by_belief_id")
        if succ is not None and not isinstance(succ, str):
            problems.append("superseded_by_belief_id must be a string")
        hint = b.get("confidence_hint")
        if hint is not None and hint not in self.cfg.confidence_hints:
            problems.append(f"confidence_hint {hint!r} is not one of {', '.join(self.cfg.confidence_hints)}")
        if problems:
            for p in problems:
                self.reject("sidecar", "invalid_belief", f"{where}: {p}", page.path, bid)
            return None
        if anchor is not None and anchor not in page.anchors and anchor not in ("#", ""):
            self.ctx.warn("SECTION_ANCHOR_NOT_FOUND", f"{where}: {anchor} is not a heading of {page.path}",
                          page=page.path, belief_id=bid, anchor=anchor)
        return {"belief_id": bid, "statement": statement, "topic": topic, "subject": subj, "predicate": pred,
                "object": obj, "wiki_section_anchor": anchor, "footnote_ids": footnote_ids,
                "provenance_ids": list(dict.fromkeys(provenance_ids)), "asserted_at": times["asserted_at"],
                "superseded_at": times["superseded_at"], "superseded_by_belief_id": succ,
                "supersession_reason": reason, "source_valid_from": times["source_valid_from"],
                "source_valid_to": times["source_valid_to"], "contradicting_belief_ids": contra,
                "confidence_hint": hint, "_page": page.path}

    # ---- the four checks (deterministic parts) ------------------------------------------------------------
    def check_coverage(self, sp: StagedPage) -> None:
        page = sp.page
        for key in page.duplicate_footnotes:
            self.reject("coverage", "duplicate_footnote", f"{page.path} defines footnote [^{key}] more than once",
                        page.path)
        for key in sorted(page.references):
            if key not in page.footnotes:
                self.reject("coverage", "footnote_reference_undefined",
                            f"{page.path} cites [^{key}] but defines no such footnote", page.path)
        covered = {k for b in sp.beliefs for k in b["footnote_ids"]}
        for key in sorted(page.references):
            if key in page.footnotes and key not in covered:
                self.reject("coverage", "footnote_without_belief",
                            f"{page.path} cites [^{key}] but no belief in its sidecar lists footnote {key}", page.path)
        for b in sp.beliefs:
            for key in b["footnote_ids"]:
                if key not in page.footnotes:
                    self.reject("coverage", "belief_footnote_undefined",
                                f"{b['belief_id']} lists footnote {key}, which {page.path} does not define",
                                page.path, b["belief_id"])
        for key in sorted(set(page.footnotes) - set(page.references)):
            self.ctx.warn("FOOTNOTE_UNREFERENCED", f"{page.path} defines [^{key}] but never cites it",
                          page=page.path, footnote=key)

    def check_provenance_links(self, sp: StagedPage) -> None:
        for b in sp.beliefs:
            for pid in b["provenance_ids"]:
                prov = self.provenance.get(pid)
                if prov is None or self.prov_page.get(pid) != sp.page.path:
                    if pid not in self.failed_prov or prov is not None:
                        self.reject("provenance_link", "unknown_provenance_id",
                                    f"{b['belief_id']} cites provenance {pid}, which no footnote quote of "
                                    f"{sp.page.path} defines", sp.page.path, b["belief_id"])
                    continue
                if prov["footnote_key"] not in b["footnote_ids"]:
                    self.reject("provenance_link", "provenance_footnote_mismatch",
                                f"{b['belief_id']} cites provenance {pid} from footnote [^{prov['footnote_key']}], "
                                f"which is not in its footnote_ids {b['footnote_ids']}", sp.page.path, b["belief_id"])

    # ---- run ------------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        tree, all_beliefs, final, existing, wiki_docs = self.prepare()
        if self.findings:
            raise WikiRunRejected(str(self.root), self.findings)
        judged = self.judge_checks(all_beliefs, final)
        if self.findings:
            raise WikiRunRejected(str(self.root), self.findings)
        return self.commit(tree, all_beliefs, final, existing, wiki_docs, judged)

    def prepare(self) -> tuple[wikisrc.WikiTree, dict[str, dict], dict[str, dict], dict[str, dict], dict[str, dict]]:
        """Read everything and run the deterministic checks; problems land in ``self.findings``. Writes nothing."""
        ctx, wcfg = self.ctx, self.wcfg
        tree = self.scan_tree()
        for path, err in tree.unreadable_pages.items():
            self.reject("sidecar", "unreadable_page", f"{path} cannot be read: {err}", path)
        for sc in tree.orphan_sidecars:
            if self.rebuild:
                ctx.warn("ORPHAN_SIDECAR_SKIPPED", f"{sc.path} sits beside no page ({sc.page}); skipped", page=sc.page)
            else:
                self.reject("coverage", "orphan_sidecar", f"{sc.path} sits beside no page ({sc.page} does not exist)",
                            sc.page)
        structural_names = set(wcfg.structural_pages)
        all_beliefs: dict[str, dict] = {}
        for path, page in tree.pages.items():
            sp = StagedPage(page, PurePosixPath(path).name in structural_names)
            self.pages[path] = sp
            sidecar = tree.sidecars.get(path)
            if sidecar is None:
                if page.references and not sp.structural:
                    if self.rebuild:
                        ctx.warn("SIDECAR_MISSING_SKIPPED", f"{path} cites sources but has no sidecar; its beliefs "
                                 "are skipped", page=path)
                        sp.skipped = True
                    else:
                        self.reject("coverage", "missing_sidecar", f"{path} cites sources but has no "
                                    f"{PurePosixPath(path).stem}{wcfg.sidecar_suffix} beside it", path)
                continue
            if sidecar.error is not None:
                if self.rebuild:
                    ctx.warn("SIDECAR_UNPARSEABLE_SKIPPED", f"{sidecar.path} {sidecar.error}; the beliefs of {path} "
                             "are skipped", page=path)
                    sp.skipped = True
                else:
                    self.reject("sidecar", "unparseable_sidecar", f"{sidecar.path} {sidecar.error}", path)
                continue
            data = sidecar.data or {}
            declared_page = data.get("page")
            if declared_page is not None and declared_page != path:
                self.reject("sidecar", "sidecar_page_mismatch",
                            f"{sidecar.path} says it belongs to {declared_page!r}, but sits beside {path}", path)
            for i, b in enumerate(data.get("beliefs") or []):
                parsed = self.parse_belief(page, sidecar.path, i, b)
                if parsed is None:
                    continue
                if parsed["belief_id"] in all_beliefs:
                    self.reject("sidecar", "duplicate_belief_id", f"belief_id {parsed['belief_id']} appears in "
                                f"{all_beliefs[parsed['belief_id']]['_page']} and {path}", path, parsed["belief_id"])
                    continue
                all_beliefs[parsed["belief_id"]] = parsed
                sp.beliefs.append(parsed)
        for path, sp in self.pages.items():
            cited = {k for b in sp.beliefs for k in b["footnote_ids"]}
            if not sp.skipped:
                self.stage_provenance(sp, cited)
            if sp.structural or sp.skipped:
                continue
            self.check_coverage(sp)
            self.check_provenance_links(sp)
        # belief ids owned by another workspace, or by another source in this one
        elsewhere = sql.existing_belief_ids(ctx.conn, list(all_beliefs))
        wiki_docs = sql.documents_of(ctx.conn, self.workspace, WIKI_KINDS)
        page_docs = [d for d, r in wiki_docs.items() if r["kind"] == "wiki_page"]
        existing = sql.beliefs_of_documents(ctx.conn, page_docs)   # the beliefs this importer owns
        for bid, ws in elsewhere.items():
            if ws != self.workspace or bid not in existing:
                self.reject("sidecar", "duplicate_belief_id", f"belief_id {bid} already belongs to "
                            f"{'workspace ' + ws if ws != self.workspace else 'a non-wiki belief of this workspace'}",
                            all_beliefs[bid]["_page"], bid)
        final = self.resolve_rows(all_beliefs)
        self.check_supersession(all_beliefs, final)
        return tree, all_beliefs, final, existing, wiki_docs

    # ---- transaction times (W5) ----------------------------------------------------------------------------
    def resolve_rows(self, beliefs: dict[str, dict]) -> dict[str, dict]:
        ctx = self.ctx
        now = ctx.started_at_utc
        self.sightings = sql.get_sightings(ctx.conn, list(beliefs))
        self.new_sightings: list[dict] = []
        self.superseded_seen: list[str] = []
        predecessors: dict[str, list[dict]] = {}
        for b in beliefs.values():
            if b["superseded_by_belief_id"]:
                predecessors.setdefault(b["superseded_by_belief_id"], []).append(b)
        rows: dict[str, dict] = {}
        for bid, b in beliefs.items():
            s = self.sightings.get(bid)
            if s is None:
                s = {"belief_id": bid, "workspace": self.workspace, "first_seen_run": ctx.run_id, "first_seen_at": now,
                     "superseded_seen_run": None, "superseded_seen_at": None}
                self.sightings[bid] = s
                self.new_sightings.append(s)
            is_superseded = bool(b["superseded_at"] or b["superseded_by_belief_id"] or b["supersession_reason"])
            if is_superseded and s["superseded_seen_run"] is None:
                s["superseded_seen_run"], s["superseded_seen_at"] = ctx.run_id, now
                self.superseded_seen.append(bid)
            asserted = b["asserted_at"]
            if asserted is None:
                explicit = sorted(p["superseded_at"] for p in predecessors.get(bid, []) if p["superseded_at"])
                asserted = explicit[-1] if explicit else None
            superseded = None
            if is_superseded:
                succ = beliefs.get(b["superseded_by_belief_id"] or "")
                superseded = b["superseded_at"] or (succ["asserted_at"] if succ else None) or s["superseded_seen_at"]
            if asserted is None:
                asserted = s["first_seen_at"]
                if superseded is not None and superseded < asserted:
                    ctx.warn("ASSERTED_AT_UNKNOWN", f"{bid} was first seen already superseded (at {superseded}); "
                             "its asserted_at is set to that time. Add asserted_at to the sidecar to say when the wiki "
                             "started believing it.", belief_id=bid)
                    asserted = superseded
            rows[bid] = {
                "belief_id": bid, "workspace": self.workspace, "statement": b["statement"], "topic": b["topic"],
                "subject": b["subject"], "predicate": b["predicate"], "object": b["object"],
                "wiki_document_id": self.doc_id("wiki_page", b["_page"]),
                "wiki_section_anchor": b["wiki_section_anchor"], "footnote_ids": ledger.jarr(b["footnote_ids"]),
                "provenance_ids": ledger.jarr(b["provenance_ids"]), "asserted_at": asserted,
                "asserted_in_run": s["first_seen_run"], "superseded_at": superseded,
                "superseded_by_belief_id": b["superseded_by_belief_id"],
                "superseded_in_run": s["superseded_seen_run"] if is_superseded else None,
                "supersession_reason": b["supersession_reason"], "source_valid_from": b["source_valid_from"],
                "source_valid_to": b["source_valid_to"], "supporting_count": len(b["provenance_ids"]),
                "contradicting_belief_ids": None, "confidence_hint": None, "created_at": s["first_seen_at"],
                "recorded_at": s["first_seen_at"],
                "superseded_recorded_at": s["superseded_seen_at"] if is_superseded else None,
            }
        return rows

    def check_supersession(self, beliefs: dict[str, dict], rows: dict[str, dict]) -> None:
        outside = {b: r for b, r in sql.beliefs_by_ids_raw(
            self.ctx.conn, sorted({r["superseded_by_belief_id"] for r in rows.values()
                                   if r["superseded_by_belief_id"]} - set(rows))).items()
            if r["workspace"] == self.workspace}
        for code, bid, msg in ledger.supersession_problems(rows, outside):
            self.reject("supersession_sanity", code, msg, beliefs[bid]["_page"], bid)
        for bid, r in rows.items():
            succ = r["superseded_by_belief_id"]
            if succ and succ in rows and succ != bid:
                if not r["supersession_reason"]:
                    self.reject("supersession_sanity", "missing_supersession_reason",
                                f"{bid} is superseded by {succ} without a supersession_reason",
                                beliefs[bid]["_page"], bid)
                elif not ledger.related_for_supersession(r, rows[succ]):
                    self.reject("supersession_sanity", "unjustified_supersession",
                                f"{succ} supersedes {bid}, but they share neither subject+predicate nor topic "
                                f"({r['topic']!r} vs {rows[succ]['topic']!r})", beliefs[bid]["_page"], bid)

    # ---- model-judged halves of checks 3 and 4 (W12) ----------------------------------------------------------
    def judge_checks(self, beliefs: dict[str, dict], rows: dict[str, dict]) -> list[dict]:
        ctx, vcfg = self.ctx, self.cfg.verifier
        prior = sql.findings_of(ctx.conn, self.workspace)
        out: list[dict] = []
        self.applicable: set[tuple[str, str]] = set()

        def record(bid: str, check: str, input_hash: str, ask) -> None:
            self.applicable.add((bid, check))
            old = prior.get((bid, check))
            if old is not None and old["input_hash"] == input_hash and (old["outcome"] != NOT_CHECKED or
                                                                      self.judge.name == "none"):
                self.counts[f"{check}_{old['outcome']}"] = self.counts.get(f"{check}_{old['outcome']}", 0) + 1
                return
            outcome, vote, detail = ask()
            self.counts[f"{check}_{outcome}"] = self.counts.get(f"{check}_{outcome}", 0) + 1
            out.append({"workspace": self.workspace, "belief_id": bid, "check_name": check, "outcome": outcome,
                        "vote": vote, "judge": self.judge.name, "input_hash": input_hash, "detail": detail,
                        "run_id": ctx.run_id})

        for bid in sorted(rows):
            b = beliefs[bid]
            quotes = [self.provenance[p]["quote"] for p in b["provenance_ids"] if p in self.provenance]

            def ask_statement(b=b, quotes=quotes):
                v = self.judge.statement_support(b["statement"], quotes)
                if not v.checked:
                    return NOT_CHECKED, None, v.error
                if v.vote == "supports":
                    return "passed", v.vote, v.rationale
                if v.vote in vcfg.reject_statement_votes:
                    self.reject("statement_support", "statement_not_supported",
                                f"{bid}: the judge voted {v.vote}: {v.rationale or 'no rationale'}", b["_page"], bid)
                    return "failed", v.vote, v.rationale
                return "warning", v.vote, v.rationale

            record(bid, "statement_support", jcs_hash(["statement_support", prompt_version(), b["statement"], quotes]),
                   ask_statement)
            r = rows[bid]
            succ = r["superseded_by_belief_id"]
            expected = vcfg.supersession_expected_votes.get(r["supersession_reason"] or "")
            if succ and succ in rows and expected:
                new = rows[succ]

                def ask_supersession(r=r, new=new, expected=expected, succ=succ):
                    v = self.judge.supersession(r["statement"], new["statement"], r["supersession_reason"])
                    if not v.checked:
                        return NOT_CHECKED, None, v.error
                    if v.vote == expected:
                        return "passed", v.vote, v.rationale
                    if v.vote == "unrelated":
                        self.reject("supersession_sanity", "unjustified_supersession",
                                    f"{succ} supersedes {bid}, but the judge cannot tell why: "
                                    f"{v.rationale or 'no rationale'}", b["_page"], bid)
                    else:
                        self.reject("supersession_sanity", "supersession_reason_mismatch",
                                    f"{bid} → {succ} is recorded as {r['supersession_reason']}, but the judge votes "
                                    f"{v.vote} (expected {expected})", b["_page"], bid)
                    return "failed", v.vote, v.rationale

                record(bid, "supersession_sanity", jcs_hash(["supersession", prompt_version(), r["statement"],
                                                             new["statement"], r["supersession_reason"]]),
                       ask_supersession)
        return out

    # ---- commit ----------------------------------------------------------------------------------------
    def commit(self, tree: wikisrc.WikiTree, beliefs: dict[str, dict], final: dict[str, dict],
               existing: dict[str, dict], wiki_docs: dict[str, dict], judged: list[dict]) -> dict[str, Any]:
        ctx, conn = self.ctx, self.ctx.conn
        sql.defer_foreign_keys(conn)
        ledger.ensure_workspace(conn, self.workspace, str(self.root), ctx)
        # overrides, contradictions, confidence hints: the final shape of every row
        overrides = sql.overrides_of(conn, self.workspace)
        ledger.apply_overrides(final, overrides, ctx,
                               exists=lambda b: b in final or bool(sql.existing_belief_ids(conn, [b])))
        ledger.lint_contradictions(final, {b: set(v["contradicting_belief_ids"]) for b, v in beliefs.items()})
        for bid, r in final.items():
            sources = {self.provenance[p]["raw_path"] for p in beliefs[bid]["provenance_ids"] if p in self.provenance}
            r["confidence_hint"] = ledger.derive_confidence_hint(r, beliefs[bid]["confidence_hint"], len(sources))
        # documents: pages and the raw files they cite
        wanted: dict[str, dict] = {}
        for path, sp in self.pages.items():
            wanted[self.doc_id("wiki_page", path)] = {"kind": "wiki_page", "path": path, "title": sp.page.title,
                                                      "sha256": sp.page.sha256, "size": sp.page.size}
        for raw_path, raw in sorted(self.raw_texts.items()):
            if raw is not None and any(p["raw_path"] == raw_path for p in self.provenance.values()):
                wanted[self.doc_id("raw_source", raw_path)] = {"kind": "raw_source", "path": raw_path, "title": None,
                                                               "sha256": raw[1], "size": raw[2]}
        gone_docs = sorted(set(wiki_docs) - set(wanted))
        # a raw file no page cites any more may still back a published belief (publish_beliefs raw_file sources)
        keep = sql.documents_in_use(conn, [d for d in gone_docs if wiki_docs[d]["kind"] == "raw_source"],
                                    [d for d, r in wiki_docs.items() if r["kind"] == "wiki_page"])
        gone_docs = [d for d in gone_docs if d not in keep]
        removed = sorted(set(existing) - set(final))
        if removed:
            for bid in sql.detach_supersession_refs(conn, removed):
                ctx.warn("SUPERSESSION_TARGET_REMOVED", f"{bid} was superseded by a belief no longer in any sidecar",
                         belief_id=bid)
            for bid in removed:
                ctx.warn("BELIEF_REMOVED", f"{bid} is no longer in any sidecar; removed from the ledger", belief_id=bid)
            sql.delete_beliefs(conn, removed)
            sql.delete_findings(conn, self.workspace, removed)
        if gone_docs:
            sql.delete_provenance_of_documents(conn, gone_docs)
            sql.delete_documents(conn, gone_docs)
        docs_new = docs_changed = 0
        for doc_id, d in sorted(wanted.items()):
            old = wiki_docs.get(doc_id)
            if old is None:
                sql.insert_document(conn, {"id": doc_id, "workspace": self.workspace, "kind": d["kind"],
                                           "path": d["path"], "title": d["title"], "sha256": d["sha256"],
                                           "size_bytes": d["size"], "conversation_id": None,
                                           "created_at": ctx.started_at_utc, "first_run_id": ctx.run_id,
                                           "last_changed_run_id": ctx.run_id})
                docs_new += 1
            elif (old["title"], old["sha256"], old["size_bytes"]) != (d["title"], d["sha256"], d["size"]):
                sql.update_document(conn, doc_id, d["title"], d["sha256"], d["size"], ctx.run_id)
                docs_changed += 1
        page_docs = [self.doc_id("wiki_page", p) for p in self.pages]
        sql.replace_footnotes(conn, page_docs, self.footnotes)
        old_prov = {p["id"] for p in sql.provenance_of_documents(conn, page_docs)}
        stale = sorted(old_prov - set(self.provenance))
        if stale:
            sql.delete_provenance_ids(conn, stale)
        sql.upsert_provenance(conn, [self.provenance[k] for k in sorted(self.provenance)])
        inserted, updated = ledger.sync_rows(conn, final, existing)
        sql.set_belief_links(conn, [(bid, pid, i) for bid in sorted(final)
                                    for i, pid in enumerate(beliefs[bid]["provenance_ids"])], sorted(final))
        sql.insert_sightings(conn, self.new_sightings)
        for bid in self.superseded_seen:
            if bid not in {s["belief_id"] for s in self.new_sightings}:
                sql.mark_superseded_seen(conn, bid, ctx.run_id, ctx.started_at_utc)
        sql.upsert_findings(conn, judged)
        for bid, check in sorted(sql.findings_of(conn, self.workspace)):
            if bid in final and (bid, check) not in self.applicable:   # e.g. a supersession that was undone
                sql.delete_finding(conn, self.workspace, bid, check)
        current = sum(1 for r in final.values() if r["superseded_at"] is None)
        pages = list(self.pages.values())
        counts = {
            "pages": len(pages), "structural_pages": sum(sp.structural for sp in pages),
            "pages_skipped": sum(sp.skipped for sp in pages), "sidecars": len(tree.sidecars),
            "footnotes": len(self.footnotes), "quote_anchors": len(self.provenance),
            "raw_sources": sum(1 for d in wanted.values() if d["kind"] == "raw_source"),
            "documents_new": docs_new, "documents_changed": docs_changed, "documents_removed": len(gone_docs),
            "beliefs": len(final), "beliefs_current": current, "beliefs_superseded": len(final) - current,
            "beliefs_new": len(inserted), "beliefs_updated": len(updated), "beliefs_removed": len(removed),
            "judge": self.judge.name,
        }
        counts.update(sorted(self.counts.items()))
        return counts


class WikiImport:
    """Stage ``wiki``: one wiki workspace directory, verified then committed whole."""

    name = "wiki"
    title = "wiki import"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        check_namespace(ctx)
        root = Path(ctx.inputs["wiki_root"]).expanduser().resolve()
        workspace = ctx.inputs.get("workspace") or ctx.config.beliefs.default_workspace
        judge = ctx.inputs.get("judge") or NoJudge()
        if isinstance(judge, ModelJudgeRequest):
            from kenning.llm.client import open_llm_run

            with open_llm_run(ctx, "wiki_verifier") as llm:
                counts = _Run(ctx, root, workspace, LLMJudge(llm), bool(ctx.inputs.get("rebuild"))).run()
        else:
            counts = _Run(ctx, root, workspace, judge, bool(ctx.inputs.get("rebuild"))).run()
        return {"workspace": workspace, "root": str(root), **counts}
