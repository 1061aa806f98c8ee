"""What a message looks like to the search index: its fields and the text that is embedded."""

from __future__ import annotations

from kenning.sources.jcs import jcs_hash


def doc_fields(speaker: str | None, text: str | None, extras: list[str], previous: str | None) -> dict[str, str]:
    return {"speaker": speaker or "", "body": text or "", "extra": "\n".join(extras), "context": previous or ""}


def embed_text(fields: dict[str, str], include_speaker: bool) -> str:
    """"<speaker>: <text>" plus image captions, as the LoCoMo baselines index a turn."""
    s = f"{fields['speaker']}: {fields['body']}" if include_speaker and fields["speaker"] else fields["body"]
    for cap in filter(None, fields["extra"].split("\n")):
        s += f" [image: {cap}]"
    return s


def content_hash(fields: dict[str, str]) -> bytes:
    """The first 16 bytes of the sha256 of the fields' JCS text: what `search_docs.content_sha256` keeps to tell an
    unchanged document (Y27; 16 bytes, as N12 and Y24, instead of 64 hex characters)."""
    return bytes.fromhex(jcs_hash(fields)[:32])


def entity_fields(name: str, entity_type: str, aliases: list[str], lexicon_terms: list[str]) -> dict[str, str]:
    """An entity as a search document: its type in the speaker field, its name as the body, other names as extra."""
    others = [a for a in dict.fromkeys([*aliases, *lexicon_terms]) if a and a != name]
    return {"speaker": entity_type or "", "body": name or "", "extra": "\n".join(others), "context": ""}
