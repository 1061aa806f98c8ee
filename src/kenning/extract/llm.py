"""Stage 4 LLM extraction (seed 001 §4.4.4, §4.5): the model reads one message with its context and answers with
assertion candidates; each is checked and turned into a :class:`Candidate` the rules' grounding already knows.

- Request (§4.4.4): the ``k_context`` earlier messages (masked, cut to ``assertions.llm.context_max_chars``) and
  the target (role, speaker, length-preserving masked text, the context entity set with salience and a
  reliability label from the detector tier, the resolved times), with the predicate vocabulary. The prompt is
  ``llm/prompts/assertion_extract_v<N>.txt`` and its JSON schema ``assertion_extract_v<N>.schema.json`` (the
  pydantic model below must equal the file, so the schema can only change with a new version).
- Calls go through the model layer (``kenning.llm.open_llm_run``): every attempt is logged in
  ``llm_extraction_calls`` in the stage's transaction; ``--llm replay`` answers from the stored responses and a
  missing one is :class:`kenning.llm.ReplayMissing` (the stage fails and rolls back).
- Quotes (§4.5.3–4.5.4, A34): the model gives the exact words; they are looked up in the masked target text, exact
  first, then with whitespace and quote marks normalized. One match → the span; several → no span
  (``QUOTE_OFFSET_UNRESOLVED``); none → the candidate is invalid. Invalid candidates (unknown entity id, name not
  in the request, label outside the vocabulary, arity mismatch, bad literal, quote not in the text, …) are
  recorded (``LLM_CANDIDATE_INVALID`` with the reason and the model's candidate) and never repaired or guessed.
- Multi-run (§4.4.4): with ``llm_multi_run_count`` N > 1, N requests (each with its ``sample`` number, so replay
  tells them apart); a candidate is kept when more than N/2 runs give it, with the mean confidence.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel

from kenning.extract.candidates import Candidate, ObjectRef, Qualifier, SubjectRef
from kenning.extract.grounding import ENTITY_VALUE_TYPES, STRONG_TYPES, normalize_literal
from kenning.extract.registry import Vocabulary
from kenning.sources.jcs import sha256_hex

SOURCE_ID = "llm"
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_APOS = "'’‘`´"
_DQ = "\"“”„"
RELIABILITY = {1: "high", 2: "high", 3: "medium", 4: "low"}
# A pronoun is not a referent: the model is asked to name who "he" or "there" is (A27 for rules); left unnamed, the
# claim is invalid rather than grounded to an entity called "he".
PRONOUNS = frozenset("he she they him her them it its there here we us you your his their this that".split())
_KIN = re.compile(r"^(?P<poss>my|your)\s+(?P<kin>[a-z\-]+)$", re.I)


# -- the answer's schema (assertion_extract_v1.schema.json) ---------------------------------------------------------
class LLMObject(BaseModel):
    kind: Literal["entity", "literal", "none"]
    entity: str | None = None
    value_type: Literal["string", "number", "boolean", "date", "json"] | None = None
    value: str | int | float | bool | None = None


class LLMTime(BaseModel):
    type: Literal["at", "since", "until", "during"]
    surface: str


class LLMAssertion(BaseModel):
    subject: str
    predicate: str
    object: LLMObject
    modality: Literal["state", "fact", "preference", "intention", "question"]
    polarity: Literal["positive", "negative"]
    quote: str
    confidence: float
    time: LLMTime | None = None


class AssertionExtractOutput(BaseModel):
    assertions: list[LLMAssertion]


def schema_text() -> str:
    """The schema file's expected content (sorted, indented JSON of the pydantic model's schema)."""
    return json.dumps(AssertionExtractOutput.model_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema_file(name: str, version: int) -> str:
    return f"{name}_v{int(version)}.schema.json"


def load_schema_file(name: str, version: int) -> str:
    from kenning.llm.errors import PromptError

    fname = schema_file(name, version)
    try:
        return resources.files("kenning.llm").joinpath("prompts", fname).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as e:
        raise PromptError(f"no schema file {fname} in kenning/llm/prompts (it sits beside the prompt)") from e


def check_schema(config: Any) -> str:
    """The pinned schema file's sha256; an error when the code's schema no longer equals the file (a schema
    change needs a new prompt version)."""
    from kenning.llm.errors import PromptError

    name = config.assertions.llm.prompt
    version = config.llm.prompt_versions.get(name)
    if version is None:
        raise PromptError(f"prompt {name!r} is not pinned: add `{name}: N` under llm.prompt_versions")
    text = load_schema_file(name, version)
    if json.loads(text) != json.loads(schema_text()):
        raise PromptError(f"{schema_file(name, version)} does not match kenning.extract.llm.AssertionExtractOutput; "
                          "a schema change needs a new prompt version (new files, new pin)")
    return sha256_hex(text)


# -- quotes ---------------------------------------------------------------------------------------------------------
def _find_exact(hay: str, needle: str) -> list[tuple[int, int]]:
    out, i = [], hay.find(needle)
    while i >= 0 and needle:
        out.append((i, i + len(needle)))
        i = hay.find(needle, i + 1)
    return out


def _loose_pattern(quote: str) -> re.Pattern | None:
    toks = quote.split()
    if not toks:
        return None
    parts = []
    for t in toks:
        parts.append("".join(f"[{re.escape(_APOS)}]" if ch in _APOS else f"[{re.escape(_DQ)}]" if ch in _DQ
                             else re.escape(ch) for ch in t))
    return re.compile(r"\s+".join(parts))


def find_quote(masked: str, text: str, quote: str) -> tuple[str, list[tuple[int, int]]]:
    """(how, spans) of ``quote`` in the masked target text: exact, else whitespace/quote-mark normalized
    (§4.5.3 "exact or after whitespace normalization"). ``how`` is exact | whitespace | excluded | none."""
    hits = [(s, e) for s, e in _find_exact(masked, quote) if text[s:e] == quote]
    if hits:
        return "exact", hits
    pat = _loose_pattern(quote)
    if pat is not None:
        hits = [(m.start(), m.end()) for m in pat.finditer(masked) if text[m.start():m.end()] == m.group(0)]
        if hits:
            return "whitespace", hits
        if _find_exact(text, quote) or pat.search(text):
            return "excluded", []
    return "none", []


def _norm_label(label: str) -> str:
    return "_".join(re.split(r"[\s\-]+", unicodedata.normalize("NFKC", label).strip().lower()))


class Invalid(Exception):
    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


# -- the factory stage 4 plugs in -----------------------------------------------------------------------------------
class LLMExtractorFactory:
    """``AssertionExtraction(llm_extractor_factory=LLMExtractorFactory())``: decides whether the model is used,
    contributes to the extractor version, and opens the extractor in the stage."""

    def wanted(self, ctx: Any) -> bool:
        """Whether this run asks the model: the runner already applied the one rule (M30, A32) through
        ``AssertionExtraction.model_wanted``, so a live/replay ``ctx.llm_mode`` means yes."""
        return (getattr(ctx, "llm_mode", "none") or "none") != "none"

    def version_info(self, ctx: Any) -> dict[str, Any]:
        from kenning.llm.version import extractor_version

        cfg = ctx.config
        acfg = cfg.pipeline.assertion_extraction
        ev = extractor_version(cfg, prompts=[cfg.assertions.llm.prompt], llm_mode=ctx.llm_mode, extra={
            "schema_sha256": check_schema(cfg), "settings": cfg.assertions.llm.model_dump(mode="json"),
            "multi_run_count": acfg.llm_multi_run_count})
        return {"llm": ev}

    def open(self, ctx: Any, extractor_version: str, vocab: Vocabulary) -> "LLMExtractor":
        return LLMExtractor(ctx, extractor_version, vocab)


class LLMExtractor:
    def __init__(self, ctx: Any, extractor_version: str, vocab: Vocabulary):
        from kenning.llm.client import open_llm_run
        from kenning.llm.prompts import prompt_for

        self.ctx, self.cfg = ctx, ctx.config
        self.lcfg = ctx.config.assertions.llm
        self.vocab = vocab
        self.n_runs = max(1, ctx.config.pipeline.assertion_extraction.llm_multi_run_count)
        self.prompt = prompt_for(ctx.config, self.lcfg.prompt)
        self.model = ctx.config.llm.model or ""
        self.predicates_text = self._predicates_text()
        self.counts: Counter = Counter()
        self.budget_exhausted = False
        self._cm = open_llm_run(ctx, "assertion_extract", extractor_version=extractor_version)
        self.client = self._cm.__enter__()
        self.run_id = self.client.run.run_id

    # -- lifecycle ----------------------------------------------------------------------------------------------
    def finish(self, counts: Counter, assertions_extracted: int) -> None:
        self.client.run.add(messages_processed=self.counts["llm_messages_sent"],
                            assertions_extracted=assertions_extracted)
        self._cm.__exit__(None, None, None)
        for k, v in self.counts.items():
            counts[k] += v
        counts["llm_assertions_extracted"] = assertions_extracted

    def abort(self) -> None:
        self.client.close()

    # -- the request ----------------------------------------------------------------------------------------------
    def _predicates_text(self) -> str:
        lines = []
        for norm in sorted(self.vocab.by_norm):
            d = self.vocab.by_norm[norm]
            obj = "none" if d.arity == 1 else (d.value_type or "any")
            alias = f"; aliases: {', '.join(d.aliases)}" if d.aliases else ""
            lines.append(f"- {d.label} (arity {d.arity}, object: {obj}{alias})")
        return "\n".join(lines)

    def _cut(self, text: str) -> str:
        n = self.lcfg.context_max_chars
        text = re.sub(r"[ \t]{3,}", "  ", text)   # masked runs: keep the request small
        return text if len(text) <= n else text[:n] + " …"

    def request(self, mc: Any, window: list[Any], proc: Any) -> tuple[dict[str, Any], str]:
        index = proc.index
        context, hay, used = [], [mc.text], []
        for w in window:
            m = w.message
            if w.speaker.trust_role not in ("user", "assistant") or w.masked is None:
                continue
            # the role as stage 4 reads it: a transcript's human speakers are users whatever the stored role (A12)
            entry: dict[str, Any] = {"role": w.speaker.trust_role, "text": self._cut(w.masked)}
            if w.speaker.name and proc.speakers.is_transcript(m["conversation_id"]):
                entry["speaker"] = w.speaker.name
            context.append(entry)
            hay.append(entry["text"])            # what the model was shown
            used.append(w)
        window = used
        eids: set[str] = set()
        for ments in [mc.mentions, *[w.mentions for w in window]]:
            eids.update(x.entity_id for x in ments if x.entity_id)
        eids.discard(proc.speakers.self_id)
        recs = sorted((index.get(e) for e in eids if index.get(e) is not None), key=lambda r: index.tie_key(r.entity_id))
        entities = [{"id": r.entity_id, "name": r.canonical_name, "type": r.entity_type,
                     "salience": round(r.salience_score, 4) if r.salience_score is not None else None,
                     "reliability": RELIABILITY.get(r.best_detector_tier, "low")}
                    for r in recs[:self.lcfg.max_entities]]
        times = []
        for where, tl in [("context", t) for w in window for t in w.times] + [("target", t) for t in mc.times]:
            if tl.get("resolved_type") in ("instant", "interval"):
                times.append({"message": where, "surface": tl["surface_text"], "valid_from_utc": tl["valid_from_utc"],
                              "valid_to_utc": tl["valid_to_utc"], "granularity": tl["resolution_granularity"]})
        target: dict[str, Any] = {"role": mc.speaker.trust_role, "text": mc.masked, "entities": entities,
                                  "times": times}
        if mc.speaker.name and mc.is_transcript:
            target["speaker"] = mc.speaker.name
        hay.extend(r["name"] for r in entities)
        return {"messages": context, "target": target}, "\n".join(hay).casefold()

    # -- one message ------------------------------------------------------------------------------------------------
    def extract(self, mc: Any, window: list[Any], proc: Any) -> list[Candidate]:
        m = mc.message
        if mc.speaker.trust_role not in self.lcfg.roles:
            self.counts["llm_messages_role_skipped"] += 1
            return []
        if len(mc.text) > self.lcfg.target_max_chars:
            self.counts["llm_messages_too_long"] += 1
            proc.info("LLM_TARGET_TOO_LONG", f"{len(mc.text)} characters", message_id=m["message_id"])
            return []
        req, hay = self.request(mc, window, proc)
        runs: list[list[Candidate]] = []
        for i in range(self.n_runs):
            variables = {"predicates": self.predicates_text,
                         "request": req if self.n_runs == 1 else {**req, "sample": i + 1}}
            res = self.client.structured(self.prompt.name, variables, AssertionExtractOutput,
                                         message_id=m["message_id"], item_key=str(i))
            if not res.ok:
                self.counts["llm_items_failed"] += 1
                self.counts[f"llm_items_failed_{res.error_code}"] += 1
                if res.error_code == "BUDGET_EXHAUSTED":
                    self.budget_exhausted = True
                runs.append([])
                continue
            runs.append(self._candidates(res.value.assertions, mc, hay, proc, list(res.call_ids)))
        self.counts["llm_messages_sent"] += 1
        out = runs[0] if self.n_runs == 1 else self._majority(runs)
        self.counts["llm_candidates_valid"] += len(out)
        return out

    def _majority(self, runs: list[list[Candidate]]) -> list[Candidate]:
        """§4.4.4: keep candidates given by more than N/2 runs, with the mean confidence."""
        groups: dict[tuple, list[Candidate]] = {}
        seen_in: dict[tuple, set[int]] = {}
        for i, cands in enumerate(runs):
            for c in cands:
                k = (c.notes.get("subject_as_given", "").casefold(), c.predicate_norm, _intent(c.obj), c.modality,
                     c.polarity)
                groups.setdefault(k, []).append(c)
                seen_in.setdefault(k, set()).add(i)
        out = []
        for k, cands in groups.items():
            if len(seen_in[k]) * 2 <= len(runs):
                self.counts["llm_candidates_minority_dropped"] += 1
                continue
            c = cands[0]
            c.notes["multi_run"] = {"runs": len(runs), "agreeing": len(seen_in[k]),
                                    "confidences": [x.confidence for x in cands]}
            c.confidence = round(sum(x.confidence for x in cands) / len(cands), 6)
            out.append(c)
        return out

    def _candidates(self, answers: list[LLMAssertion], mc: Any, hay: str, proc: Any,
                    call_ids: list[str]) -> list[Candidate]:
        out = []
        for i, a in enumerate(answers):
            try:
                if i >= self.lcfg.max_assertions_per_message:
                    raise Invalid("TOO_MANY", f"more than {self.lcfg.max_assertions_per_message} answers")
                out.append(self._candidate(a, i, mc, hay, proc))
            except Invalid as e:
                self.counts["llm_candidates_invalid"] += 1
                self.counts[f"llm_candidates_invalid_{e.reason}"] += 1
                proc.warn("LLM_CANDIDATE_INVALID", f"{e.reason}: {e.detail}", message_id=mc.message["message_id"],
                          reason=e.reason, index=i, candidate=a.model_dump(mode="json"), call_ids=call_ids)
        return out

    def _candidate(self, a: LLMAssertion, i: int, mc: Any, hay: str, proc: Any) -> Candidate:
        text, masked = mc.text, mc.masked
        notes: dict[str, Any] = {"answer_index": i, "subject_as_given": a.subject}
        # predicate (§4.6.4 against the vocabulary)
        norm = _norm_label(a.predicate)
        d = self.vocab.lookup(norm)
        if d is None and not self.lcfg.accept_new_predicates:
            raise Invalid("PREDICATE_UNKNOWN", f"{a.predicate!r} is not in the predicate vocabulary")
        label = d.label if d is not None else norm
        if not label:
            raise Invalid("PREDICATE_EMPTY", "no predicate")
        if d is not None and (d.arity == 1) != (a.object.kind == "none"):
            raise Invalid("ARITY_MISMATCH", f"{d.label} has arity {d.arity}, object kind {a.object.kind}")
        if not 0 <= a.confidence <= 1:
            raise Invalid("CONFIDENCE_OUT_OF_RANGE", f"{a.confidence}")
        # quote → span (§4.5.3–4.5.4)
        quote = a.quote
        if not quote.strip():
            raise Invalid("QUOTE_EMPTY", "no quote")
        how, spans = find_quote(masked, text, quote)
        if how == "excluded":
            raise Invalid("QUOTE_IN_EXCLUDED_TEXT", f"{quote[:80]!r} is only in masked text (code, quotes, citations)")
        if how == "none":
            raise Invalid("QUOTE_NOT_IN_TEXT", f"{quote[:80]!r} is not in the target message")
        s = e = None
        surface = None
        notes["quote_match"] = how
        if len(spans) == 1:
            s, e = spans[0]
            surface = text[s:e]
            if surface != quote:
                notes["model_quote"] = quote
        else:
            notes["quote_unresolved"] = quote
            notes["quote_occurrences"] = len(spans)
            proc.warn("QUOTE_OFFSET_UNRESOLVED", f"quote {quote[:60]!r} found {len(spans)} times; spans stay NULL",
                      message_id=mc.message["message_id"], source=SOURCE_ID)
        # subject
        subject = self._subject(a.subject, mc, hay, proc, s, e)
        # object
        obj = self._object(a.object, d, mc, hay, proc, s, e)
        conf = a.confidence
        if conf > self.lcfg.max_confidence:
            notes["model_confidence"] = conf
            conf = self.lcfg.max_confidence
        qualifier = Qualifier(a.time.type, surface=a.time.surface) if a.time is not None and a.time.surface.strip() \
            else None
        return Candidate(message_id=mc.message["message_id"], method="llm", source_id=SOURCE_ID,
                         subject=subject, predicate_label=label, obj=obj, modality=a.modality, polarity=a.polarity,
                         char_start=s, char_end=e, confidence=round(conf, 6), source_sha=self.prompt.ref,
                         qualifier=qualifier, quote=surface, notes=notes, model=self.model)

    def _entity_token(self, token: str, proc: Any, mc: Any, what: str) -> tuple[str, str] | None:
        """("speaker"|"self"|"entity", id-or-text) for the reserved tokens and entity ids; None for a name."""
        t = token.strip()
        up = t.upper()
        if up == "SPEAKER":
            if not mc.speaker.human:
                raise Invalid("SPEAKER_NOT_A_PERSON", f"{what} SPEAKER in an assistant message (A12: the "
                              "assistant's first person is not a claim)")
            return "speaker", mc.speaker.entity_id
        if up in ("USER", "SELF"):
            if mc.is_transcript and mc.speaker.kind == "person":
                raise Invalid("USER_AMBIGUOUS", f"{what} USER in a turn by {mc.speaker.name}: in a transcript the "
                              "person addressed must be named")
            return "self", proc.speakers.self_id
        if _UUID.match(t):
            if proc.index.get(t) is None:
                raise Invalid("ENTITY_ID_UNKNOWN", f"{what} {t} is not a known entity")
            return "entity", t
        return None

    def _check_name(self, name: str, hay: str, what: str) -> None:
        if not name.strip():
            raise Invalid("NAME_EMPTY", f"{what} is empty")
        if name.casefold() in PRONOUNS:
            raise Invalid("PRONOUN_NOT_RESOLVED", f"{what} {name!r} is a pronoun, not a name")
        if self.lcfg.require_names_in_context and " ".join(name.split()).casefold() not in hay:
            raise Invalid("NAME_NOT_IN_CONTEXT", f"{what} {name!r} occurs nowhere in the messages it was given")

    def _subject(self, token: str, mc: Any, hay: str, proc: Any, s: int | None, e: int | None) -> SubjectRef:
        tok = self._entity_token(token, proc, mc, "subject")
        if tok is not None:
            kind, ref = tok
            if kind == "speaker":
                return SubjectRef("speaker", "I")
            if kind == "self":
                return SubjectRef("self", "SELF")
            return SubjectRef("entity", ref)
        name = " ".join(token.split())
        if name.casefold() in ("i", "me", "my", "myself"):
            if not mc.speaker.human:
                raise Invalid("SPEAKER_NOT_A_PERSON", "subject 'I' in an assistant message")
            return SubjectRef("speaker", "I")
        kin = _KIN.match(name)
        if kin and kin.group("kin").lower() in proc.rules.kin_pred:
            # "my sister" / "your brother": the rules' kin reference (the named one in the window, else a
            # descriptor entity; A10, A27)
            if kin.group("poss").lower() == "my":
                if not mc.speaker.human:
                    raise Invalid("SPEAKER_NOT_A_PERSON", f"subject {name!r} in an assistant message")
                owner = "speaker"
            else:
                owner = "self"
            ns, ne = _locate(name, mc.text, s, e)
            return SubjectRef("kin", name, ns, ne, kin=kin.group("kin").lower(), owner=owner)
        self._check_name(name, hay, "subject")
        ns, ne = _locate(name, mc.text, s, e)
        return SubjectRef("text", name, ns, ne)

    def _object(self, o: LLMObject, d: Any, mc: Any, hay: str, proc: Any, s: int | None, e: int | None) -> ObjectRef:
        hint = d.value_type if d is not None and d.value_type in ENTITY_VALUE_TYPES else None
        if o.kind == "none":
            return ObjectRef("none")
        if o.kind == "literal":
            if o.value_type is None or o.value is None:
                raise Invalid("OBJECT_LITERAL_INVALID", "a literal needs value_type and value")
            try:
                value = normalize_literal(o.value_type, o.value)
            except (ValueError, TypeError) as ex:
                raise Invalid("OBJECT_LITERAL_INVALID", str(ex)) from ex
            if o.value_type == "string" and hint in STRONG_TYPES:
                # the predicate expects an entity: a known one is that entity, else the value (like the rules)
                self._check_name(str(value), hay, "object")
                ns, ne = _locate(str(value), mc.text, s, e)
                return ObjectRef("entity_or_literal", str(value), ns, ne, type_hint=hint, value=str(value))
            return ObjectRef("literal", str(o.value), value_type=o.value_type, value=value)
        if not o.entity or not o.entity.strip():
            raise Invalid("OBJECT_ENTITY_EMPTY", "an entity object needs 'entity'")
        tok = self._entity_token(o.entity, proc, mc, "object")
        if tok is not None:
            kind, ref = tok
            if ref is None:
                raise Invalid("OBJECT_ENTITY_EMPTY", "the object names nobody")
            rec = proc.index.get(ref)
            return ObjectRef("entity", rec.canonical_name if rec else o.entity, entity_id=ref, type_hint=hint)
        name = " ".join(o.entity.split())
        self._check_name(name, hay, "object")
        ns, ne = _locate(name, mc.text, s, e)
        return ObjectRef("entity", name, ns, ne, type_hint=hint)


def _locate(name: str, text: str, s: int | None, e: int | None) -> tuple[int | None, int | None]:
    """The one occurrence of ``name`` inside the quote's span (for span-based resolution, §4.6.1 step 3)."""
    if s is None or e is None:
        return None, None
    hits = _find_exact(text[s:e], name)
    if len(hits) != 1:
        return None, None
    return s + hits[0][0], s + hits[0][1]


def _intent(o: ObjectRef) -> tuple:
    """§4.4.4 "object_signature_intent" of a not yet grounded object."""
    if o.kind == "none":
        return ("none",)
    if o.entity_id:
        return ("entity_id", o.entity_id)
    if o.kind == "literal":
        return ("literal", o.value_type, json.dumps(o.value, sort_keys=True))
    return ("name", " ".join(str(o.text or o.value).split()).casefold())
