"""The person part of a context packet (decision H4): "before I talk to Sam" gets what the vault holds about Sam —
the node with its aliases, open obligations and live goals that name them, directives that mention them, the
current facts (edges) about them, the recent threads with them with what was decided and left open, and what the
user said about them — each line with its evidence quote and date, within the packet's budget. No model; reads
only (the packet's own recording is the caller's)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import apsw

from kenning.config import Config
from kenning.retrieve.delivery import as_utc, relation_label, tokens
from kenning.retrieve.graph_query import goal_status
from kenning.sources.timestamps import parse_utc
from kenning.store import knowledge as ksql
from kenning.store import knowledge_query as kq
from kenning.store import person_context as psql

# Part order = fill order: what a person owes or aims at with them first, the raw mentions last.
PARTS = ("person", "obligation", "goal", "directive", "fact", "thread", "said")


@dataclass
class _Item:
    part: str
    id: str
    line: str
    evidence: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None


def is_person(node: dict[str, Any] | None) -> bool:
    p = (node or {}).get("payload") or {}
    return bool(node) and node.get("node_kind") == "world_entity" and p.get("entity_type") == "person" \
        and not p.get("is_vault_owner")


def _clip(text: str, n: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _day(ts: str | None) -> str:
    return (ts or "")[:10]


class PersonPart:
    def __init__(self, conn: apsw.Connection, config: Config, person: dict[str, Any], *, now: str,
                 given: set[str], taken: set[str], hidden_messages: set[str], hidden_threads: set[str],
                 gated: set[tuple[str, str, str]] | None):
        self.conn, self.config, self.p, self.now = conn, config, person, as_utc(now)
        self.cfg = config.person_context
        self.cpt = config.knowledge.delivery.gate.chars_per_token
        self.given, self.taken = given, taken
        self.hidden_messages, self.hidden_threads = hidden_messages, hidden_threads
        self.gated = gated   # (other id, relation, direction) the edge gate lets an agent read; None: all
        self.names = self._names()

    def _names(self) -> list[str]:
        aliases = [a["normalized_alias"] for a in ksql.get_aliases(self.conn, self.p["id"])]
        return list(dict.fromkeys([self.p["canonical_name"], *aliases]))

    def _quote(self, q: dict[str, Any] | None) -> dict[str, Any] | None:
        """An evidence quote that may be shown (never one from incognito content)."""
        if not q or not q.get("quote") or q.get("message_id") in self.hidden_messages:
            return None
        return {"quote": _clip(q["quote"], self.cfg.quote_chars), "message_id": q.get("message_id"),
                "at": q.get("at")}

    def node_quote(self, node_id: str) -> dict[str, Any] | None:
        entries = [e for e in ksql.get_provenance(self.conn, node_id) if e.get("verbatim_excerpt")
                   and e.get("message_id") and e["message_id"] not in self.hidden_messages]
        if not entries:
            return None
        e = max(entries, key=lambda e: (e.get("created_at") or "", e["id"]))
        return self._quote({"quote": e["verbatim_excerpt"], "message_id": e["message_id"], "at": e.get("created_at")})

    @staticmethod
    def _with(line: str, ev: dict[str, Any] | None) -> str:
        return f"{line} — “{ev['quote']}” ({_day(ev['at'])})" if ev else line

    # ---- the parts -----------------------------------------------------------------------------------------

    def header(self, n_threads: int, latest: str | None) -> _Item:
        name = self.p["canonical_name"]
        others = [a for a in self.names[1:] if a.casefold() != name.casefold()][: self.cfg.max_aliases]
        aka = f"; also called {', '.join(others)}" if others else ""
        desc = ((self.p.get("payload") or {}).get("description") or "").strip()
        if desc.endswith("from your conversations"):   # the bridge's placeholder says nothing about them
            desc = ""
        line = f"About {name} (person{aka})" + (f": {_clip(desc, 80)}" if desc else "")
        if n_threads:
            line += f"; named in {n_threads} of your conversations, the latest {_day(latest)}"
        return _Item("person", self.p["id"], line + ".")

    def obligations(self) -> list[_Item]:
        open_ = set(self.config.knowledge.delivery.obligations.open_statuses)
        out = []
        for n in kq.linked_by_payload(self.conn, "obligation", [self.p["id"]], limit=self.cfg.max_obligations * 3):
            p = n.get("payload") or {}
            if p.get("status") not in open_:
                continue
            due = (p.get("deadline") or {}).get("date")
            late = ""
            try:
                if due and parse_utc(as_utc(due)) < parse_utc(self.now):
                    late = " (overdue)"
            except ValueError:
                pass
            what = p.get("obligation_description") or n["canonical_name"]
            line = f"Open obligation{', due ' + _day(due) + late if due else ''}: {what}"
            ev = self.node_quote(n["id"])
            out.append(_Item("obligation", n["id"], self._with(line, ev), ev, {"due": due}))
        return out[: self.cfg.max_obligations]

    def goals(self) -> list[_Item]:
        out = []
        for n in kq.linked_by_payload(self.conn, "goal", [self.p["id"]], limit=self.cfg.max_goals * 3):
            if goal_status(n) != "active":
                continue
            ev = self.node_quote(n["id"])
            out.append(_Item("goal", n["id"], self._with(f"Goal involving them: {n['canonical_name']}", ev), ev))
        return out[: self.cfg.max_goals]

    def directives(self) -> list[_Item]:
        words = [re.compile(rf"(?<!\w){re.escape(a)}(?!\w)", re.I) for a in self.names if len(a) >= 2]
        out = []
        for n in psql.directives_naming(self.conn, self.names, limit=self.cfg.max_directives * 4):
            p = n.get("payload") or {}
            text = " ".join([n["canonical_name"], str(p.get("summary") or ""), " ".join(p.get("applies_when") or [])])
            if not any(w.search(text) for w in words):
                continue
            label = (p.get("memory_type") or "directive").replace("_", " ")
            ev = self.node_quote(n["id"])
            out.append(_Item("directive", n["id"],
                             self._with(f"{label.capitalize()} that applies: {p.get('summary') or n['canonical_name']}",
                                        ev), ev))
        return out[: self.cfg.max_directives]

    def facts(self) -> list[_Item]:
        edges = psql.current_edges(self.conn, self.p["id"], limit=self.cfg.max_facts * 4)
        others = psql.node_names(self.conn, sorted({e["other_id"] for e in edges}))
        name = self.p["canonical_name"]
        out = []
        for e in sorted(edges, key=lambda e: (-(e["payload"].get("quoted_at") is not None),
                                              e["payload"].get("quoted_at") or "", e["relation_type"]), reverse=False):
            if self.gated is not None and (e["other_id"], e["relation_type"], e["direction"]) not in self.gated:
                continue
            o = others.get(e["other_id"])
            if o is None:
                continue
            op = from_payload(o)
            other = "you" if op.get("is_vault_owner") else o["canonical_name"]
            label = relation_label(e["relation_type"])
            subject, obj = (name, other) if e["direction"] == "out" else (other, name)
            if subject == "you":   # "you has partner Sam" → "You have partner Sam"
                label = re.sub(r"^(has|is|was)\b", lambda m: {"has": "have", "is": "are", "was": "were"}[m.group(1)],
                               label)
            line = f"{subject} {label} {obj}"
            line = line[0].upper() + line[1:]
            pl = e["payload"]
            mid = (pl.get("quote_ref") or "").removeprefix("message:").split("#")[0] or None
            ev = self._quote({"quote": pl.get("quote"), "message_id": mid, "at": pl.get("quoted_at")})
            out.append(_Item("fact", f"{self.p['id']}:{e['relation_type']}:{e['other_id']}", self._with(line, ev), ev,
                             {"relation": e["relation_type"], "other_id": e["other_id"]}))
        out.sort(key=lambda i: (i.evidence or {}).get("at") or "", reverse=True)
        return out[: self.cfg.max_facts]

    def threads(self, rows: list[dict[str, Any]]) -> list[_Item]:
        out = []
        for t in rows:
            if t["thread_id"] in self.hidden_threads:
                continue
            bits = []
            cp = psql.latest_checkpoint(self.conn, t["thread_id"])
            decided = cp["description"] if cp else (t["key_decisions"][-1] if t["key_decisions"] else None)
            if decided:
                bits.append(f"decided: {_clip(decided, 90)}")
            if t["unresolved_items"]:
                bits.append("open: " + "; ".join(_clip(u, 60) for u in t["unresolved_items"][:2]))
            if not bits and t.get("checkpoint_summary"):
                summary = t["checkpoint_summary"]
                if summary.startswith(t["title_hint"]):   # the extractive summary opens with the title again
                    summary = summary[len(t["title_hint"]):].lstrip(" .:")
                bits.append(_clip(summary, 80))
            line = f"Conversation {_day(t['occurred_at'])} “{t['title_hint']}”" + (": " + " · ".join(bits)
                                                                                     if bits else "")
            ev = None
            if cp and cp.get("message_id"):
                ev = {"quote": _clip(cp["description"], self.cfg.quote_chars), "message_id": cp["message_id"],
                      "at": cp.get("occurred_at")} if cp["message_id"] not in self.hidden_messages else None
            out.append(_Item("thread", t["thread_id"], line, ev, {"thread_id": t["thread_id"],
                                                                  "occurred_at": t["occurred_at"],
                                                                  "substance": bool(decided or t["unresolved_items"])}))
        return out

    def said(self, shown: set[str]) -> list[_Item]:
        out = []
        for q in psql.quotes_about(self.conn, self.p["id"], limit=self.cfg.max_said * 4):
            ev = self._quote(q)
            if ev is None or ev["quote"] in shown:
                continue
            who = "You" if q.get("authorial_voice") in (None, "self") else "Said"
            out.append(_Item("said", f"{self.p['id']}:said:{q['message_id']}",
                             f"{who} ({_day(ev['at'])}): “{ev['quote']}”", ev))
            shown.add(ev["quote"])
        return out[: self.cfg.max_said]

    # ---- the section ---------------------------------------------------------------------------------------

    def build(self, room: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The section's items within min(room, max_tokens), in PARTS order; the header always first."""
        cap = min(room, self.cfg.max_tokens)
        thread_rows = [t for t in psql.threads_with(self.conn, self.p["id"], limit=self.cfg.max_threads * 3)
                       if t["thread_id"] not in self.hidden_threads]
        from kenning.store import corpus as csql

        n_threads = csql.linked_thread_count(self.conn, [self.p["id"]]) if thread_rows else 0
        candidates = [self.header(n_threads, thread_rows[0]["occurred_at"] if thread_rows else None)]
        candidates += self.obligations() + self.goals() + self.directives()
        facts = self.facts()
        candidates += facts
        threads = self.threads(thread_rows)
        threads.sort(key=lambda i: not (i.extra or {}).get("substance"))   # decided / open ones first (stable)
        candidates += threads[: self.cfg.max_threads]
        candidates += self.said({i.evidence["quote"] for i in facts if i.evidence})
        # round-robin over the parts (each part's best first), so a tight budget gets one of each kind before a
        # second of any; the items then read in PARTS order
        by_part: dict[str, list[_Item]] = {p: [] for p in PARTS}
        for c in candidates:
            if c.id not in self.given and (c.part == "person" or c.id not in self.taken):
                by_part[c.part].append(c)
        chosen: list[tuple[int, int, _Item, int]] = []
        used, left_out, rnd = 0, 0, 0
        while any(len(v) > rnd for v in by_part.values()):
            for pi, p in enumerate(PARTS):
                if len(by_part[p]) <= rnd:
                    continue
                c = by_part[p][rnd]
                t = tokens(c.line, self.cpt)
                if used + t > cap:
                    left_out += 1
                    continue
                used += t
                chosen.append((pi, rnd, c, t))
            rnd += 1
        items = [{"id": c.id, "part": c.part, "line": c.line, "tokens": t, "evidence": c.evidence, **(c.extra or {})}
                 for _pi, _r, c, t in sorted(chosen, key=lambda x: (x[0], x[1]))]
        tel = {"person_node_id": self.p["id"], "person_tokens": used, "person_items_left_out": left_out,
               "person_parts": {p: sum(1 for i in items if i["part"] == p) for p in PARTS
                                if any(i["part"] == p for i in items)}}
        return items, tel


def from_payload(row: dict[str, Any]) -> dict[str, Any]:
    p = row.get("payload")
    if isinstance(p, str):
        from kenning.store.knowledge import from_json

        return from_json(p) or {}
    return p or {}
