"""`kenning wiki stage` (seed 002 "At write time"): a new raw source becomes a workspace run.

With a model, the guardian reads the source beside the wiki's current beliefs and answers with an edit *plan*
(prompt ``wiki_guardian_v1``, schema beside it); Kenning writes the staged pages, footnotes with verbatim quote
anchors, ``::: disputed`` blocks and sidecars from that plan (W64–W66), so the markdown is always well formed and
every quote is checked against the source before it is staged. Without a model (or with ``--manual``) the run
gets copies of the pages for a person to edit (W61). Either way nothing outside ``runs/<run_id>/`` changes.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import orjson
from pydantic import BaseModel

from kenning.beliefs.quotes import decode_raw
from kenning.beliefs.timeutil import TimeValueError, parse_valid_time
from kenning.beliefs.wiki_run import RUN_FILE, RunFolderError, file_sha256, read_json, run_id_for, write_json
from kenning.pipeline.runner import StageContext
from kenning.sources import wiki as wikisrc
from kenning.sources.jcs import jcs_hash

RELATIONS = ("new", "supports", "refines", "contradicts", "disputes")
# the supersession each relation records on its target (seed 002 "The supersession workflow")
SUPERSEDES = {"refines": "elaborated", "contradicts": "contradicted_by_new_source"}
_DEF_KEY = re.compile(r"^\s{0,3}\[\^([^\]\s]+)\]:", re.M)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


class GuardianClaim(BaseModel):
    page: str
    section: str
    statement: str
    quote: str
    topic: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    relation: Literal["new", "supports", "refines", "contradicts", "disputes"]
    target_belief_id: str | None = None
    source_valid_from: str | None = None
    source_valid_to: str | None = None


class GuardianPlan(BaseModel):
    claims: list[GuardianClaim]


def schema_text() -> str:
    return json.dumps(GuardianPlan.model_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def check_schema_file(config: Any) -> None:
    """The pinned schema file must equal the code's schema (a schema change is a new prompt version)."""
    from kenning.llm.errors import PromptError

    name = config.beliefs.write_path.guardian_prompt
    fname = f"{name}_v{int(config.llm.prompt_versions[name])}.schema.json"
    text = resources.files("kenning.llm").joinpath("prompts", fname).read_text(encoding="utf-8")
    if json.loads(text) != json.loads(schema_text()):
        raise PromptError(f"{fname} does not match kenning.beliefs.wiki_stage.GuardianPlan; a schema change needs "
                          "a new prompt version")


class StageError(ValueError):
    """A problem with what the user asked to stage; one line."""


# ---- the wiki as the guardian edits it ---------------------------------------------------------------------
@dataclass
class PageDraft:
    path: str
    text: str
    sidecar: dict
    changed: bool = False

    def belief(self, bid: str) -> dict | None:
        return next((b for b in self.sidecar["beliefs"] if b.get("belief_id") == bid), None)


@dataclass
class Drafts:
    root: Path
    wiki_dir: str
    suffix: str
    pages: dict[str, PageDraft] = field(default_factory=dict)

    def get(self, path: str) -> PageDraft:
        if path not in self.pages:
            f = self.root / path
            text = f.read_text(encoding="utf-8") if f.is_file() else f"# {_title_of(path)}\n"
            sc_file = self.root / (path[:-3] + self.suffix)
            sidecar = read_json(sc_file) if sc_file.is_file() else None
            if not isinstance(sidecar, dict) or not isinstance(sidecar.get("beliefs"), list):
                sidecar = {"page": path, "beliefs": []}
            self.pages[path] = PageDraft(path, text, sidecar)
        return self.pages[path]


def _title_of(path: str) -> str:
    return PurePosixPath(path).stem.replace("-", " ").replace("_", " ").title()


def live_beliefs(root: Path, config: Any) -> dict[str, dict]:
    """Every belief of the live sidecars, with the page it sits on (``_page``)."""
    wcfg = config.beliefs.wiki
    tree = wikisrc.scan(root, wcfg.wiki_dir, wcfg.raw_dir, wcfg.sidecar_suffix)
    out: dict[str, dict] = {}
    for page, sc in tree.sidecars.items():
        for b in (sc.data or {}).get("beliefs") or []:
            if isinstance(b, dict) and isinstance(b.get("belief_id"), str):
                out[b["belief_id"]] = {**b, "_page": page}
    return out


def footnote_keys(text: str) -> set[str]:
    return set(_DEF_KEY.findall(text))


def next_footnote_key(text: str) -> str:
    used = [int(k) for k in footnote_keys(text) | set(wikisrc._FOOTNOTE_REF.findall(text)) if k.isdigit()]
    return str(max(used, default=0) + 1)


def _body_end(lines: list[str]) -> int:
    """Index of the first footnote definition line (where the body ends)."""
    for i, line in enumerate(lines):
        if wikisrc._FOOTNOTE_DEF.match(line):
            return i
    return len(lines)


def insert_in_section(text: str, anchor: str, heading: str, block: str) -> str:
    """``block`` at the end of the section whose anchor is ``anchor`` (a new ``## heading`` when there is none)."""
    lines = text.split("\n")
    end = _body_end(lines)
    start = level = None
    for i, line in enumerate(lines[:end]):
        m = _HEADING.match(line)
        if m is None:
            continue
        if start is not None and len(m.group(1)) <= level:
            end = i
            break
        if start is None and "#" + wikisrc.slugify(m.group(2)) == anchor:
            start, level = i, len(m.group(1))
    new = block.split("\n")
    if start is None:
        new = [f"## {heading}", ""] + new
    gap = end
    while gap > 0 and not lines[gap - 1].strip():
        gap -= 1
    lines[gap:end] = ["", *new, ""] if end < len(lines) else ["", *new]
    out = "\n".join(lines)
    return out if out.endswith("\n") else out + "\n"


def add_footnote(text: str, key: str, definition: str) -> str:
    text = text.rstrip("\n") + "\n"
    last = text.rstrip("\n").split("\n")[-1]
    sep = "" if wikisrc._FOOTNOTE_DEF.match(last) else "\n"
    return f"{text}{sep}[^{key}]: {definition}\n"


def cite_after(text: str, existing_keys: list[str], key: str) -> str | None:
    """``[^key]`` after the belief's last citation in the body (the latest of its keys' first references), where
    its sentence ends; None when the body cites none of them."""
    ends = [m.end() for k in existing_keys for m in [re.search(r"\[\^" + re.escape(k) + r"\](?!:)", text)] if m]
    if not ends:
        return None
    at = max(ends)
    while text.startswith("[^", at) and "]" in text[at:]:   # after a run of adjacent references
        at = text.index("]", at) + 1
    return text[:at] + f"[^{key}]" + text[at:]


def quoted(quote: str) -> str | None:
    """The quote in the footnote's quote marks (straight, or curly when it holds a straight one)."""
    if "\n" in quote or "\r" in quote:
        return None
    if '"' not in quote:
        return f'"{quote}"'
    if "“" not in quote and "”" not in quote:
        return f"“{quote}”"
    return None


def with_ref(statement: str, key: str) -> str:
    return f"{statement.rstrip()}[^{key}]"


# ---- applying a plan --------------------------------------------------------------------------------------
@dataclass
class Applied:
    drafts: Drafts
    staged: list[dict] = field(default_factory=list)     # what each accepted claim did
    dropped: list[dict] = field(default_factory=list)    # claims that could not be staged, and why
    notes: list[dict] = field(default_factory=list)      # claims staged otherwise than the guardian said


def _superseded(b: dict) -> bool:
    return bool(b.get("superseded_at") or b.get("superseded_by_belief_id"))


def same_subject_predicate(c: GuardianClaim, current: dict[str, dict], drafts: Drafts, res: "Applied",
                           n: int) -> tuple[str, dict | None]:
    """Seed 002 "Apply supersession for any existing belief on the same (subject, predicate)": a claim the guardian
    calls new but that shares its subject and predicate with exactly one current belief supports it (same object)
    or supersedes it as a contradiction; with several such beliefs it stays new, with a warning (W74)."""
    if not (c.subject and c.predicate):
        return "new", None
    key = (c.subject.casefold(), c.predicate.casefold())
    same = [b for b in current.values()
            if (str(b.get("subject") or "").casefold(), str(b.get("predicate") or "").casefold()) == key
            and not _superseded(drafts.get(b["_page"]).belief(b["belief_id"]) or b)]
    if len(same) > 1:
        res.notes.append({"claim": n, "statement": c.statement, "reason": "shares subject and predicate with "
                          f"{', '.join(sorted(b['belief_id'] for b in same))}; staged as new — say which one it "
                          "replaces, if any"})
        return "new", None
    if not same:
        return "new", None
    t = same[0]
    relation = "supports" if (c.object or "").casefold() == str(t.get("object") or "").casefold() else "contradicts"
    res.notes.append({"claim": n, "statement": c.statement, "reason": f"the guardian said new; it shares subject and "
                      f"predicate with {t['belief_id']}, so it {relation} it"})
    return relation, t


def apply_plan(plan: GuardianPlan, *, root: Path, config: Any, run_id: str, now: str, source_text: str,
               source_raw_path: str, source_title: str) -> Applied:
    """Write the plan into page drafts: footnotes, prose, disputed blocks and sidecar supersessions."""
    wcfg = config.beliefs.wiki
    drafts = Drafts(root, wcfg.wiki_dir.rstrip("/"), wcfg.sidecar_suffix)
    res = Applied(drafts)
    current = live_beliefs(root, config)
    structural = set(wcfg.structural_pages)
    for n, c in enumerate(plan.claims, start=1):
        def drop(why: str, c=c) -> None:
            res.dropped.append({"claim": n, "statement": c.statement, "reason": why})

        relation = c.relation
        target = current.get(c.target_belief_id or "") if relation != "new" else None
        if relation != "new" and target is None:
            drop(f"{relation} names target_belief_id {c.target_belief_id!r}, which is no belief of the wiki")
            continue
        if relation == "new":
            relation, target = same_subject_predicate(c, current, drafts, res, n)
        if target is not None and _superseded(drafts.get(target["_page"]).belief(target["belief_id"]) or target):
            drop(f"target {target['belief_id']} is already superseded")
            continue
        page = target["_page"] if relation in ("supports", "contradicts", "disputes") else c.page
        parts = PurePosixPath(page).parts
        if (not page.endswith(".md") or parts[:1] != (drafts.wiki_dir,) or ".." in parts
                or PurePosixPath(page).name in structural):
            drop(f"page {page!r} is not a content page under {drafts.wiki_dir}/")
            continue
        if not c.statement.strip() or len(c.statement) > config.beliefs.statement_max_chars:
            drop(f"statement is empty or longer than {config.beliefs.statement_max_chars} characters")
            continue
        if not c.quote.strip() or c.quote not in source_text:
            drop("the quote is not a verbatim passage of the source")
            continue
        q = quoted(c.quote)
        if q is None:
            drop("the quote spans lines or mixes quote marks")
            continue
        valid: dict[str, str | None] = {}
        try:
            for name in ("source_valid_from", "source_valid_to"):
                v = getattr(c, name)
                valid[name] = parse_valid_time(v, name) if v else None
        except TimeValueError as e:
            drop(str(e))
            continue
        d = drafts.get(page)
        key = next_footnote_key(d.text)
        pid = f"prov-{run_id}-{n}"
        d.text = add_footnote(d.text, key, f"[{source_title}]({source_raw_path}): {q} <!-- prov:{pid} -->")
        done = {"claim": n, "relation": relation, "page": page, "footnote": key, "provenance_id": pid}
        if relation == "supports":
            t = d.belief(target["belief_id"])
            cited = cite_after(d.text, [str(k) for k in t.get("footnote_ids", [])], key)
            if cited is not None:
                d.text = cited
                t["footnote_ids"] = [*t.get("footnote_ids", []), key]
                t["provenance_ids"] = [*t.get("provenance_ids", []), pid]
                d.changed = True
                res.staged.append({**done, "belief_id": t["belief_id"]})
                continue
        bid = f"b-{now[:10]}-{jcs_hash([run_id, page, c.statement])[:10]}"
        anchor = target["wiki_section_anchor"] if relation in ("contradicts", "disputes") else \
            "#" + wikisrc.slugify(c.section)
        belief = {"belief_id": bid, "statement": c.statement, "topic": c.topic, "subject": c.subject,
                  "predicate": c.predicate, "object": c.object, "wiki_section_anchor": anchor,
                  "footnote_ids": [key], "provenance_ids": [pid], "asserted_at": now, **valid}
        if relation in ("contradicts", "disputes"):
            old_keys = [str(k) for k in target.get("footnote_ids", [])]
            block = (f"::: disputed\n{with_ref(c.statement, key)} Earlier the wiki said: "
                     f"{with_ref(target['statement'], old_keys[0]) if old_keys else target['statement']}\n:::")
            d.text = insert_in_section(d.text, anchor, c.section, block)
        else:
            d.text = insert_in_section(d.text, anchor, c.section, with_ref(c.statement, key))
        if relation == "disputes":
            belief["contradicting_belief_ids"] = [target["belief_id"]]
        if relation in SUPERSEDES:
            old_page = drafts.get(target["_page"])
            old = old_page.belief(target["belief_id"])
            old.update({"superseded_at": now, "superseded_by_belief_id": bid,
                        "supersession_reason": SUPERSEDES[relation]})
            old_page.changed = True
        d.sidecar["beliefs"].append({k: v for k, v in belief.items() if v is not None})
        d.changed = True
        res.staged.append({**done, "belief_id": bid})
    return res


def write_drafts(drafts: Drafts, staged: Path) -> list[str]:
    """The changed drafts into ``staged/`` (mirroring wiki/): page and sidecar."""
    written = []
    for path, d in sorted(drafts.pages.items()):
        if not d.changed:
            continue
        rel = PurePosixPath(path).relative_to(drafts.wiki_dir)
        page_file = staged / rel
        page_file.parent.mkdir(parents=True, exist_ok=True)
        page_file.write_text(d.text, encoding="utf-8")
        sc_file = staged / (str(rel)[:-3] + drafts.suffix)
        sc_file.write_bytes(orjson.dumps(d.sidecar, option=orjson.OPT_INDENT_2) + b"\n")
        written += [path, path[:-3] + drafts.suffix]
    return written


# ---- the guardian's request -------------------------------------------------------------------------------
def guardian_variables(root: Path, config: Any, source_raw_path: str, source_text: str) -> dict[str, Any]:
    wcfg, wp = config.beliefs.wiki, config.beliefs.write_path
    tree = wikisrc.scan(root, wcfg.wiki_dir, wcfg.raw_dir, wcfg.sidecar_suffix)
    structural = set(wcfg.structural_pages)
    pages = [{"page": p, "sections": [a for a in pg.anchors]} for p, pg in tree.pages.items()
             if PurePosixPath(p).name not in structural]
    beliefs = [{"belief_id": b["belief_id"], "page": b["_page"], "section": b.get("wiki_section_anchor"),
                "statement": b.get("statement"), "topic": b.get("topic"), "subject": b.get("subject"),
                "predicate": b.get("predicate"), "object": b.get("object")}
               for b in live_beliefs(root, config).values()
               if not (b.get("superseded_at") or b.get("superseded_by_belief_id"))][:wp.max_beliefs_in_prompt]
    return {"source_path": source_raw_path, "source_text": source_text[:wp.max_source_chars],
            "pages": "\n".join(json.dumps(p, ensure_ascii=False, sort_keys=True) for p in pages) or "(none)",
            "beliefs": "\n".join(json.dumps(b, ensure_ascii=False, sort_keys=True) for b in beliefs) or "(none)"}


def source_title(raw_path: str, text: str) -> str:
    for line in text.split("\n")[:20]:
        m = _HEADING.match(line)
        if m and m.group(2).strip():
            return m.group(2).strip().replace("[", "(").replace("]", ")")
    return PurePosixPath(raw_path).name


# ---- the stage ----------------------------------------------------------------------------------------------
class WikiStage:
    """Side stage ``wiki-stage``: one new source → ``runs/<run_id>/`` (guardian-drafted, or a manual skeleton)."""

    name = "wiki-stage"
    title = "stage a wiki edit"

    def run(self, ctx: StageContext) -> dict[str, Any]:
        i, config = ctx.inputs, ctx.config
        wcfg, wp = config.beliefs.wiki, config.beliefs.write_path
        root: Path = i["root"]
        source = Path(i["source"]).expanduser().resolve()
        if not source.is_file():
            raise StageError(f"--source {i['source']}: no such file")
        data = source.read_bytes()
        sha = file_sha256(source)
        raw_base = (root / wcfg.raw_dir).resolve()
        inside = source.is_relative_to(raw_base)
        dest = (f"{wcfg.raw_dir.rstrip('/')}/{source.relative_to(raw_base).as_posix()}" if inside else
                f"{wcfg.raw_dir.rstrip('/')}/{wp.inbox_dir}/{source.name}")
        if not inside and (root / dest).is_file() and file_sha256(root / dest) != sha:
            raise StageError(f"{dest} already exists in the workspace with other content; rename the source file")
        now = ctx.started_at_utc
        run_id = run_id_for(now[:10], dest, sha, now)
        run_dir = root / wp.runs_dir / run_id
        manual = bool(i.get("manual")) or ctx.llm_mode == "none"
        manifest = {"run_id": run_id, "workspace": i["workspace"], "created_at": now,
                    "mode": "manual" if manual else "guardian", "llm": ctx.llm_mode,
                    "source": {"original": str(source), "raw_path": dest, "sha256": sha, "carried": not inside}}
        old = read_json(run_dir / RUN_FILE)
        if old is not None:
            if {k: old.get(k) for k in ("run_id", "source", "mode")} != \
                    {k: manifest[k] for k in ("run_id", "source", "mode")}:
                raise RunFolderError(f"{run_dir} already holds another run")
            return {"run_id": run_id, "run_dir": str(run_dir), "already_staged": True, "mode": old["mode"]}
        text = decode_raw(data)
        try:
            counts = self._fill(ctx, root, run_dir, manifest, text, data, inside, manual)
        except BaseException:
            shutil.rmtree(run_dir, ignore_errors=True)   # a failed stage leaves no half-made run behind
            raise
        return {"run_id": run_id, "run_dir": str(run_dir), "mode": manifest["mode"], "source_raw_path": dest,
                **counts}

    def _fill(self, ctx: StageContext, root: Path, run_dir: Path, manifest: dict, text: str, data: bytes,
              inside: bool, manual: bool) -> dict[str, Any]:
        config = ctx.config
        wp = config.beliefs.write_path
        dest = manifest["source"]["raw_path"]
        staged = run_dir / wp.staged_dir
        run_dir.mkdir(parents=True, exist_ok=False)
        if not inside:
            (run_dir / dest).parent.mkdir(parents=True, exist_ok=True)
            (run_dir / dest).write_bytes(data)
        if manual:
            written = self._skeleton(ctx, root, staged)
            manifest["staged_files"] = written
            write_json(run_dir / RUN_FILE, manifest)
            return {"staged_files": len(written), "claims_staged": 0, "claims_dropped": 0}
        from kenning.llm.client import open_llm_run

        check_schema_file(config)
        with open_llm_run(ctx, "wiki_guardian") as llm:
            res = llm.structured(wp.guardian_prompt, guardian_variables(root, config, dest, text), GuardianPlan,
                                 item_key=manifest["run_id"])
        if not res.ok:
            raise StageError(f"the guardian's answer could not be used ({res.error_code}); run again, or stage "
                             "by hand with --manual")
        applied = apply_plan(res.value, root=root, config=config, run_id=manifest["run_id"], now=ctx.started_at_utc,
                             source_text=text, source_raw_path=dest, source_title=source_title(dest, text))
        for d in applied.dropped:
            ctx.warn("GUARDIAN_CLAIM_DROPPED", f"claim {d['claim']} ({d['statement'][:80]!r}): {d['reason']}", **d)
        for d in applied.notes:
            ctx.warn("GUARDIAN_CLAIM_ADJUSTED", f"claim {d['claim']} ({d['statement'][:80]!r}): {d['reason']}", **d)
        written = write_drafts(applied.drafts, staged)
        manifest.update({"staged_files": written, "plan": res.value.model_dump(), "claims": applied.staged,
                         "dropped_claims": applied.dropped, "adjusted_claims": applied.notes})
        write_json(run_dir / RUN_FILE, manifest)
        return {"staged_files": len(written), "claims_staged": len(applied.staged),
                "claims_dropped": len(applied.dropped)}

    def _skeleton(self, ctx: StageContext, root: Path, staged: Path) -> list[str]:
        """Copies of the pages (and sidecars) for a person to edit: the ``--page`` ones, else every content page."""
        wcfg = ctx.config.beliefs.wiki
        wiki_dir = wcfg.wiki_dir.rstrip("/")
        wanted = ctx.inputs.get("pages") or []
        if not wanted:
            tree = wikisrc.scan(root, wcfg.wiki_dir, wcfg.raw_dir, wcfg.sidecar_suffix)
            wanted = [p for p in tree.pages if PurePosixPath(p).name not in set(wcfg.structural_pages)]
        written = []
        for page in wanted:
            page = page if page.startswith(wiki_dir + "/") else f"{wiki_dir}/{page}"
            rel = PurePosixPath(page).relative_to(wiki_dir)
            if ".." in rel.parts or not page.endswith(".md"):
                raise StageError(f"--page {page}: not a page under {wiki_dir}/")
            for src_rel, dst in ((page, staged / rel), (page[:-3] + wcfg.sidecar_suffix,
                                                        staged / (str(rel)[:-3] + wcfg.sidecar_suffix))):
                src = root / src_rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                if src.is_file():
                    shutil.copyfile(src, dst)
                elif src_rel == page:
                    dst.write_text(f"# {_title_of(page)}\n", encoding="utf-8")
                else:
                    dst.write_bytes(orjson.dumps({"page": page, "beliefs": []}, option=orjson.OPT_INDENT_2) + b"\n")
                written.append(src_rel)
        return written
