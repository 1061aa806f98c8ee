"""Graph exports: JSON (one document), GraphML (Gephi, yEd), CSV (nodes.csv, edges.csv)."""

from __future__ import annotations

import csv
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import orjson

from kenning.privatefs import open_private


def _meta(s: str | None) -> dict:
    return orjson.loads(s) if s else {}


def export_json(nodes: list[dict], edges: list[dict]) -> str:
    doc = {"format": "kenning.graph/1",
           "nodes": [{"id": n["node_id"], "type": n["node_type"], "source_id": n["source_id"], "label": n["label"],
                      "metadata": _meta(n["metadata_json"])} for n in nodes],
           "edges": [{"id": e["edge_id"], "type": e["edge_type"], "source": e["src_node_id"],
                      "target": e["dst_node_id"], "metadata": _meta(e["metadata_json"])} for e in edges]}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def export_graphml(nodes: list[dict], edges: list[dict]) -> str:
    """GraphML with label, type, source_id and the metadata as a JSON string (yEd and Gephi read string keys)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
             '  <key id="label" for="node" attr.name="label" attr.type="string"/>',
             '  <key id="type" for="node" attr.name="type" attr.type="string"/>',
             '  <key id="source_id" for="node" attr.name="source_id" attr.type="string"/>',
             '  <key id="meta" for="node" attr.name="metadata" attr.type="string"/>',
             '  <key id="etype" for="edge" attr.name="type" attr.type="string"/>',
             '  <key id="emeta" for="edge" attr.name="metadata" attr.type="string"/>',
             '  <graph id="kenning" edgedefault="directed">']
    for n in nodes:
        lines.append(f'    <node id={quoteattr(n["node_id"])}><data key="label">{escape(n["label"])}</data>'
                     f'<data key="type">{escape(n["node_type"])}</data>'
                     f'<data key="source_id">{escape(n["source_id"])}</data>'
                     f'<data key="meta">{escape(n["metadata_json"] or "")}</data></node>')
    for e in edges:
        lines.append(f'    <edge id={quoteattr(e["edge_id"])} source={quoteattr(e["src_node_id"])} '
                     f'target={quoteattr(e["dst_node_id"])}><data key="etype">{escape(e["edge_type"])}</data>'
                     f'<data key="emeta">{escape(e["metadata_json"] or "")}</data></edge>')
    lines += ["  </graph>", "</graphml>", ""]
    return "\n".join(lines)


def export_csv(nodes: list[dict], edges: list[dict], folder: Path) -> list[Path]:
    np_, ep = folder / "nodes.csv", folder / "edges.csv"
    with open_private(np_, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["node_id", "node_type", "source_id", "label", "metadata_json"])
        for n in nodes:
            w.writerow([n["node_id"], n["node_type"], n["source_id"], n["label"], n["metadata_json"]])
    with open_private(ep, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["edge_id", "edge_type", "src_node_id", "dst_node_id", "metadata_json"])
        for e in edges:
            w.writerow([e["edge_id"], e["edge_type"], e["src_node_id"], e["dst_node_id"], e["metadata_json"] or ""])
    return [np_, ep]
