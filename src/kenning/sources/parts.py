"""Content parts of one message: resolve, classify by the configured rules, extract text (seed 001 §1.10, §1.13)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kenning.config.models import ContentPartRule, ExportMapping
from kenning.sources.jsonpointer import MISSING, resolve, resolve_first


@dataclass(slots=True)
class Part:
    part_type: str
    text: str | None
    mime_type: str | None
    file_path: str | None
    metadata: dict | None
    raw: Any                      # the part object as it stood in the export


def _matches(value: Any, expected: Any) -> bool:
    if expected == "*":
        return value is not MISSING and value is not None
    if isinstance(expected, list):
        return any(_matches(value, e) for e in expected)
    if expected is None:
        return value is MISSING or value is None
    return value == expected


def _as_text(value: Any) -> str | None:
    """A string, or a list of strings joined (seed 001 §0.4 "Array content")."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        pieces = [v for v in value if isinstance(v, str)]
        return "\n".join(pieces) if pieces else None
    return None


def _fallback_text(part: Any) -> str | None:
    """Seed 001 §1.10 fallback: text, content, value, parts; dict items inspected for text fields."""
    if not isinstance(part, dict):
        return None
    for key in ("text", "content", "value", "parts"):
        v = part.get(key)
        if isinstance(v, str):
            return v
        if isinstance(v, list):
            pieces = []
            for item in v:
                if isinstance(item, str):
                    pieces.append(item)
                elif isinstance(item, dict):
                    inner = next((item[k] for k in ("text", "content", "value") if isinstance(item.get(k), str)), None)
                    if inner is not None:
                        pieces.append(inner)
            if pieces:
                return "\n".join(pieces)
    return None


_FENCED = re.compile(r"```(.*?)```", re.DOTALL)


def _fenced_inner(s: str) -> str:
    """The user's own words inside the export's boilerplate ("User profile:\\n```…```")."""
    m = _FENCED.search(s)
    return m.group(1).strip("\n") if m else s


def _extract_thoughts(part: dict) -> tuple[str | None, dict]:
    thoughts = part.get("thoughts") if isinstance(part, dict) else None
    if not isinstance(thoughts, list):
        return None, {}
    contents = [t.get("content") for t in thoughts if isinstance(t, dict) and isinstance(t.get("content"), str)]
    summaries = [t.get("summary") for t in thoughts if isinstance(t, dict) and isinstance(t.get("summary"), str)]
    return ("\n\n".join(contents) if contents else None), ({"summaries": summaries} if summaries else {})


def _extract_user_context(part: dict) -> tuple[str | None, dict]:
    sections, pieces, pos = [], [], 0
    for field in ("user_profile", "user_instructions"):
        v = part.get(field) if isinstance(part, dict) else None
        if not isinstance(v, str) or not v.strip():
            continue
        inner = _fenced_inner(v)
        if pieces:
            pos += 2
        sections.append({"kind": field, "char_start": pos, "char_end": pos + len(inner)})
        pieces.append(inner)
        pos += len(inner)
    if not pieces:
        return None, {}
    return "\n\n".join(pieces), {"sections": sections}


_EXTRACTORS = {"thoughts": _extract_thoughts, "user_editable_context": _extract_user_context}


def _rule_matches(rule: ContentPartRule, part: Any, node: Any) -> bool:
    if rule.part_is == "string" and not isinstance(part, str):
        return False
    if rule.part_is == "object" and not isinstance(part, dict):
        return False
    if rule.match_path is not None and not _matches(resolve(part, rule.match_path), rule.match_value):
        return False
    if rule.message_match_path is not None and not _matches(
        resolve(node, rule.message_match_path), rule.message_match_value
    ):
        return False
    return True


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def classify(part: Any, node: Any, rules: list[ContentPartRule]) -> Part:
    for rule in rules:
        if not _rule_matches(rule, part, node):
            continue
        metadata: dict = {}
        if rule.text_extractor:
            text, extra = _EXTRACTORS[rule.text_extractor](part)
            metadata.update(extra)
        elif isinstance(part, str):
            text = part
        elif rule.text_extract_path is not None:
            text = _as_text(resolve_first(part, rule.text_extract_path))
        else:
            text = None
        for p in rule.metadata_paths:
            v = resolve(part, p)
            if v is not MISSING:
                metadata[p] = v
        metadata.update(rule.mark)
        return Part(
            part_type=rule.part_type,
            text=text,
            mime_type=_str_or_none(resolve_first(part, rule.mime_type_path)),
            file_path=_str_or_none(resolve_first(part, rule.file_path_path)),
            metadata=metadata or None,
            raw=part,
        )
    if isinstance(part, str):
        return Part("text", part, None, None, None, part)
    text = _fallback_text(part)
    return Part("text" if text is not None else "other", text, None, None, None, part)


def content_items(content: Any) -> list[Any]:
    """Seed 001 §1.13: str → one part; dict with parts → the parts; other dict → one part; list → N parts."""
    if content is MISSING or content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):
        parts = content.get("parts")
        if isinstance(parts, list):
            return parts
        return [content]
    if isinstance(content, list):
        return content
    return [content]


def _file_id(pointer: str | None) -> str | None:
    if not pointer:
        return None
    return pointer.rsplit("/", 1)[-1] or None


def message_parts(node: Any, mapping: ExportMapping) -> list[Part]:
    """All parts of a message: content parts, then uploads listed only in message metadata."""
    parts = [classify(p, node, mapping.content_part_rules) for p in content_items(resolve(node, mapping.message_content_path))]
    by_file = {_file_id(p.file_path): p for p in parts if p.file_path}
    for path in mapping.known_attachment_paths:
        items = resolve(node, path)
        if not isinstance(items, list):
            continue
        for att in items:
            if not isinstance(att, dict):
                continue
            mime = _str_or_none(resolve_first(att, mapping.attachment_mime_type_path))
            att_id = att.get("id") if isinstance(att.get("id"), str) else None
            twin = by_file.get(att_id) if att_id else None
            if twin is not None:
                # An image already in the content: the attachment only adds its name and MIME type.
                twin.mime_type = twin.mime_type or mime
                twin.metadata = {**(twin.metadata or {}), "attachment": att}
                continue
            meta = {p: v for p in mapping.attachment_metadata_paths if (v := resolve(att, p)) is not MISSING}
            meta["source"] = path
            parts.append(
                Part("file", None, mime, _str_or_none(resolve_first(att, mapping.attachment_file_path_path)), meta, att)
            )
    return parts
