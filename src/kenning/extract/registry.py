"""The versioned rule registries of stage 4 (seed 001 §4.4.3, §4.7.3) and the predicate vocabulary (§4.6.4).

Both live in YAML shipped with the package (``patterns.yaml``, ``predicates.yaml``, named in
``assertions.pattern_registry`` / ``assertions.predicate_vocabulary``; a path to your own file works too). This
module loads them once, expands the ``${MACRO}`` references, compiles every regex, and computes the content
hashes that make up the extractor version (docs/decisions.md A1).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kenning.config.loader import load_yaml
from kenning.sources.jcs import canonicalize

# Bump when the extraction code changes behaviour in a way the registries don't show.
EXTRACTOR_CODE_VERSION = "stage4-rules-1"

HANDLERS = ("relation", "kin", "children", "favorite")
RETRACTION_TARGETS = ("previous_statement", "previous_clause", "about", "replace_object")
MODALITIES = ("state", "fact", "preference", "intention", "question")
_MACRO = re.compile(r"\$\{([A-Z_]+)(?::([a-z_]+))?\}")


class RegistryError(ValueError):
    """A registry file that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Pattern:
    id: str
    priority: int
    confidence: float
    handler: str
    predicate: str | None
    modality: str
    polarity: str
    regex: re.Pattern | None             # free patterns: searched over the whole text
    vp_regex: re.Pattern | None          # clause patterns (${SUBJ}${PRE}…): the verb phrase, matched after a subject
    triggers: frozenset[str]
    spec: dict                           # the YAML entry as written
    sha: str                             # sha256 of the entry's JCS: goes into the assertions it makes
    exclusive: str

    def flag(self, name: str, default: Any = None) -> Any:
        return self.spec.get(name, default)

    @property
    def is_clause(self) -> bool:
        return self.vp_regex is not None


@dataclass(frozen=True)
class RetractionPattern:
    id: str
    type: str
    confidence: float
    target: str
    regex: re.Pattern
    triggers: frozenset[str]
    sha: str


@dataclass(frozen=True)
class Modifier:
    id: str
    effect: str
    regex: re.Pattern
    subjects: frozenset[str] = frozenset({"first", "second", "third"})


@dataclass
class Registry:
    version: int
    sha256: str
    patterns: list[Pattern]
    retractions: list[RetractionPattern]
    modifiers: list[Modifier]
    lists: dict[str, Any]
    macros: dict[str, str] = field(repr=False)
    subj_regex: re.Pattern | None = None      # ${SUBJ}, matched at each possible subject start
    pre_token_regex: re.Pattern | None = None  # one pre-verb word (${PREWORD}) with its leading blank
    contraction_regex: re.Pattern | None = None
    cont_regex: re.Pattern | None = None       # "and" / "but" before a continued verb phrase

    def word_set(self, name: str) -> frozenset[str]:
        return frozenset(str(x).lower() for x in self.lists.get(name, []))


@dataclass(frozen=True)
class PredicateDef:
    label: str
    label_norm: str
    inverse: str | None
    category: str | None
    arity: int
    value_type: str | None
    aliases: tuple[str, ...]
    raw: dict


@dataclass
class Vocabulary:
    version: int
    sha256: str
    by_norm: dict[str, PredicateDef]
    alias_to_norm: dict[str, str]

    def lookup(self, label_norm: str) -> PredicateDef | None:
        """The vocabulary entry for a normalized label or one of its aliases."""
        norm = self.alias_to_norm.get(label_norm, label_norm)
        return self.by_norm.get(norm)


def normalize_label(label: str) -> tuple[str, str]:
    """§4.6.4: NFKC, trimmed, internal whitespace collapsed → (canonical_label, canonical_label_norm)."""
    canonical = " ".join(unicodedata.normalize("NFKC", label).split())
    return canonical, canonical.lower()


def _read(name_or_path: str) -> tuple[str, str]:
    """(text, origin) of a package resource in kenning.extract, or of a file path."""
    p = Path(name_or_path).expanduser()
    if p.is_file():
        return p.read_text(encoding="utf-8"), str(p)
    try:
        res = resources.files("kenning.extract").joinpath(name_or_path)
        return res.read_text(encoding="utf-8"), f"kenning/extract/{name_or_path}"
    except (FileNotFoundError, OSError) as e:
        raise RegistryError(f"registry file {name_or_path!r} not found (neither a file nor a packaged resource)") from e


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _expand(text: str, macros: dict[str, str], origin: str, where: str, depth: int = 0) -> str:
    if depth > 12:
        raise RegistryError(f"{origin}: macro recursion too deep in {where}")

    def sub(m: re.Match) -> str:
        name, group = m.group(1), m.group(2)
        if name not in macros:
            raise RegistryError(f"{origin}: {where} uses an unknown macro ${{{name}}}")
        body = _expand(macros[name], macros, origin, f"macro {name}", depth + 1)
        if group:
            body = body.replace("(?P<obj>", f"(?P<{group}>")
        return body

    return _MACRO.sub(sub, text)


def _compile(src: str, origin: str, where: str) -> re.Pattern:
    try:
        return re.compile(src)
    except re.error as e:
        raise RegistryError(f"{origin}: {where}: invalid regex: {e}") from e


_CONT_PREFIX = r"(?:[ \t]*,)?[ \t]+(?:and[ \t]+also|but[ \t]+also|and|but|&)(?=[ \t])"
_CLAUSE = "${SUBJ}${PRE}"


def _no_yaml_booleans_in_lists(x: Any, origin: str, path: str = "") -> None:
    """YAML reads a bare yes/no/on/off/true/false as a boolean; in a word list that is always a mistake."""
    if isinstance(x, dict):
        for k, v in x.items():
            _no_yaml_booleans_in_lists(v, origin, f"{path}/{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            if isinstance(v, bool):
                raise RegistryError(f"{origin}: {path}[{i}] is a YAML boolean; quote words like \"on\", \"no\", "
                                    "\"yes\", \"off\" in lists")
            _no_yaml_booleans_in_lists(v, origin, f"{path}[{i}]")


def load_registry_text(text: str, origin: str = "<patterns>") -> Registry:
    try:
        data = load_yaml(text) or {}
    except yaml.YAMLError as e:
        raise RegistryError(f"{origin} is not valid YAML: {e}") from e
    _no_yaml_booleans_in_lists(data, origin)
    macros = {str(k): str(v) for k, v in (data.get("macros") or {}).items()}
    lists = data.get("lists") or {}
    patterns: list[Pattern] = []
    seen: set[str] = set()
    for i, spec in enumerate(data.get("patterns") or []):
        pid = spec.get("id")
        where = f"pattern #{i} ({pid})"
        if not pid or pid in seen:
            raise RegistryError(f"{origin}: {where}: every pattern needs a unique id")
        seen.add(pid)
        handler = spec.get("handler")
        if handler not in HANDLERS:
            raise RegistryError(f"{origin}: {where}: handler must be one of {', '.join(HANDLERS)}")
        modality = spec.get("modality", "state")
        if modality not in MODALITIES:
            raise RegistryError(f"{origin}: {where}: modality must be one of {', '.join(MODALITIES)}")
        conf = float(spec.get("confidence", -1))
        if not 0 <= conf <= 1:
            raise RegistryError(f"{origin}: {where}: confidence must be in [0, 1]")
        raw = str(spec.get("regex") or "")
        rx = vp = None
        if raw.startswith(_CLAUSE):
            vp = _compile(_expand(raw[len(_CLAUSE):], macros, origin, where), origin, where)
        else:
            rx = _compile(_expand(raw, macros, origin, where), origin, where)
        patterns.append(Pattern(
            id=pid, priority=int(spec.get("priority", 100)), confidence=conf, handler=handler,
            predicate=spec.get("predicate"), modality=modality, polarity=spec.get("polarity", "positive"),
            regex=rx, vp_regex=vp, triggers=frozenset(str(t).lower() for t in spec.get("triggers") or []),
            spec=spec, sha=_sha(canonicalize(spec))[:16], exclusive=spec.get("exclusive") or spec.get("predicate") or pid))
    patterns.sort(key=lambda p: (p.priority, p.id))
    retractions: list[RetractionPattern] = []
    for i, spec in enumerate(data.get("retractions") or []):
        rid = spec.get("id")
        where = f"retraction #{i} ({rid})"
        if not rid or rid in seen:
            raise RegistryError(f"{origin}: {where}: every retraction pattern needs a unique id")
        seen.add(rid)
        if spec.get("type") not in ("full", "correction", "temporal_bound"):
            raise RegistryError(f"{origin}: {where}: type must be full, correction or temporal_bound")
        if spec.get("target") not in RETRACTION_TARGETS:
            raise RegistryError(f"{origin}: {where}: target must be one of {', '.join(RETRACTION_TARGETS)}")
        retractions.append(RetractionPattern(
            id=rid, type=spec["type"], confidence=float(spec.get("confidence", 0.8)), target=spec["target"],
            regex=_compile(_expand(str(spec.get("regex") or ""), macros, origin, where), origin, where),
            triggers=frozenset(str(t).lower() for t in spec.get("triggers") or []),
            sha=_sha(canonicalize(spec))[:16]))
    modifiers = []
    for i, spec in enumerate(data.get("modifiers") or []):
        where = f"modifier #{i} ({spec.get('id')})"
        if spec.get("effect") not in ("drop", "hedge"):
            raise RegistryError(f"{origin}: {where}: effect must be drop or hedge")
        modifiers.append(Modifier(spec["id"], spec["effect"],
                                  _compile(_expand(spec["regex"], macros, origin, where), origin, where),
                                  frozenset(spec.get("subjects") or ("first", "second", "third"))))
    reg = Registry(version=int(data.get("version", 0)), sha256=_sha(text), patterns=patterns,
                   retractions=retractions, modifiers=modifiers, lists=lists, macros=macros)
    if "SUBJ" in macros and "PREWORD" in macros:
        reg.subj_regex = _compile(_expand("${SUBJ}", macros, origin, "macro SUBJ"), origin, "macro SUBJ")
        reg.pre_token_regex = _compile(r"[ \t]+" + _expand("${PREWORD}", macros, origin, "macro PREWORD")
                                       + r"\b(?!['’])", origin, "macro PREWORD")
        reg.contraction_regex = re.compile(r"['’](?:m|re|s|ve|d|ll)\b")
        reg.cont_regex = re.compile(_CONT_PREFIX)
    return reg


def load_vocabulary_text(text: str, origin: str = "<predicates>") -> Vocabulary:
    try:
        data = load_yaml(text) or {}
    except yaml.YAMLError as e:
        raise RegistryError(f"{origin} is not valid YAML: {e}") from e
    by_norm: dict[str, PredicateDef] = {}
    alias_to_norm: dict[str, str] = {}
    for i, spec in enumerate(data.get("predicates") or []):
        if not spec.get("label"):
            raise RegistryError(f"{origin}: predicate #{i} needs a label")
        label, norm = normalize_label(str(spec["label"]))
        if norm in by_norm:
            raise RegistryError(f"{origin}: predicate {label!r} is listed twice")
        arity = int(spec.get("arity", 2))
        if arity not in (1, 2, 3):
            raise RegistryError(f"{origin}: predicate {label!r}: arity must be 1, 2 or 3")
        aliases = tuple(normalize_label(str(a))[1] for a in spec.get("aliases") or [])
        by_norm[norm] = PredicateDef(label, norm, spec.get("inverse"), spec.get("category"), arity,
                                     spec.get("value_type"), aliases, spec)
        for a in aliases:
            alias_to_norm.setdefault(a, norm)
    for a in list(alias_to_norm):
        if a in by_norm:  # a real label always wins over another label's alias
            del alias_to_norm[a]
    return Vocabulary(int(data.get("version", 0)), _sha(text), by_norm, alias_to_norm)


@lru_cache(maxsize=8)
def _registry_cached(name: str, text_sha: str, text: str, origin: str) -> Registry:
    return load_registry_text(text, origin)


@lru_cache(maxsize=8)
def _vocab_cached(name: str, text_sha: str, text: str, origin: str) -> Vocabulary:
    return load_vocabulary_text(text, origin)


def load_registry(name_or_path: str) -> Registry:
    text, origin = _read(name_or_path)
    return _registry_cached(name_or_path, _sha(text), text, origin)


def load_vocabulary(name_or_path: str) -> Vocabulary:
    text, origin = _read(name_or_path)
    return _vocab_cached(name_or_path, _sha(text), text, origin)


def extractor_version(registry: Registry, vocabulary: Vocabulary, extra: dict | None = None) -> str:
    """The stage-4 extractor version: code version + registry and vocabulary content hashes (+ LLM prompt/schema
    versions when the model is used). Short, stable, and different whenever any input to extraction changes."""
    parts = {"code": EXTRACTOR_CODE_VERSION, "patterns": registry.sha256, "patterns_version": registry.version,
             "predicates": vocabulary.sha256, "predicates_version": vocabulary.version, **(extra or {})}
    return f"{EXTRACTOR_CODE_VERSION}#{_sha(canonicalize(parts))[:12]}"
