"""Type-specific entity keys (seed 001 §2B.7.1): the blocking key of ``entities(entity_type, entity_key)``."""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from urllib.parse import parse_qsl, urlencode, urlsplit

from kenning.detect.detectors import canonical_ipv4

_WS = re.compile(r"\s+")
_DOI_PREFIX = re.compile(r"^(?:doi:\s?|https?://(?:dx\.)?doi\.org/)", re.IGNORECASE)
_ARXIV_PREFIX = re.compile(r"^arxiv:\s?", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}

# Entity types of §2B.1 plus the optional detectors' own (E13).
ENTITY_TYPES = ("EMAIL", "URL", "DOI", "UUID", "HASH_HEX", "IP_ADDRESS", "PHONE", "FILEPATH", "BARE_DOMAIN",
                "PERSON", "ORG", "LOCATION", "CUSTOM_TERM", "OTHER",
                "ARXIV", "CVE", "ORCID", "GIT_SHA", "HANDLE", "HASHTAG", "PRODUCT")
_TYPES = frozenset(ENTITY_TYPES)


def entity_type_for(hint: str) -> str:
    """The entity type a mention's ``entity_type_hint`` becomes; unknown hints (e.g. NER MISC) become OTHER."""
    return hint if hint in _TYPES else "OTHER"


def collapse(s: str) -> str:
    return _WS.sub(" ", s).strip().lower()


def url_key(surface: str, *, keep_query: bool = False, sort_query: bool = False) -> str:
    try:
        parts = urlsplit(surface.strip())
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return surface.strip()
    scheme = parts.scheme.lower()
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    key = f"{scheme}://{netloc}{parts.path}"
    if keep_query and parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if sort_query:
            pairs = sorted(pairs)
        key += "?" + urlencode(pairs)
    return key


def entity_key(entity_type: str, surface: str, details: dict | None = None, *, url_keep_query: bool = False,
               url_sort_query: bool = False, phone_region: str | None = None) -> str:
    """The normalized key of a surface of this type. ``details`` may carry what the detector already computed."""
    details = details or {}
    t = entity_type
    if t in ("EMAIL", "HASH_HEX", "BARE_DOMAIN", "GIT_SHA", "HANDLE", "HASHTAG"):
        return surface.strip().lower()
    if t == "URL":
        return url_key(surface, keep_query=url_keep_query, sort_query=url_sort_query)
    if t == "DOI":
        return _DOI_PREFIX.sub("", surface.strip()).lower()
    if t == "UUID":
        return surface.strip().lower()
    if t == "IP_ADDRESS":
        if details.get("canonical"):
            return str(details["canonical"])
        v4 = canonical_ipv4(surface.strip())
        if v4:
            return v4
        try:
            return ipaddress.IPv6Address(surface.strip()).compressed
        except ValueError:
            return surface.strip().lower()
    if t == "PHONE":
        if details.get("e164"):
            return str(details["e164"])
        try:
            import phonenumbers

            num = phonenumbers.parse(surface, None if surface.strip().startswith("+") else phone_region)
            return phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.E164)
        except Exception:
            return "".join(c for c in surface if c.isdigit() or c == "+")
    if t == "FILEPATH":
        return surface
    if t == "ARXIV":
        return _ARXIV_PREFIX.sub("", surface.strip()).lower()
    if t in ("CVE", "ORCID"):
        return surface.strip().upper()
    return collapse(surface)  # PERSON, ORG, LOCATION, CUSTOM_TERM, PRODUCT, OTHER


def norm_name(s: str) -> str:
    """How entity names are compared with query words: NFKC, casefolded, whitespace collapsed (the search index's
    name table, the ledger's question lanes and forget all key names so; L5: it was in ``pipeline/stage_index.py``)."""
    return " ".join(unicodedata.normalize("NFKC", s).casefold().split())
