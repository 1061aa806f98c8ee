"""A node or an edge as one JSON document: what a commit's RFC 6902 patches are computed over and applied to.

A node document holds the ``nodes`` row, its aliases, its provenance entries and its experience record; an edge
document holds the ``edges`` row. Keys whose value is None are left out, so a document is canonical and a patch
names only what changed. ``save_*`` writes the difference between two documents to the tables."""

from __future__ import annotations

from typing import Any

import apsw

from kenning.store import knowledge as ksql
from kenning.store.mutation_keys import edge_key, is_edge_key, parse_edge_key

NODE_FIELDS = tuple(c for c in ksql.NODE_COLS)
EDGE_FIELDS = ksql.EDGE_COLS
_ALIAS_FIELDS = ("normalized_alias", "alias_type", "confidence")
_PROV_FIELDS = tuple(c for c in ksql.PROVENANCE_COLS if c not in ("id", "node_id"))
_EXP_FIELDS = tuple(c for c in ksql.EXPERIENCE_COLS if c != "target_node_id")


def _clean(d: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {k: d[k] for k in fields if d.get(k) is not None}


# ---- nodes -------------------------------------------------------------------------------------------------

def load_node(conn: apsw.Connection, node_id: str) -> dict[str, Any]:
    """The node's document, or {} when there is no such node."""
    r = ksql.get_node(conn, node_id)
    if r is None:
        return {}
    doc = _clean(r, NODE_FIELDS)
    aliases = {a["id"]: _clean(a, _ALIAS_FIELDS) for a in ksql.get_aliases(conn, node_id)}
    if aliases:
        doc["aliases"] = aliases
    prov = {p["id"]: _clean(p, _PROV_FIELDS) for p in ksql.get_provenance(conn, node_id)}
    if prov:
        doc["provenance"] = prov
    exp = ksql.get_experience(conn, node_id)
    if exp is not None:
        doc["experience"] = _clean(exp, _EXP_FIELDS)
    return doc


def save_node(conn: apsw.Connection, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Make the tables hold ``after`` where they held ``before`` (both documents of one node)."""
    if not after:
        if before:
            ksql.delete_node(conn, before["id"])  # cascades to aliases, provenance, experience, edges
        return
    node_id = after["id"]
    row = {k: after.get(k) for k in NODE_FIELDS}
    if not before:
        ksql.insert_node(conn, row)
    else:
        changed = {k: row[k] for k in NODE_FIELDS if before.get(k) != row[k]}
        ksql.update_node(conn, node_id, changed)
    _sync_children(conn, node_id, before.get("aliases") or {}, after.get("aliases") or {},
                   insert=lambda i, v: ksql.insert_alias(conn, {"id": i, "node_id": node_id, **v}),
                   update=lambda i, v: ksql.update_alias(conn, i, {k: v.get(k) for k in _ALIAS_FIELDS}),
                   delete=lambda i: ksql.delete_alias(conn, i))
    _sync_children(conn, node_id, before.get("provenance") or {}, after.get("provenance") or {},
                   insert=lambda i, v: ksql.insert_provenance(conn, {"id": i, "node_id": node_id, **v}),
                   update=lambda i, v: ksql.update_provenance(conn, i, {k: v.get(k) for k in _PROV_FIELDS}),
                   delete=lambda i: ksql.delete_provenance(conn, i))
    exp_before, exp_after = before.get("experience"), after.get("experience")
    if exp_after is None and exp_before is not None:
        ksql.delete_experience(conn, node_id)
    elif exp_after is not None and exp_after != exp_before:
        ksql.put_experience(conn, {"target_node_id": node_id, **exp_after})


def _sync_children(conn, node_id, before: dict, after: dict, *, insert, update, delete) -> None:
    for cid in before.keys() - after.keys():
        delete(cid)
    for cid in sorted(after):
        if cid not in before:
            insert(cid, after[cid])
        elif before[cid] != after[cid]:
            update(cid, after[cid])


# ---- edges -------------------------------------------------------------------------------------------------

def load_edge(conn: apsw.Connection, key: str) -> dict[str, Any]:
    r = ksql.get_edge(conn, *parse_edge_key(key))
    return _clean(r, EDGE_FIELDS) if r else {}


def edge_doc_key(doc: dict[str, Any]) -> str:
    return edge_key(doc["source_id"], doc["relation_type"], doc["target_id"], doc["start_date"])


def save_edge(conn: apsw.Connection, before: dict[str, Any], after: dict[str, Any]) -> None:
    if not after:
        if before:
            ksql.delete_edge(conn, parse_edge_key(edge_doc_key(before)))
        return
    row = {k: after.get(k) for k in EDGE_FIELDS}
    if not before:
        ksql.insert_edge(conn, row)
    else:
        ksql.update_edge(conn, parse_edge_key(edge_doc_key(after)),
                         {k: row[k] for k in ("confidence", "lifecycle_state", "end_date", "payload")
                          if before.get(k) != row[k]})


def load(conn: apsw.Connection, target_id: str) -> dict[str, Any]:
    return load_edge(conn, target_id) if is_edge_key(target_id) else load_node(conn, target_id)


def save(conn: apsw.Connection, target_id: str, before: dict[str, Any], after: dict[str, Any]) -> None:
    if is_edge_key(target_id):
        save_edge(conn, before, after)
    else:
        save_node(conn, before, after)
