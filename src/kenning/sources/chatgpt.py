"""One ChatGPT conversation record → rows for conversations, messages and message_parts (seed 001 §1).

Pure functions: no SQL, no I/O. ``stage1`` decides what to insert, update or keep.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kenning.config.models import Config
from kenning.sources import textstruct
from kenning.sources.ids import IdFactory
from kenning.sources.jcs import FlaggedJcs, _encode_string, canonicalize, scrub_surrogates, sha256_hex
from kenning.sources.jsonpointer import MISSING, resolve, resolve_first
from kenning.sources.parts import Part, content_items, message_parts
from kenning.sources.timestamps import normalize_to_utc



class RecordError(ValueError):
    """This record cannot be imported; ``code`` and ``pointer`` say why and where."""

    def __init__(self, code: str, message: str, pointer: str | None = None):
        super().__init__(message)
        self.code = code
        self.pointer = pointer


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_TWO_53 = 2.0**53


def _parse_float(text: str) -> float | int:
    """Integral values become ints: their JCS text is the same ("1.0" → 1), and it keeps the
    canonicalizer on its fast path."""
    x = float(text)
    if x.is_integer() and abs(x) < _TWO_53 and not (x == 0 and text.lstrip().startswith("-")):
        return int(x)
    return x


# One decoder for every record: json.loads with keyword arguments builds a new decoder (and its C scanner) per
# call (J7). decode() is what json.loads runs, less its check for a leading BOM, which _decode keeps.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_parse_float)


def _decode(text: str) -> Any:
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


def parse_record(data: bytes) -> tuple[Any, list[tuple[str, str]]]:
    """Parse one record's bytes. Returns (value, repairs); raises RecordError when unreadable.

    The standard parser keeps integers exact at any size and accepts lone surrogate escapes;
    NaN/Infinity are refused; invalid UTF-8 is repaired (U+FFFD) and reported.
    """
    repairs: list[tuple[str, str]] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        repairs.append(("INVALID_UTF8", f"invalid UTF-8 at byte {e.start} of the record; replaced with U+FFFD"))
    try:
        return _decode(text), repairs
    except (json.JSONDecodeError, ValueError, RecursionError) as e:
        raise RecordError("MALFORMED_JSON", f"not valid JSON: {e}") from None


@dataclass
class Built:
    conversation: dict
    messages: list[dict]
    parts: list[dict]
    warnings: list[tuple[str, str, dict]] = field(default_factory=list)
    node_rejects: list[tuple[str, str, str, Any]] = field(default_factory=list)  # pointer, code, message, raw
    repairs: list[tuple[str, str]] = field(default_factory=list)
    retained: int = 0          # stored messages the record no longer lists, kept in the tree
    node_repairs: list[tuple[str, str, str, Any]] = field(default_factory=list)  # pointer, code, message, raw


@dataclass(slots=True)
class _Msg:
    message_id: str
    export_id: str
    node: Any
    parent_export: Any
    parent_id: str | None
    role: str
    created: str | None
    parts: list[Part]


def _text(v: Any) -> str | None:
    if v is MISSING or v is None:
        return None
    return v if isinstance(v, str) else canonicalize(v)


def _id_text(v: Any) -> str | None:
    if v is MISSING or v is None or v == "":
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return canonicalize(v)
    return None


def _role(node: Any, mapping, warnings) -> str:
    raw = resolve_first(node, mapping.message_role_path)
    if (raw is MISSING or raw is None) and isinstance(node, dict) and node.get("message") is None:
        return "unknown"  # a structural node (message: null), not a message with an odd role
    key = str(raw).lower() if raw is not MISSING and raw is not None else "__none__"
    role = mapping.role_mapping.get(key)
    if role is None:
        warnings.append(("UNKNOWN_ROLE", f"role {raw!r} is not in role_mapping; stored as 'unknown'", {"role": _text(raw)}))
        return "unknown"
    return role


def _tree(msgs: dict[str, _Msg], warnings) -> tuple[list[str], dict[str, str]]:
    """DFS preorder over the mapping tree: (order, tree_path by id). Siblings by message_id ASC."""
    children: dict[str, list[str]] = defaultdict(list)
    roots = []
    for mid, m in msgs.items():
        if m.parent_id is None:
            roots.append(mid)
        else:
            children[m.parent_id].append(mid)
    for kids in children.values():
        kids.sort()
    roots.sort()
    order: list[str] = []
    paths: dict[str, str] = {}

    def walk(root: str, path: str) -> None:
        stack = [(root, path)]
        while stack:
            mid, p = stack.pop()
            paths[mid] = p
            order.append(mid)
            kids = children.get(mid, ())
            for j in range(len(kids) - 1, -1, -1):
                stack.append((kids[j], f"{p}/{j}"))

    for i, r in enumerate(roots):
        walk(r, str(i))
    n_roots = len(roots)
    while len(paths) < len(msgs):  # what remains hangs in a parent cycle: break it at the smallest id
        mid = min(m for m in msgs if m not in paths)
        m = msgs[mid]
        children[m.parent_id].remove(mid)
        warnings.append(("PARENT_CYCLE_BROKEN", f"message {m.export_id} is in a parent cycle; treated as a root",
                         {"export_message_id": m.export_id, "export_parent_id": _text(m.parent_export)}))
        m.parent_id = None
        walk(mid, str(n_roots))
        n_roots += 1
    return order, paths


def _over_limits(node: Any, mapping, limits) -> tuple[str, str] | None:
    """A message too big to process in bounded time (issue 23 part 3): (code, message) or None."""
    items = content_items(resolve(node, mapping.message_content_path))
    if len(items) > limits.max_parts_per_message:
        return ("TOO_MANY_PARTS", f"{len(items):,} content parts, more than import_limits.max_parts_per_message "
                f"({limits.max_parts_per_message:,})")
    chars = 0
    for it in items:
        if isinstance(it, str):
            chars += len(it)
        elif isinstance(it, dict) and isinstance(it.get("text"), str):
            chars += len(it["text"])
    if chars > limits.max_message_chars:
        return ("MESSAGE_TOO_LONG", f"{chars:,} characters of text, more than import_limits.max_message_chars "
                f"({limits.max_message_chars:,})")
    return None


def _current_branch(msgs: dict[str, _Msg], current: str | None, order: list[str]) -> set[str]:
    if current is None or current not in msgs:
        # No usable current_node: follow the most recent child from the first root.
        if not order:
            return set()
        kids: dict[str | None, list[str]] = defaultdict(list)
        for mid in order:
            kids[msgs[mid].parent_id].append(mid)
        node = order[0]
        while kids.get(node):
            node = max(kids[node], key=lambda k: (msgs[k].created or "", k))
        current = node
    branch, node, guard = set(), current, 0
    while node is not None and node not in branch and guard <= len(msgs):
        branch.add(node)
        node = msgs[node].parent_id
        guard += 1
    return branch


def _texts(parts: list[Part]) -> tuple[str, str | None, str | None]:
    with_text = [(i, p.text) for i, p in enumerate(parts) if p.text is not None]
    if not parts:
        return "empty", None, None
    if not with_text:
        return "unknown", None, None
    if len(with_text) == 1:
        return "text", with_text[0][1], None
    pieces, part_map, pos = [], [], 0
    for i, t in with_text:
        if pieces:
            pos += 2
        part_map.append({"char_end": pos + len(t), "char_start": pos, "part_index": i})
        pieces.append(t)
        pos += len(t)
    return "mixed", "\n\n".join(pieces), canonicalize(part_map)


def build_conversation(
    obj: Any,
    cfg: Config,
    ids: IdFactory,
    run_id: str,
    import_key: str,
    retained_nodes: dict[str, Any] | None = None,
) -> Built:
    """Rows for one conversation. ``retained_nodes`` are stored messages a newer export no longer
    lists (export id → node); they stay part of the tree so nothing is lost."""
    mapping = cfg.export_mapping
    if not isinstance(obj, dict):
        raise RecordError("WRONG_SHAPE", f"a conversation must be a JSON object, found {type(obj).__name__}")
    container = resolve(obj, mapping.messages_path)
    if container is MISSING or container is None:
        raise RecordError("NO_MESSAGES", f"no message container at {mapping.messages_path}", mapping.messages_path)
    warnings: list[tuple[str, str, dict]] = []
    node_rejects: list[tuple[str, str, str, Any]] = []
    if mapping.messages_is_mapping:
        if not isinstance(container, dict):
            raise RecordError("WRONG_SHAPE", f"{mapping.messages_path} must be an object (node id → node), "
                              f"found {type(container).__name__}", mapping.messages_path)
        entries = sorted(container.items())  # mapping key order carries no meaning
    else:
        if not isinstance(container, list):
            raise RecordError("WRONG_SHAPE", f"{mapping.messages_path} must be an array, found "
                              f"{type(container).__name__}", mapping.messages_path)
        entries = [(str(i), n) for i, n in enumerate(container)]

    # Canonical JSON bottom-up: parts, then nodes, then the conversation reusing both (memo).
    jcs = FlaggedJcs(remember=True)

    export_id_text = _id_text(resolve_first(obj, mapping.conversation_id_path))
    nodes: list[tuple[str, str, Any]] = []  # (pointer, export id, node)
    seen: set[str] = set()
    for key, node in entries:
        pointer = f"{mapping.messages_path}/{key.replace('~', '~0').replace('/', '~1')}"
        if not isinstance(node, dict):
            node_rejects.append((pointer, "WRONG_SHAPE", f"message node must be an object, found {type(node).__name__}", node))
            continue
        export_id = _id_text(resolve_first(node, mapping.message_id_path)) or (key if mapping.messages_is_mapping else None)
        if export_id is None:
            export_id = key  # array position (seed 001 §1.3 "message_index_or_hash": the index)
        elif mapping.messages_is_mapping and export_id != key:
            warnings.append(("NODE_ID_MISMATCH", f"mapping key {key!r} holds node id {export_id!r}; the node id is used",
                             {"key": key, "node_id": export_id}))
        if export_id in seen:
            node_rejects.append((pointer, "DUPLICATE_MESSAGE_ID", f"a second node with id {export_id!r}", node))
            continue
        too_big = _over_limits(node, mapping, cfg.import_limits)
        if too_big is not None:
            node_rejects.append((pointer, too_big[0], too_big[1], node))
            continue
        seen.add(export_id)
        nodes.append((pointer, export_id, node))
    n_retained = 0
    for export_id in sorted(retained_nodes or {}):
        if export_id not in seen:
            nodes.append((None, export_id, retained_nodes[export_id]))
            seen.add(export_id)
            n_retained += 1
    if not nodes and not container:
        warnings.append(("EMPTY_CONVERSATION", "the conversation has no messages", {}))

    raw_conversation_json = None
    conv_hash_for_id = None
    if export_id_text is None:
        raw_conversation_json = jcs(obj)
        conv_hash_for_id = sha256_hex(raw_conversation_json)
        conversation_id = ids.conversation(conv_hash_for_id)
    else:
        conversation_id = export_id_text

    msgs: dict[str, _Msg] = {}
    export_to_id = {e: ids.message(conversation_id, e) for _, e, _ in nodes}
    for _pointer, export_id, node in nodes:
        mid = export_to_id[export_id]
        parent_export = resolve_first(node, mapping.message_parent_path)
        parent_key = _id_text(parent_export)
        parent_id = export_to_id.get(parent_key) if parent_key is not None else None
        if parent_key is not None and parent_id is None:
            warnings.append(("ORPHAN_MESSAGE", f"message {export_id} names parent {parent_key!r}, which is not in the "
                             "conversation; treated as a root", {"export_message_id": export_id, "export_parent_id": parent_key}))
        if parent_id == mid:
            warnings.append(("PARENT_CYCLE_BROKEN", f"message {export_id} is its own parent; treated as a root",
                             {"export_message_id": export_id}))
            parent_id = None
        msgs[mid] = _Msg(
            message_id=mid,
            export_id=export_id,
            node=node,
            parent_export=parent_export,
            parent_id=parent_id,
            role=_role(node, mapping, warnings),
            created=normalize_to_utc(resolve_first(node, mapping.message_created_path)),
            parts=message_parts(node, mapping),
        )

    order, paths = _tree(msgs, warnings)
    current_export = _id_text(resolve_first(obj, mapping.conversation_current_node_path))
    current_id = export_to_id.get(current_export) if current_export else None
    branch = _current_branch(msgs, current_id, order)
    citation_patterns = tuple(cfg.text_structure.citation_patterns)

    messages: list[dict] = []
    parts_rows: list[dict] = []
    final_ts: dict[str, str | None] = {}
    prior_ts: str | None = None
    for order_index, mid in enumerate(order):
        m = msgs[mid]
        if m.created is not None:
            ts, quality = m.created, "original"
        elif m.parent_id is not None and final_ts.get(m.parent_id) is not None:
            ts, quality = final_ts[m.parent_id], "imputed_parent"
        elif prior_ts is not None:
            ts, quality = prior_ts, "imputed_prior"
        else:
            ts, quality = None, "missing"
        final_ts[mid] = ts
        if ts is not None:
            prior_ts = ts
        attachment_count = 0
        for i, p in enumerate(m.parts):
            raw_part_json = jcs(p.raw)
            if p.file_path or p.mime_type:
                attachment_count += 1
            parts_rows.append({
                "part_id": ids.part(mid, i),
                "message_id": mid,
                "part_index": i,
                "part_type": p.part_type,
                "text_content": p.text,
                "mime_type": p.mime_type,
                "file_path": p.file_path,
                "metadata_json": canonicalize(p.metadata) if p.metadata else None,
                "raw_part_json": raw_part_json,
            })
        content_type, text_raw, part_map = _texts(m.parts)
        if text_raw is not None:
            fences = textstruct.code_fences(text_raw)
            fences_json = canonicalize(fences) if fences else "[]"   # most messages have neither
            quotes = textstruct.blockquotes(text_raw, fences)
            quotes_json = canonicalize(quotes) if quotes else "[]"
            cites = textstruct.citation_markers(text_raw, citation_patterns)
            cites_json = canonicalize(cites) if cites else None
        else:
            fences_json = quotes_json = cites_json = None
        raw_message_json = jcs(m.node)
        weight = resolve_first(m.node, mapping.message_weight_path)
        hidden = resolve_first(m.node, mapping.message_hidden_path)
        messages.append({
            "message_id": mid,
            "conversation_id": conversation_id,
            "role": m.role,
            "parent_id": m.parent_id,
            "tree_path": paths[mid],
            "order_index": order_index,
            "created_at_utc": ts,
            "timestamp_quality": quality,
            "content_type": content_type,
            "text_raw": text_raw,
            "text_part_map_json": part_map,
            "code_fence_ranges_json": fences_json,
            "blockquote_ranges_json": quotes_json,
            "attachment_count": attachment_count,
            "raw_message_json": raw_message_json,
            "export_message_id": m.export_id,
            "export_parent_id": _id_text(m.parent_export),
            "author_name": _text(resolve_first(m.node, mapping.message_author_name_path)),
            "recipient": _text(resolve_first(m.node, mapping.message_recipient_path)),
            "export_content_type": _text(resolve_first(m.node, mapping.message_content_type_path)),
            "is_hidden": int(hidden is True or (isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight == 0)),
            "is_current_branch": int(mid in branch),
            "citation_ranges_json": cites_json,
            "raw_sha256": sha256_hex(raw_message_json),
            "first_run_id": run_id,
            "last_changed_run_id": run_id,
        })

    if raw_conversation_json is None:
        node_at: dict[int, int] = {}
        raw_conversation_json = _spliced_jcs(obj, mapping.messages_path, jcs.memo, jcs, node_at)
        # where each node's JCS lies in the conversation's: the store keeps that instead of a copy (V2)
        for row in messages:
            row["raw_at_hint"] = node_at.get(id(msgs[row["message_id"]].node))
    conversation = {
        "conversation_id": conversation_id,
        "export_conversation_id": export_id_text,
        "title": _text(resolve_first(obj, mapping.conversation_title_path)),
        "created_at_utc": normalize_to_utc(resolve_first(obj, mapping.conversation_created_path)),
        "updated_at_utc": normalize_to_utc(resolve_first(obj, mapping.conversation_updated_path)),
        "message_count": len(messages),
        "raw_conversation_json": raw_conversation_json,
        "source_kind": "chatgpt",
        "current_node_message_id": current_id,
        "raw_sha256": sha256_hex(raw_conversation_json),
        "import_key": import_key,
        "first_run_id": run_id,
        "last_changed_run_id": run_id,
    }
    built = Built(conversation, messages, parts_rows, warnings, node_rejects, retained=n_retained)
    if jcs.had_surrogates:
        scrub_lone_surrogates(built)
    return built


def _spliced_jcs(obj: dict, messages_path: str, memo: dict[int, str], jcs, node_at: dict[int, int] | None = None) -> str:
    """The conversation's JCS, reusing each node's JCS text instead of serializing (and scanning)
    every message a second time. Only for a top-level message container; otherwise plain JCS.
    ``node_at`` receives id(node) → the code-point offset of the node's JCS in the result."""
    key = messages_path[1:]
    container = obj.get(key) if messages_path.count("/") == 1 and "~" not in key else None
    if not isinstance(container, (dict, list)):
        return jcs(obj)
    pieces: list[str] = []
    local: list[tuple[int, int]] = []   # (id(node), offset inside the container text)
    pos = 1
    if isinstance(container, dict):
        for k in _jcs_key_order(container):
            v = container[k]
            label = _key_label(k)
            text = memo.get(id(v)) or jcs(v)
            local.append((id(v), pos + len(label)))
            pieces.append(label + text)
            pos += len(label) + len(text) + 1
        container_text = "{" + ",".join(pieces) + "}"
    else:
        for v in container:
            text = memo.get(id(v)) or jcs(v)
            local.append((id(v), pos))
            pieces.append(text)
            pos += len(text) + 1
        container_text = "[" + ",".join(pieces) + "]"
    parts, at = [], 1
    for k in _jcs_key_order(obj):
        label = _key_label(k)
        if k == key:
            if node_at is not None:
                node_at.update((i, at + len(label) + off) for i, off in local)
            text = container_text
        else:
            text = jcs(obj[k])
        parts.append(label + text)
        at += len(label) + len(text) + 1
    return "{" + ",".join(parts) + "}"


def _key_label(k: str) -> str:
    """``JCS(k) + ":"``; an ASCII key (every mapping key of a real export: node UUIDs) needs no surrogate check."""
    if type(k) is str and k.isascii():
        return _encode_string(k) + ":"
    return canonicalize(k) + ":"


def _jcs_key_order(d: dict) -> list[str]:
    keys = sorted(d)
    if all(k.isascii() for k in keys):
        return keys
    return sorted(d, key=lambda k: k.encode("utf-16-be", "surrogatepass"))


_RAW_COLUMNS = {"raw_conversation_json", "raw_message_json", "raw_part_json", "metadata_json", "text_part_map_json",
                "code_fence_ranges_json", "blockquote_ranges_json", "citation_ranges_json"}


def scrub_lone_surrogates(built: Built) -> None:
    """TEXT columns must be valid UTF-8 (JSON columns are already escaped by JCS): lone surrogates become U+FFFD
    in extracted text, and the repair is recorded. Every importer calls this when its JCS flagged one."""
    for row in [built.conversation, *built.messages, *built.parts]:
        for k, v in row.items():
            if isinstance(v, str) and k not in _RAW_COLUMNS:
                row[k] = scrub_surrogates(v)
    built.repairs.append(("LONE_SURROGATE", "lone UTF-16 surrogate(s): kept escaped in the raw JSON, "
                          "replaced with U+FFFD in extracted text"))
