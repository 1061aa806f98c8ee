"""Grounding (seed 001 §4.3.3–4.3.4, §4.6): the entity resolution index, subject/object resolution, predicate
canonicalization, literal normalization, temporal qualifier linking and bounds, confidence composition, keys.

Everything here is deterministic given the index, the message and the candidate; nothing reads the clock.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson

from kenning.detect.detectors import detector_tier
from kenning.detect.keys import entity_key
from kenning.extract.candidates import Candidate, ObjectRef
from kenning.extract.registry import PredicateDef, Vocabulary, normalize_label
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import canonicalize

STRONG_TYPES = frozenset({"PERSON", "ORG", "LOCATION"})
ENTITY_VALUE_TYPES = frozenset({"PERSON", "ORG", "LOCATION", "OTHER", "CUSTOM_TERM", "PRODUCT"})
SELF_WORDS = frozenset({"self", "i", "me", "my", "myself", "user", "the user"})
NONE_SIGNATURE = "N:__NONE__"


def clamp(x: float) -> float:
    return 0.0 if x < 0 else 1.0 if x > 1 else x


def sha256_hex(s: str) -> str:
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


# -- §4.3.3 the entity resolution index -----------------------------------------------------------------------------

class EntityRecord:
    __slots__ = ("entity_id", "entity_type", "entity_key", "canonical_name", "aliases", "salience_score",
                 "mention_count", "first_seen_at_utc", "last_seen_at_utc", "best_detector_tier")

    def __init__(self, entity_id, entity_type, entity_key, canonical_name, aliases, salience_score, mention_count,
                 first_seen, last_seen, best_tier):
        self.entity_id, self.entity_type, self.entity_key = entity_id, entity_type, entity_key
        self.canonical_name, self.aliases, self.salience_score = canonical_name, aliases, salience_score
        self.mention_count, self.first_seen_at_utc, self.last_seen_at_utc = mention_count, first_seen, last_seen
        self.best_detector_tier = best_tier


def _best_tier(detectors: str | None) -> int:
    if not detectors:
        return 4
    return min(detector_tier(d) for d in detectors.split(","))


class EntityIndex:
    """``entity_by_id``, ``entity_by_key``, ``entity_by_canonical_name``, ``entity_by_alias`` (lower-cased) and the
    salience-ordered list; ties break by (best_detector_tier ASC, salience DESC NULLS LAST, entity_id ASC)
    (§4.9)."""

    def __init__(self, rows, *, self_id: str):
        self.by_id: dict[str, EntityRecord] = {}
        self.by_key: dict[tuple[str, str], str] = {}
        self.by_name: dict[str, list[str]] = {}
        self.by_alias: dict[str, list[str]] = {}
        self.self_id = self_id
        for (eid, etype, key, name, aliases_json, sal, mcount, first, last, detectors) in rows:
            aliases = orjson.loads(aliases_json) if aliases_json else []
            rec = EntityRecord(eid, etype, key, name, aliases, sal, mcount, first, last, _best_tier(detectors))
            self.by_id[eid] = rec
            self.by_key[(etype, key)] = eid
            if eid == self_id:
                continue  # SELF is reached through the speaker, never by the string "SELF"
            self.by_name.setdefault(name.lower(), []).append(eid)
            for a in aliases:
                self.by_alias.setdefault(str(a).lower(), []).append(eid)
        for d in (self.by_name, self.by_alias):
            for k, ids in d.items():
                ids.sort(key=self.tie_key)
        words = set()
        for d in (self.by_name, self.by_alias):
            for k in d:
                w = k[4:] if k.startswith("the ") else k
                if w:
                    words.add(w.split()[0].rstrip("'’s") if " " in w else w)
        self.name_words = frozenset(words)
        sal = [r.salience_score for r in self.by_id.values() if r.salience_score is not None]
        self.max_salience = max(sal) if sal else 0.0
        # §4.3.4 "did you mean" order: salience DESC NULLS LAST
        self.by_salience = sorted(self.by_id, key=lambda e: (self.by_id[e].salience_score is None,
                                                             -(self.by_id[e].salience_score or 0), e))
        self._fuzzy_names: dict[frozenset, tuple[list[str], list[str]]] = {}

    def tie_key(self, eid: str) -> tuple:
        r = self.by_id[eid]
        return (r.best_detector_tier, r.salience_score is None, -(r.salience_score or 0.0), eid)

    def get(self, eid: str) -> EntityRecord | None:
        return self.by_id.get(eid)

    def add(self, rec: EntityRecord) -> None:
        """An entity created during this run (reachable by id only: A11)."""
        self.by_id.setdefault(rec.entity_id, rec)

    def fuzzy(self, text: str, types: frozenset[str] | None, threshold: float) -> tuple[str, float] | None:
        """§4.6.1 step 7: Jaro-Winkler over canonical names and aliases of the given types; tie-break
        (salience DESC, best_detector_tier ASC, entity_id ASC)."""
        from rapidfuzz.distance import JaroWinkler
        from rapidfuzz import process

        key = types or frozenset()
        if key not in self._fuzzy_names:
            names, owners = [], []
            for eid, r in self.by_id.items():
                if eid == self.self_id or (types and r.entity_type not in types):
                    continue
                for n in {r.canonical_name.lower(), *(str(a).lower() for a in r.aliases)}:
                    names.append(n)
                    owners.append(eid)
            self._fuzzy_names[key] = (names, owners)
        names, owners = self._fuzzy_names[key]
        if not names:
            return None
        hits = process.extract(text.lower(), names, scorer=JaroWinkler.normalized_similarity,
                               score_cutoff=threshold, limit=20)
        if not hits:
            return None
        best = max(h[1] for h in hits)
        tied = sorted({owners[h[2]] for h in hits if h[1] == best},
                      key=lambda e: (-(self.by_id[e].salience_score or 0.0), self.by_id[e].best_detector_tier, e))
        return tied[0], float(best)


@dataclass
class Resolution:
    entity_id: str
    tier: int
    confidence: float
    step: str
    created: tuple | None = None   # (entity_type, entity_key, name, reason) when the entity must be inserted

    def audit(self) -> dict[str, Any]:
        return {"entity_id": self.entity_id, "tier": self.tier, "confidence": round(self.confidence, 9),
                "step": self.step, **({"created": True} if self.created else {})}


@dataclass
class Mention:
    start: int | None
    end: int | None
    entity_id: str
    detector: str
    confidence: float
    entity_type: str | None
    surface: str | None

    @property
    def tier(self) -> int:
        return detector_tier(self.detector)


class Resolver:
    """§4.6.1 steps 2–8 for one reference string (the speaker/SELF step is handled by the caller)."""

    def __init__(self, index: EntityIndex, ids: IdFactory, *, fuzzy_enabled: bool, fuzzy_threshold: float,
                 created_confidence: float):
        self.index, self.ids = index, ids
        self.fuzzy_enabled, self.fuzzy_threshold = fuzzy_enabled, fuzzy_threshold
        self.created_confidence = created_confidence
        self._cache: dict[tuple, Resolution | None] = {}

    def by_span(self, start: int | None, end: int | None, text: str, mentions: list[Mention]) -> Resolution | None:
        """Step 3, read strictly: a mention with the reference's own extent (after a leading "the"), or whose
        surface equals the reference text; a longer phrase that merely contains a name is not that entity
        (docs/decisions.md A15)."""
        if start is None or end is None or not mentions:
            return None
        t = text.strip()
        s = start
        if t.lower().startswith("the "):
            s += 4
            t = t[4:].strip()
        tl = t.lower()
        found = [m for m in mentions if m.start is not None and m.start < end and start < m.end
                 and ((m.start == s and m.end == end) or (m.surface or "").lower() == tl)]
        if not found:
            return None
        found.sort(key=lambda m: (m.tier, -m.confidence, m.entity_id))
        m = found[0]
        return Resolution(m.entity_id, m.tier, float(m.confidence), "span" if len(found) == 1 else "span_ambiguous")

    def lookup(self, text: str, type_hint: str | None, *, allow_fuzzy: bool = True) -> Resolution | None:
        """Steps 4–7: canonical name, alias, normalized key, fuzzy."""
        key = (text, type_hint, allow_fuzzy)
        if key in self._cache:
            return self._cache[key]
        res = self._lookup(text, type_hint, allow_fuzzy)
        self._cache[key] = res
        return res

    def _typed(self, ids: list[str], type_hint: str | None) -> list[str]:
        if type_hint in STRONG_TYPES:
            ok = [e for e in ids if not (self.index.by_id[e].entity_type in STRONG_TYPES
                                          and self.index.by_id[e].entity_type != type_hint)]
            return ok
        return ids

    def _lookup(self, text: str, type_hint: str | None, allow_fuzzy: bool) -> Resolution | None:
        idx = self.index
        t = " ".join(text.split())
        if t.lower().startswith("the ") and len(t) > 4:
            t = t[4:]
        low = t.lower()
        ids = self._typed(idx.by_name.get(low, []), type_hint)
        if ids:
            r = idx.by_id[ids[0]]
            return Resolution(ids[0], r.best_detector_tier, 0.95 if len(ids) == 1 else 0.8,
                              "canonical_name" if len(ids) == 1 else "canonical_name_ambiguous")
        ids = self._typed(idx.by_alias.get(low, []), type_hint)
        if ids:
            r = idx.by_id[ids[0]]
            return Resolution(ids[0], r.best_detector_tier, 0.9 if len(ids) == 1 else 0.75,
                              "alias" if len(ids) == 1 else "alias_ambiguous")
        for etype in ([type_hint] if type_hint else []) + [x for x in ("PERSON", "ORG", "LOCATION", "CUSTOM_TERM",
                                                                       "PRODUCT", "OTHER") if x != type_hint]:
            if type_hint in STRONG_TYPES and etype in STRONG_TYPES and etype != type_hint:
                continue
            eid = idx.by_key.get((etype, entity_key(etype, t)))
            if eid and eid != idx.self_id:
                return Resolution(eid, idx.by_id[eid].best_detector_tier, 0.9, "entity_key")
        if allow_fuzzy and self.fuzzy_enabled and len(low) >= 4:
            types = frozenset({type_hint}) if type_hint in STRONG_TYPES else None
            hit = idx.fuzzy(low, types, self.fuzzy_threshold)
            if hit:
                eid, sim = hit
                return Resolution(eid, idx.by_id[eid].best_detector_tier, sim * 0.8, "fuzzy")
        return None

    def create(self, text: str, type_hint: str | None, reason: str = "grounding_fallback") -> Resolution:
        """Step 8: a new entity (type: the slot's type when the pattern knows it, else OTHER; A16)."""
        t = " ".join(text.split())
        if t.lower().startswith("the ") and len(t) > 4:
            t = t[4:]
        etype = type_hint if type_hint in ENTITY_VALUE_TYPES else "OTHER"
        key = entity_key(etype, t)
        eid = self.ids.make("entity", etype, key)
        rec = self.index.get(eid)
        if rec is not None:  # it exists (made earlier in this run): same id, same answer
            return Resolution(eid, 4, self.created_confidence, "created")
        return Resolution(eid, 4, self.created_confidence, "created", (etype, key, t, reason))


# -- §4.6.4 predicates ----------------------------------------------------------------------------------------------

@dataclass
class PredicateInfo:
    predicate_id: str
    canonical_label: str
    label_norm: str
    definition: PredicateDef | None


class PredicateTable:
    """Canonicalizes labels against the vocabulary and remembers which rows are new (§4.6.4 upsert)."""

    def __init__(self, vocab: Vocabulary, ids: IdFactory, existing: dict[str, dict]):
        self.vocab, self.ids = vocab, ids
        self.known: dict[str, PredicateInfo] = {}
        for norm, r in existing.items():
            self.known[norm] = PredicateInfo(r["predicate_id"], r["canonical_label"], norm, vocab.lookup(norm))
        self.new_rows: list[tuple] = []

    def get(self, label: str, arity_hint: int) -> PredicateInfo:
        _, norm = normalize_label(label)
        d = self.vocab.lookup(norm)
        if d is not None:
            norm = d.label_norm
            canonical = d.label
        else:
            canonical = normalize_label(label)[0]
        info = self.known.get(norm)
        if info is None:
            pid = self.ids.make("pred", norm)
            info = PredicateInfo(pid, canonical, norm, d)
            self.known[norm] = info
            raw = {"source": "vocabulary" if d else "extraction", "vocabulary_version": self.vocab.version}
            if d is not None:
                raw["aliases"] = list(d.aliases)
            self.new_rows.append((pid, canonical, norm, d.inverse if d else None, d.category if d else None,
                                  d.arity if d else arity_hint, d.value_type if d else None, None, 0,
                                  canonicalize(raw)))
        return info

    def take_new_rows(self) -> list[tuple]:
        out, self.new_rows = self.new_rows, []
        return out


# -- §4.6.2 literals and §4.6.3 signatures ------------------------------------------------------------------------

def normalize_literal(value_type: str, value: Any) -> Any:
    """string → str, number → int/float, boolean → bool, date → ISO-8601, json → a JSON value. Raises ValueError."""
    if value_type == "string":
        s = " ".join(str(value).split())
        if not s:
            raise ValueError("empty string literal")
        return s
    if value_type == "number":
        if isinstance(value, bool):
            raise ValueError("boolean is not a number")
        if isinstance(value, (int, float)):
            return value
        s = str(value).strip().replace(",", "")
        f = float(s)
        return int(f) if f.is_integer() and "." not in s and "e" not in s.lower() else f
    if value_type == "boolean":
        if isinstance(value, bool):
            return value
        s = str(value).strip().lower()
        if s in ("true", "yes", "1"):
            return True
        if s in ("false", "no", "0"):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    if value_type == "date":
        s = str(value).strip()
        for fmt in ("%Y-%m-%d", "%Y-%m", "%Y"):
            try:
                dt.datetime.strptime(s, fmt)
                return s
            except ValueError:
                pass
        from kenning.sources.timestamps import normalize_to_utc

        iso = normalize_to_utc(s)
        if iso is None:
            raise ValueError(f"not a date: {value!r}")
        return iso
    if value_type == "json":
        return orjson.loads(value) if isinstance(value, str) else orjson.loads(orjson.dumps(value))
    raise ValueError(f"unknown literal type {value_type!r}")


def object_signature(object_entity_id: str | None, value_type: str | None, value: Any) -> str:
    """§4.6.3: E:<entity_id> | V:sha256(JCS([type, value])) | N:__NONE__ (the JCS is over the JSON value itself,
    docs/decisions.md A17)."""
    if object_entity_id is not None:
        return "E:" + object_entity_id
    if value_type is not None:
        return "V:" + sha256_hex(canonicalize([value_type, value]))
    return NONE_SIGNATURE


def assertion_key(message_id: str, subject_id: str, predicate_id: str, signature: str, char_start: int | None,
                  modality: str, polarity: str) -> str:
    """§4.6.9 (the JCS text itself is stored)."""
    return canonicalize([message_id, subject_id, predicate_id, signature,
                         char_start if char_start is not None else "__NULL__", modality, polarity])


def fact_key(subject_id: str, predicate_id: str, signature: str) -> str:
    return canonicalize([subject_id, predicate_id, signature])


# -- §4.6.8 confidence --------------------------------------------------------------------------------------------

def grounding_confidence(subj_conf: float, subj_tier: int, obj_entity: bool, obj_conf: float | None,
                         obj_tier: int | None, bonus: float) -> float:
    subj_f = 1.0 + (4 - subj_tier) * bonus
    obj_f = 1.0 + (4 - obj_tier) * bonus if obj_tier else 1.0
    obj_g = obj_conf if obj_entity and obj_conf is not None else 1.0
    return clamp((subj_conf * subj_f + obj_g * obj_f) / 2)


def final_confidence(extraction: float, grounding: float, trust: float, salience_factor: float,
                     temporal_factor: float) -> float:
    return clamp(extraction * grounding * trust * salience_factor * temporal_factor)


def salience_factor(subject: EntityRecord | None, max_salience: float, enabled: bool, bonus: float) -> float:
    """§4.6.8 salience boost; with no salience anywhere (max 0) the factor is 1 (A8: no division by zero)."""
    if not enabled or subject is None or not max_salience or max_salience <= 0:
        return 1.0
    return 1.0 + ((subject.salience_score or 0.0) / max_salience) * bonus


@dataclass
class Grounded:
    """One grounded assertion, before persistence."""

    cand: Candidate
    message: dict
    subject: Resolution
    predicate: PredicateInfo
    object_entity: Resolution | None
    object_value_type: str | None
    object_value: Any
    qualifier_type: str | None
    qualifier_id: str | None
    asserted_role: str
    temporal_penalty: float
    raw: dict
    assertion_key: str = ""
    fact_key: str = ""
    signature: str = ""
    assertion_id: str = ""
    raw_json: str = ""
    confidence_extraction: float = 0.0
    confidence_grounding: float = 0.0
    confidence_final: float = 0.0
    has_user_corroboration: int = 0
    corroboration: dict | None = None
    superseded_by: str | None = None
    supersession_type: str | None = None
    speaker_entity_id: str | None = None
    notes: dict = field(default_factory=dict)

    def finalize_identity(self, ids: IdFactory) -> None:
        oid = self.object_entity.entity_id if self.object_entity else None
        self.signature = object_signature(oid, self.object_value_type, self.object_value)
        c = self.cand
        self.assertion_key = assertion_key(self.message["message_id"], self.subject.entity_id,
                                           self.predicate.predicate_id, self.signature, c.char_start, c.modality,
                                           c.polarity)
        self.fact_key = fact_key(self.subject.entity_id, self.predicate.predicate_id, self.signature)
        self.raw_json = canonicalize(self.raw)
        self.assertion_id = ids.make("assertion", self.assertion_key, sha256_hex(self.raw_json))

    def row(self, surface_of: Callable[[int, int], str]) -> tuple:
        c = self.cand
        oe = self.object_entity
        surface = surface_of(c.char_start, c.char_end) if c.char_start is not None else None
        return (self.assertion_id, self.message["message_id"], self.assertion_key, self.fact_key,
                self.subject.entity_id, self.subject.tier, self.predicate.predicate_id,
                oe.entity_id if oe else None, oe.tier if oe else None,
                self.object_value_type if not oe else None,
                canonicalize(self.object_value) if (not oe and self.object_value_type) else None,
                self.signature, self.qualifier_type, self.qualifier_id, c.modality, c.polarity, self.asserted_role,
                self.message.get("created_at_utc"), round(self.confidence_extraction, 9),
                round(self.confidence_grounding, 9), round(self.confidence_final, 9), self.has_user_corroboration,
                self.superseded_by, self.supersession_type, c.char_start, c.char_end, surface,
                "hybrid" if c.llm_audit else c.method, c.model, self.raw_json,
                canonicalize(self.corroboration) if self.corroboration else None)

    def mutable(self) -> tuple:
        return (round(self.confidence_final, 9), self.has_user_corroboration,
                canonicalize(self.corroboration) if self.corroboration else None, self.superseded_by,
                self.supersession_type)


def literal_from_ref(o: ObjectRef) -> tuple[str, Any]:
    vt = o.value_type or "string"
    return vt, normalize_literal(vt, o.value if o.value is not None else o.text)
