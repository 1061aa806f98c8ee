"""Wiki workspaces (seed 002): markdown pages with footnotes citing files under ``raw/``, and
``*.beliefs.json`` sidecars beside the pages. Parsing only — no database, no verdicts.

Layout (workspace root)::

    wiki/topics/auth.md              the page: prose, headings, footnote references [^2]
    wiki/topics/auth.beliefs.json    the sidecar: {"page": "wiki/topics/auth.md", "beliefs": [...]}
    raw/papers/acme-rfc-0034.md      a cited source

A footnote definition is a citation with verbatim quote anchors (docs/decisions.md W3)::

    [^2]: [RFC 0034](raw/papers/acme-rfc-0034.md), p. 3: "v2 moves the refresh endpoint …" <!-- prov:prov-acme-rfc-0034-3 -->
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FOOTNOTE_DEF = re.compile(r"^\s{0,3}\[\^([^\]\s]+)\]:\s?(.*)$")
_FOOTNOTE_REF = re.compile(r"\[\^([^\]\s]+)\](?!:)")
_RAW_PATH = re.compile(r"(?:^|[\s(<\[])((?:\./)?raw/[^\s)>\]\"“”<]+)")
_PAGE_HINT = re.compile(r"\b(?:p\.|pp\.|page|pg\.)\s*(\d+)", re.IGNORECASE)
_QUOTE = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”")
_PROV_MARK = re.compile(r"\s*<!--\s*prov:\s*([^\s>]+?)\s*-->")
_ANY_PROV_MARK = re.compile(r"<!--\s*prov:\s*([^\s>]+?)\s*-->")
_TRAILING = ".,;:"


@dataclass(frozen=True)
class QuoteRef:
    quote: str
    provenance_id: str
    explicit_id: bool


@dataclass
class Footnote:
    key: str
    line: int
    text: str
    raw_path: str | None
    page_hint: int | None
    quotes: list[QuoteRef]
    stray_prov_marks: list[str] = field(default_factory=list)


@dataclass
class WikiPage:
    path: str                      # workspace-relative POSIX path, e.g. wiki/topics/auth.md
    title: str | None
    anchors: list[str]
    footnotes: dict[str, Footnote]
    references: Counter
    duplicate_footnotes: list[str]
    sha256: str
    size: int

    @property
    def cited(self) -> bool:
        return bool(self.references) or bool(self.footnotes)


@dataclass
class Sidecar:
    path: str                      # workspace-relative path of the .beliefs.json file
    page: str                      # the page it sits beside (by file name)
    data: dict[str, Any] | None    # parsed JSON, or None when it could not be read
    error: str | None
    sha256: str | None


@dataclass
class WikiTree:
    root: Path
    pages: dict[str, WikiPage]
    sidecars: dict[str, Sidecar]   # by the page path they sit beside
    orphan_sidecars: list[Sidecar]
    unreadable_pages: dict[str, str]


def slugify(heading: str) -> str:
    """GitHub-style heading anchor: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"[*_`~]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", text)
    text = unicodedata.normalize("NFC", text).strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def default_provenance_id(page_path: str, key: str, index: int) -> str:
    """The id of a quote without a ``<!-- prov:ID -->`` marker: page path, footnote, quote number."""
    return f"{page_path}#fn{key}" + (f".{index + 1}" if index else "")


def parse_footnote(page_path: str, key: str, line: int, text: str, raw_dir: str) -> Footnote:
    quotes: list[QuoteRef] = []
    used: list[tuple[int, int]] = []
    for i, m in enumerate(_QUOTE.finditer(text)):
        q = m.group(1) if m.group(1) is not None else m.group(2)
        mark = _PROV_MARK.match(text, m.end())
        if mark:
            quotes.append(QuoteRef(q, mark.group(1), True))
            used.append(mark.span(1))
        else:
            quotes.append(QuoteRef(q, default_provenance_id(page_path, key, i), False))
    stray = [m.group(1) for m in _ANY_PROV_MARK.finditer(text) if m.span(1) not in used]
    outside = _QUOTE.sub(" ", text)
    raw_path = None
    for m in _RAW_PATH.finditer(outside):
        cand = m.group(1).rstrip(_TRAILING)
        if cand.startswith("./"):
            cand = cand[2:]
        if cand.startswith(raw_dir.rstrip("/") + "/"):
            raw_path = cand
            break
    hint = _PAGE_HINT.search(outside)
    return Footnote(key, line, text, raw_path, int(hint.group(1)) if hint else None, quotes, stray)


def parse_page(page_path: str, data: bytes, raw_dir: str) -> WikiPage:
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    title = None
    anchors: list[str] = []
    seen_slugs: Counter = Counter()
    footnotes: dict[str, Footnote] = {}
    duplicates: list[str] = []
    refs: Counter = Counter()
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r")
        fm = _FENCE.match(line)
        if fence is not None:
            s = line.strip()
            if s and set(s) == {fence[0]} and len(s) >= len(fence):
                fence = None
            i += 1
            continue
        if fm:
            fence = fm.group(1)
            i += 1
            continue
        dm = _FOOTNOTE_DEF.match(line)
        if dm:
            key, body = dm.group(1), [dm.group(2).strip()]
            start = i + 1
            j = i + 1
            while j < len(lines):
                nxt = lines[j].rstrip("\r")
                if nxt.startswith(("    ", "\t")) and nxt.strip():
                    body.append(nxt.strip())
                    j += 1
                elif not nxt.strip() and j + 1 < len(lines) and lines[j + 1].startswith(("    ", "\t")) \
                        and lines[j + 1].strip():
                    j += 1
                else:
                    break
            joined = " ".join(b for b in body if b)
            if key in footnotes:
                duplicates.append(key)
            else:
                footnotes[key] = parse_footnote(page_path, key, start, joined, raw_dir)
            i = j
            continue
        hm = _HEADING.match(line)
        if hm:
            heading = hm.group(2)
            if title is None and len(hm.group(1)) == 1:
                title = heading.strip()
            slug = slugify(heading)
            n = seen_slugs[slug]
            seen_slugs[slug] += 1
            anchors.append("#" + (slug if n == 0 else f"{slug}-{n}"))
        for rm in _FOOTNOTE_REF.finditer(line):
            refs[rm.group(1)] += 1
        i += 1
    return WikiPage(page_path, title, anchors, footnotes, refs, duplicates,
                    hashlib.sha256(data).hexdigest(), len(data))


def parse_sidecar(sidecar_path: str, page_path: str, data: bytes) -> Sidecar:
    sha = hashlib.sha256(data).hexdigest()
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        return Sidecar(sidecar_path, page_path, None, f"not valid JSON: {e}", sha)
    if not isinstance(obj, dict) or not isinstance(obj.get("beliefs"), list):
        return Sidecar(sidecar_path, page_path, None, 'expected an object with a "beliefs" array', sha)
    return Sidecar(sidecar_path, page_path, obj, None, sha)


def rel(root: Path, p: Path) -> str:
    return PurePosixPath(p.relative_to(root).as_posix()).as_posix()


def find_root(path: str | Path, wiki_dir: str = "wiki") -> Path | None:
    """The workspace root for ``path``: a folder holding ``wiki/`` (or ``path`` itself being that ``wiki/``)."""
    p = Path(path).expanduser()
    if not p.is_dir() or (p / "conversations.json").is_file():
        return None
    if (p / wiki_dir).is_dir():
        return p
    if p.name == wiki_dir and p.parent.is_dir():
        return p.parent
    return None


def is_wiki_workspace(path: str | Path, wiki_dir: str = "wiki", sidecar_suffix: str = ".beliefs.json") -> bool:
    root = find_root(path, wiki_dir)
    if root is None:
        return False
    base = root / wiki_dir
    return any(base.rglob("*.md")) or any(base.rglob("*" + sidecar_suffix))


def _listing(base: Path, prefix: str, suffix: str) -> dict[str, Path]:
    """Files under ``base`` ending in ``suffix``, by their workspace-relative path (``prefix`` + path under base)."""
    return {prefix + f.relative_to(base).as_posix(): f for f in base.rglob("*" + suffix) if f.is_file()}


def scan(root: Path, wiki_dir: str, raw_dir: str, sidecar_suffix: str) -> WikiTree:
    """Every page and sidecar under ``root/wiki_dir``, in path order."""
    return scan_overlay(root, wiki_dir, raw_dir, sidecar_suffix, None)


def scan_overlay(root: Path, wiki_dir: str, raw_dir: str, sidecar_suffix: str, overlay: Path | None) -> WikiTree:
    """As `scan`, with the files under ``overlay`` (a folder mirroring ``wiki_dir``, e.g. a run's ``staged/``)
    read in place of their namesakes — the wiki as it would be once the run commits."""
    base = root / wiki_dir
    prefix = wiki_dir.rstrip("/") + "/"
    page_files = _listing(base, prefix, ".md")
    sidecar_files = _listing(base, prefix, sidecar_suffix)
    if overlay is not None and overlay.is_dir():
        page_files.update(_listing(overlay, prefix, ".md"))
        sidecar_files.update(_listing(overlay, prefix, sidecar_suffix))
    pages: dict[str, WikiPage] = {}
    unreadable: dict[str, str] = {}
    for path in sorted(page_files):
        try:
            pages[path] = parse_page(path, page_files[path].read_bytes(), raw_dir)
        except OSError as e:
            unreadable[path] = e.strerror or str(e)
    sidecars: dict[str, Sidecar] = {}
    orphans: list[Sidecar] = []
    for path in sorted(sidecar_files):
        page = path[: -len(sidecar_suffix)] + ".md"
        try:
            sc = parse_sidecar(path, page, sidecar_files[path].read_bytes())
        except OSError as e:
            sc = Sidecar(path, page, None, f"cannot be read: {e.strerror}", None)
        if page in pages:
            sidecars[page] = sc
        else:
            orphans.append(sc)
    return WikiTree(root, pages, sidecars, orphans, unreadable)
