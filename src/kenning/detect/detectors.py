"""The deterministic entity detectors of seed 001 §2A.5.1, with pinned versions and a pinned integer order.

Each detector finds ``Hit(start, end, confidence, details)`` in the exact ``text_raw``; the stage
turns hits into ``entity_mention_candidates``. Regexes and confidences are Kenning's (the seed gives
none, digest B12) and recorded in docs/decisions.md E4/E5. Changing a regex means bumping that
detector's version, which makes stage 2A recompute every message.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Callable, Iterator

from kenning.detect.scan import finditer_at
from kenning.detect.textfold import first_digit, fold_once

# Pinned detector_order (§2A.5.1 numbering ×10; LEXICON between the structured detectors and NER, E4).
ORDER = {
    "EMAIL": 10, "URL": 20, "DOI": 30, "UUID": 40, "HASH_HEX": 50, "IP_ADDRESS": 60, "PHONE": 70,
    "FILEPATH": 80, "BARE_DOMAIN": 90, "ARXIV": 100, "CVE": 110, "ORCID": 120, "GIT_SHA": 130,
    "HANDLE": 140, "HASHTAG": 150, "LEXICON": 155, "NER": 160,
}
OPTIONAL = ("ARXIV", "CVE", "ORCID", "GIT_SHA", "HANDLE", "HASHTAG")

# §3.4.2 reliability tiers (GIT_SHA sits with HASH_HEX, E13).
TIER1 = frozenset({"EMAIL", "URL", "DOI", "UUID", "IP_ADDRESS", "PHONE"})
TIER2 = frozenset({"HASH_HEX", "FILEPATH", "BARE_DOMAIN", "ARXIV", "CVE", "ORCID", "GIT_SHA", "HANDLE", "HASHTAG"})


def detector_tier(detector: str) -> int:
    if detector in TIER1:
        return 1
    if detector in TIER2:
        return 2
    if detector.startswith("LEXICON:"):
        return 3
    return 4  # NER:* and anything unknown


def detector_order(detector: str) -> int:
    if detector.startswith("LEXICON:"):
        return ORDER["LEXICON"]
    if detector.startswith("NER:"):
        return ORDER["NER"]
    return ORDER.get(detector, ORDER["NER"])


def precedence_class(detector: str) -> int:
    """Winner-selection key 0 (E9): structured detectors > LEXICON > NER (§2B.6.2)."""
    if detector.startswith("LEXICON:"):
        return 1
    if detector.startswith("NER:") or detector not in ORDER:
        return 2
    return 0


@dataclass(frozen=True)
class Hit:
    start: int
    end: int
    confidence: float
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Detector:
    name: str
    version: str
    hint: str                                   # entity_type_hint == entity type (E13)
    find: Callable[[str], Iterator[Hit]]
    prefilter: Callable[[str], bool]
    needs_digit: bool = False                   # every hit holds a digit: skip texts without one (checked once)

    @property
    def order(self) -> int:
        return ORDER[self.name]


# ---------------------------------------------------------------------------------------------------------
# helpers

_TRAIL_PUNCT = ".,;:!?'\"*_~>"


def _trim_trailing(text: str, start: int, end: int) -> int:
    """Drop sentence punctuation and unbalanced closing brackets from the end of a URL-like match."""
    while end > start:
        ch = text[end - 1]
        if ch in _TRAIL_PUNCT:
            end -= 1
        elif ch in ")]}":
            opener = {")": "(", "]": "[", "}": "{"}[ch]
            seg = text[start:end]
            if seg.count(opener) < seg.count(ch):
                end -= 1
            else:
                break
        else:
            break
    return end


@lru_cache(maxsize=1)
def iana_tlds() -> frozenset[str]:
    """The pinned IANA TLD list shipped in kenning/detect/data (its version line is recorded per run)."""
    text = resources.files("kenning.detect").joinpath("data/tlds-alpha-by-domain.txt").read_text("utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def iana_tlds_version() -> str:
    text = resources.files("kenning.detect").joinpath("data/tlds-alpha-by-domain.txt").read_text("utf-8")
    return text.splitlines()[0].lstrip("# ").strip()


# ---------------------------------------------------------------------------------------------------------
# EMAIL

_EMAIL = re.compile(r"(?<![\w.+%-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?"
                    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w@-]|\.[A-Za-z0-9])")


def _find_email(text: str) -> Iterator[Hit]:
    for m in _EMAIL.finditer(text):
        yield Hit(m.start(), m.end(), 0.99)


# URL (http/https only, §2A.5.1) ----------------------------------------------------------------------------

_URL = re.compile(r"(?<![\w@])[Hh][Tt][Tt][Pp][Ss]?://[^\s<>\"'`\[\]{}|\\^【】\ue200-\ue206]+")


def _find_url(text: str) -> Iterator[Hit]:
    for m in _URL.finditer(text):
        end = _trim_trailing(text, m.start(), m.end())
        rest = text[m.start():end].split("://", 1)[1]
        if rest and ("." in rest or rest.startswith("localhost")):
            yield Hit(m.start(), end, 0.98)


# DOI ---------------------------------------------------------------------------------------------------------

_DOI = re.compile(r"(?:(?<![\w/])(?:[Dd][Oo][Ii]:[ ]?|https?://(?:dx\.)?doi\.org/)|(?<![\w/.:]))"
                  r"10\.\d{4,9}/[^\s\"<>【】\ue200-\ue206]+")


def _find_doi(text: str) -> Iterator[Hit]:
    for m in _DOI.finditer(text):
        end = _trim_trailing(text, m.start(), m.end())
        if "/" in text[m.start():end] and not text[end - 1] == "/":
            yield Hit(m.start(), end, 0.99)


# UUID --------------------------------------------------------------------------------------------------------

_UUID = re.compile(r"(?<![0-9A-Za-z-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                   r"(?![0-9A-Za-z-])")


def _find_uuid(text: str) -> Iterator[Hit]:
    for m in _UUID.finditer(text):
        yield Hit(m.start(), m.end(), 0.99)


# HASH_HEX: md5/sha1/sha224/sha256/sha384/sha512 lengths, one case, digits and letters both present -----------

_HASH = re.compile(r"(?<![0-9A-Za-z_-])(?:[0-9a-f]{32,128}|[0-9A-F]{32,128})(?![0-9A-Za-z_-])")
_HASH_LENGTHS = {32: "md5", 40: "sha1", 56: "sha224", 64: "sha256", 96: "sha384", 128: "sha512"}
_HAS_DIGIT = re.compile(r"\d")
_HAS_HEXLETTER = re.compile(r"[a-fA-F]")


def _find_hash(text: str) -> Iterator[Hit]:
    for m in _HASH.finditer(text):
        s = m.group()
        algo = _HASH_LENGTHS.get(len(s))
        if algo and _HAS_DIGIT.search(s) and _HAS_HEXLETTER.search(s):
            yield Hit(m.start(), m.end(), 0.95, {"length_suggests": algo})


# IP_ADDRESS --------------------------------------------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])")


def canonical_ipv4(s: str) -> str | None:
    parts = s.split(".")
    if len(parts) != 4 or not all(p.isdigit() and int(p) <= 255 for p in parts):
        return None
    return ".".join(str(int(p)) for p in parts)


# Where an IPv4 / phone / Unix path match can begin (N14): led by a digit or a literal, which re jumps to, whereas
# the detectors' own regexes open with a lookbehind and are tried at every position (scan.finditer_at).
# tests/test_prefilters.py checks each pair against finditer.
_IPV4_STARTS = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d")
_PHONE_STARTS = re.compile(r"[\d+(](?:(?<=[+(])\d|(?<=\d)\d{0,4}[ .-]\d)")
_UNIX_ABS_STARTS = re.compile(r"[~./](?:(?<=~)/|(?<=\.)\.?/|(?<=/)[A-Za-z0-9._@+-])")


def _find_ip(text: str) -> Iterator[Hit]:
    if _IPV4_SHAPE.search(text):
        for m in finditer_at(_IPV4, text, _IPV4_STARTS):
            canon = canonical_ipv4(m.group())
            if canon is not None:
                yield Hit(m.start(), m.end(), 0.9, {"version": 4, "canonical": canon})
    if ("::" in text or text.count(":") >= 7) and _IPV6_SHAPE.search(text) is not None:
        for m in _IPV6.finditer(text):
            s = m.group()
            if len(s) < 3 or ("::" not in s and s.count(":") != 7):
                continue
            try:
                addr = ipaddress.IPv6Address(s)
            except ValueError:
                continue
            yield Hit(m.start(), m.end(), 0.95, {"version": 6, "canonical": addr.compressed})


# PHONE: a permissive shape, then libphonenumbers decides (E5) --------------------------------------------------

_PHONE = re.compile(r"(?<![\w+/.:-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,5}(?:[ .-]\d{1,8}){1,5}"
                    r"(?![\w/:-]|\.\d|[.,]\d)")
_PHONE_PLAIN = re.compile(r"\+?\(?\d{7,15}\)?")
_DATE_LIKE = re.compile(r"^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})$")
_DOTTED_SMALL = re.compile(r"^\d{1,3}(?:\.\d{1,3}){1,3}$")


def make_phone_finder(default_region: str | None) -> Callable[[str], Iterator[Hit]]:
    import phonenumbers

    region = default_region.upper() if default_region else None

    def find(text: str) -> Iterator[Hit]:
        for m in finditer_at(_PHONE, text, _PHONE_STARTS):
            s = m.group()
            digits = sum(c.isdigit() for c in s)
            if not 7 <= digits <= 15 or _DATE_LIKE.match(s) or _DOTTED_SMALL.match(s):
                continue
            if not s.startswith("+") and "(" not in s and not re.search(r"\d[ -]\d", s):
                continue  # dotted-only runs without + or parentheses are versions or numbers, not phones
            if not s.startswith("+") and region is None:
                continue
            try:
                num = phonenumbers.parse(s, None if s.startswith("+") else region)
            except phonenumbers.NumberParseException:
                continue
            if not phonenumbers.is_possible_number(num):
                continue
            valid = phonenumbers.is_valid_number(num)
            e164 = phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.E164)
            yield Hit(m.start(), m.end(), 0.9 if valid else 0.75, {"e164": e164, "valid": valid})

    return find


# FILEPATH: Unix absolute/home/relative-with-extension, Windows drive paths -----------------------------------

_SEG = r"[A-Za-z0-9._@+-]+"
_UNIX_ABS = re.compile(rf"(?<![\w/:.~\\)\]])(?:~|\.\.?)?/{_SEG}(?:/{_SEG})+/?|(?<![\w/:.~])~/{_SEG}(?:/{_SEG})*/?"
                       rf"|(?<![\w/:.])\.\.?/{_SEG}(?:/{_SEG})*/?")
_UNIX_REL = re.compile(rf"(?<![\w/:.@~\\-]){_SEG}(?:/{_SEG})+\.[A-Za-z0-9]{{1,8}}(?![\w/])")
_WIN = re.compile(r"(?<![\w\\])[A-Za-z]:\\(?:[^\\/:*?\"<>|\s]+\\)*[^\\/:*?\"<>|\s]*")
_LETTER = re.compile(r"[A-Za-z]")


def _find_filepath(text: str) -> Iterator[Hit]:
    seen: set[tuple[int, int]] = set()
    if "/" in text:
        for rx, shape, conf in ((_UNIX_ABS, _UNIX_ABS_SHAPE, 0.85), (_UNIX_REL, _UNIX_REL_SHAPE, 0.8)):
            if not shape.search(text):
                continue
            for m in (finditer_at(rx, text, _UNIX_ABS_STARTS) if rx is _UNIX_ABS else rx.finditer(text)):
                end = _trim_trailing(text, m.start(), m.end())
                s = text[m.start():end]
                if end - m.start() < 3 or not _LETTER.search(s) or (m.start(), end) in seen:
                    continue
                if "//" in s:
                    continue
                seen.add((m.start(), end))
                yield Hit(m.start(), end, conf, {"style": "unix"})
    if ":\\" in text:
        for m in _WIN.finditer(text):
            end = _trim_trailing(text, m.start(), m.end())
            if end - m.start() >= 4:
                yield Hit(m.start(), end, 0.85, {"style": "windows"})


# BARE_DOMAIN ---------------------------------------------------------------------------------------------------

_DOMAIN = re.compile(r"(?<![\w@./:\\-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([a-z]{2,24}|[A-Z]{2,24})"
                     r"(?![\w@/-]|\.[A-Za-z0-9])")


_DOMAIN_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")


def domain_matches(text: str) -> Iterator[re.Match]:
    """``_DOMAIN.finditer(text)``, tried only where a match can begin (N14). Every character of a match is one of
    ``_DOMAIN_RUN`` and its lookbehind rejects all of them, so a match begins exactly where a maximal run of those
    characters begins; and every match holds a dot and two letters of one case (``_DOMAIN_SHAPE``, which re jumps to
    by its dot). So each run holding a shape is tried once, at its start, in text order."""
    match = _DOMAIN.match
    pos, tried = 0, -1
    for h in _DOMAIN_SHAPE.finditer(text):
        r = h.start()
        if r < pos:
            continue
        while r > 0 and text[r - 1] in _DOMAIN_RUN:
            r -= 1
        if r == tried or r < pos:  # this run was tried already, or holds the last match (no second one fits)
            continue
        tried = r
        m = match(text, r)
        if m is not None:
            yield m
            pos = m.end()


def make_domain_finder(allowlist_enabled: bool) -> Callable[[str], Iterator[Hit]]:
    tlds = iana_tlds()

    def find(text: str) -> Iterator[Hit]:
        for m in domain_matches(text):
            tld = m.group(1).lower()
            known = tld in tlds
            if allowlist_enabled and not known:
                continue
            yield Hit(m.start(), m.end(), 0.8 if known else 0.5, {"tld": tld, "tld_known": known})

    return find


# Optional high-precision detectors ----------------------------------------------------------------------------

_ARXIV = re.compile(r"(?<![\w/])[Aa][Rr][Xx][Ii][Vv]:[ ]?(?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"
                    r"(?![\w.])")
_CVE = re.compile(r"(?<![\w-])CVE-\d{4}-\d{4,7}(?![\w-])")
_ORCID = re.compile(r"(?<![\w-])\d{4}-\d{4}-\d{4}-\d{3}[\dX](?![\w-])")
_GIT_SHA = re.compile(r"(?i:\b(?:commit|sha|sha1|rev|revision|cherry-pick|revert|checkout)\b)[:#]?[ \t]+"
                      r"([0-9a-f]{7,40})(?![0-9A-Za-z_-])")
_HANDLE = re.compile(r"(?<![\w@./+-])@[A-Za-z][A-Za-z0-9_]{2,30}(?![\w@-]|\.[A-Za-z0-9])")
_HASHTAG = re.compile(r"(?<![\w#&/])#[A-Za-z][A-Za-z0-9_]{2,}(?![\w-])")


def orcid_checksum_ok(s: str) -> bool:
    digits = s.replace("-", "")
    total = 0
    for ch in digits[:-1]:
        total = (total + int(ch)) * 2
    check = (12 - total % 11) % 11
    return digits[-1] == ("X" if check == 10 else str(check))


def _simple(rx: re.Pattern, conf: float) -> Callable[[str], Iterator[Hit]]:
    def find(text: str) -> Iterator[Hit]:
        for m in rx.finditer(text):
            yield Hit(m.start(), m.end(), conf)
    return find


def _find_orcid(text: str) -> Iterator[Hit]:
    for m in _ORCID.finditer(text):
        if orcid_checksum_ok(m.group()):
            yield Hit(m.start(), m.end(), 0.97, {"checksum": "iso7064-11-2"})


def _find_git_sha(text: str) -> Iterator[Hit]:
    for m in _GIT_SHA.finditer(text):
        s = m.group(1)
        if _HAS_DIGIT.search(s) and re.search(r"[a-f]", s):
            yield Hit(m.start(1), m.end(1), 0.9, {"cue": m.group(0)[: m.start(1) - m.start()].strip()})


# ---------------------------------------------------------------------------------------------------------
# the registry

def _has(*needles: str) -> Callable[[str], bool]:
    if len(needles) == 1:
        needle = needles[0]
        return lambda text: needle in text

    def pre(text: str) -> bool:
        return any(n in text for n in needles)
    return pre


# Shapes: a stretch of text every match of a detector contains, led by a literal or a digit. re jumps straight to
# those characters, whereas the detectors' own regexes begin with a lookbehind and are tried at every position;
# searching the shape first skips most texts at a fraction of the cost. tests/test_prefilters.py checks each
# shape against its regex.
_UUID_SHAPE = re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-")
# A hash is a run of 32+ hex characters holding a digit: after its first digit come 16 more hex characters, or
# before it stand 16 hex letters. (The lookbehind runs only at digits.)
_HASH_SHAPE = re.compile(r"\d(?:[0-9a-fA-F]{16}|(?<=[a-fA-F]{16}\d))")
_IPV4_SHAPE = re.compile(r"\.\d{1,3}\.\d{1,3}\.")
# An IPv6 match opens with (?:[0-9A-Fa-f]{0,4}:){2,7}: two colons with at most four hex digits between them. Code
# is full of colons (the "7 colons" test passes most of it); this ':'-led search rules most of it out in C.
_IPV6_SHAPE = re.compile(r":[0-9A-Fa-f]{0,4}:")
_PHONE_SHAPE = re.compile(r"\d[ .-]\d")                 # \d{1,5}(?:[ .-]\d{1,8}){1,5} is in every phone match
_UNIX_ABS_SHAPE = re.compile(rf"/{_SEG}/{_SEG}|~/{_SEG}|\./{_SEG}")  # _SEG ends in +
_UNIX_REL_SHAPE = re.compile(rf"/{_SEG}\.[A-Za-z0-9]")
_DOMAIN_SHAPE = re.compile(r"\.(?:[a-z]{2}|[A-Z]{2})")
_ORCID_SHAPE = re.compile(r"-\d{4}-\d{4}-")
# On the folded text (textfold.fold), because the cue words are case-insensitive; every cue word holds one of
# _GIT_SHA_CUES, which substring tests find faster than the regex (led by common letters) can.
_GIT_SHA_SHAPE = re.compile(r"(?:commit|sha|sha1|rev|revision|cherry-pick|revert|checkout)[:#]?[ \t]+[0-9a-f]{7}")
_GIT_SHA_CUES = ("commit", "sha", "rev", "cherry-pick", "checkout")
_GIT_SHA_CUE_SET = frozenset(_GIT_SHA_CUES)
_HASHTAG_SHAPE = re.compile(r"#[A-Za-z][A-Za-z0-9_]{2}")


def _may_hold_git_sha(text: str) -> bool:
    from kenning.detect.cuewords import cue_words, starts_of  # (imports this module to build its word list)

    folded = fold_once(text)
    if cue_words(folded).isdisjoint(_GIT_SHA_CUES):
        return False
    # Every alternative of the shape begins with one of the cue words ("sha1", "revision", "revert" with "sha",
    # "rev"): matching it where a cue word begins answers what a search would, without walking the text ("share",
    # "previous" make the cue test pass on ordinary prose).
    match = _GIT_SHA_SHAPE.match
    return any(match(folded, p) is not None for p in starts_of(folded, _GIT_SHA_CUE_SET))


def _may_hold_ip(text: str) -> bool:
    return _IPV4_SHAPE.search(text) is not None or (
        ("::" in text or text.count(":") >= 7) and _IPV6_SHAPE.search(text) is not None)  # as _find_ip decides


def _may_hold_filepath(text: str) -> bool:
    return ("/" in text and (_UNIX_ABS_SHAPE.search(text) is not None or _UNIX_REL_SHAPE.search(text) is not None)
            or ":\\" in text)  # as _find_filepath decides


def _shape(rx: re.Pattern) -> Callable[[str], bool]:
    search = rx.search
    return lambda text: search(text) is not None


def _digit_shape(rx: re.Pattern) -> Callable[[str], bool]:
    """A shape whose every match begins with a digit: searched from the text's first digit on (N15; a lookbehind
    still sees the characters before it)."""
    search = rx.search

    def pre(text: str) -> bool:
        at = first_digit(text)
        return at >= 0 and search(text, at) is not None
    return pre


def _any(_: str) -> bool:
    return True


_HAS_DIGIT_PRE = _HAS_DIGIT.search


def build_detectors(*, optional_enabled: list[str], phone_default_region: str | None,
                    domain_tld_allowlist_enabled: bool) -> list[Detector]:
    """The detectors that run, in pinned order."""
    dets = [
        Detector("EMAIL", "1", "EMAIL", _find_email, _has("@")),
        Detector("URL", "1", "URL", _find_url, lambda t: "://" in t),
        Detector("DOI", "1", "DOI", _find_doi, _has("10.")),
        Detector("UUID", "1", "UUID", _find_uuid, _shape(_UUID_SHAPE)),
        Detector("HASH_HEX", "1", "HASH_HEX", _find_hash, _digit_shape(_HASH_SHAPE), needs_digit=True),
        Detector("IP_ADDRESS", "1", "IP_ADDRESS", _find_ip, _may_hold_ip),
        Detector("PHONE", "1", "PHONE", make_phone_finder(phone_default_region), _digit_shape(_PHONE_SHAPE),
                 needs_digit=True),
        Detector("FILEPATH", "1", "FILEPATH", _find_filepath, _may_hold_filepath),
        Detector("BARE_DOMAIN", "1", "BARE_DOMAIN", make_domain_finder(domain_tld_allowlist_enabled),
                 _shape(_DOMAIN_SHAPE)),
        Detector("ARXIV", "2", "ARXIV", _simple(_ARXIV, 0.97), lambda t: "rxiv:" in t.lower(),  # 2: any case
                 needs_digit=True),
        Detector("CVE", "1", "CVE", _simple(_CVE, 0.99), _has("CVE-")),
        Detector("ORCID", "1", "ORCID", _find_orcid, _shape(_ORCID_SHAPE), needs_digit=True),
        Detector("GIT_SHA", "1", "GIT_SHA", _find_git_sha, _may_hold_git_sha, needs_digit=True),
        Detector("HANDLE", "1", "HANDLE", _simple(_HANDLE, 0.9), _has("@")),
        Detector("HASHTAG", "1", "HASHTAG", _simple(_HASHTAG, 0.9), _shape(_HASHTAG_SHAPE)),
    ]
    enabled = set(optional_enabled)
    return [d for d in dets if d.name not in OPTIONAL or d.name in enabled]


def detector_versions(detectors: list[Detector]) -> dict[str, str]:
    versions = {d.name: d.version for d in detectors}
    versions["tld_list"] = iana_tlds_version()
    import phonenumbers

    versions["phonenumbers"] = phonenumbers.__version__
    return versions
