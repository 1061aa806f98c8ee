"""Synthetic knowledge graph for the upkeep benchmark (issue 20 part 6), and the planted cases the synthetic
export's manifest records under ``upkeep``.

Planted (ground truth):
- duplicate people, each a cluster of one person under several names: full name + nickname ("Robert Hill" /
  "Bob"), full name + typo ("Katherine Moreau" / "Katherine Moraeu"), full name + a name the pipeline already
  recorded as an alias of the other node (the exact-alias case, the only one a model-less fold may take), full
  name + nickname with the surname ("Thomas Becker" / "Tom Becker"), full name + first name only ("Henrietta
  Vance" / "Henrietta"), and trios under full name, nickname and a typo ("Samuel Ferreira" / "Sam Ferreira" /
  "Samuel Fereira");
- distractors, different people who look alike in the same company: two people sharing a first name beside a
  lone first name ("Daniel Ortiz", "Daniel Meyer", "Daniel"), an ambiguous short form ("Chris Dunn" beside
  Christopher and Christina Dunn), twins and colleagues whose given names differ by a letter ("Alexander" /
  "Alexandra Novak", "Marco" / "Mario Rossi"), and look-alike names whose e-mail or birthday differ;
- a one-off mention (a person seen once, in one thread);
- a recurring weekly pattern (the same three nodes together every Monday for eight weeks).
All names of a planted group link to one shared node (the same employer): the context a real duplicate has, and
the context that makes a distractor dangerous.
Filler nodes get names from a first × last name grid, so near-duplicate filler names (real-world noise) exist too.
Only ``random.Random(seed)`` is used: the same seed gives the same graph."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Iterator

FIRST = ("Anna", "Ben", "Carla", "David", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Liam",
         "Maya", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wes", "Xenia", "Yusuf",
         "Zoe", "Amir", "Bea", "Cyril", "Dana", "Emil", "Fiona", "Gil", "Hana", "Ivo", "Jade", "Karl", "Lena",
         "Milo", "Nora")
LAST = ("Adler", "Bauer", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova", "Jensen",
        "Kowalski", "Larsen", "Moreno", "Novak", "Okafor", "Petrov", "Quist", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Weber", "Xu", "Yilmaz", "Zeller", "Abbott", "Brandt", "Conti", "Dahl", "Esposito",
        "Falk", "Gruber", "Holm", "Ito", "Janssen", "Keller", "Lund", "Marino", "Nagy", "Olsen", "Park",
        "Quinn", "Ruiz", "Sato", "Toth", "Urban", "Vogel", "Wolf", "Young")
# (full name, nickname) — a nickname shares nothing with the full name a rule could see
NICKNAMES = (("Robert Hill", "Bob"), ("Margaret Lowe", "Peggy"), ("William Stone", "Bill"),
             ("Elizabeth Crane", "Betsy"), ("Richard Fenn", "Dick"), ("Alexander Moss", "Sasha"),
             ("Katherine Wood", "Kit"), ("Theodore Blake", "Teddy"), ("Josephine Hart", "Jo"),
             ("Francis Doyle", "Frank"))
TYPOS = (("Katherine Moreau", "Katherine Moraeu"), ("Priya Sharma", "Pryia Sharma"),
         ("Jonathan Whitfield", "Jonathan Whitfeld"), ("Magdalena Kowalczyk", "Magdalena Kowalcyk"),
         ("Sebastian Lindqvist", "Sebastian Lindquist"), ("Charlotte Beaumont", "Charlotte Beaumont-"),
         ("Giovanni Bellucci", "Giovani Bellucci"), ("Annika Johansson", "Annika Johanson"),
         ("Dmitri Volkov", "Dimitri Volkov"), ("Rebecca Thornton", "Rebbeca Thornton"))
# (full name, short name recorded as an alias of the full-name node; a second node carries it as its name)
ALIASED = (("Samuel Okonkwo", "Sam Okonkwo"), ("Veronika Hollis", "Vero Hollis"), ("Timothy Ashford", "Tim Ashford"),
           ("Isabella Moretti", "Bella Moretti"), ("Nicholas Varga", "Nick Varga"), ("Jennifer Walsh", "Jen Walsh"),
           ("Christopher Lane", "Chris Lane"), ("Patricia Quinn", "Pat Quinn"), ("Benjamin Roth", "Ben Roth"),
           ("Victoria Sterling", "Vicky Sterling"))
NICK_FULL = (("Thomas Becker", "Tom Becker"), ("Jennifer Adair", "Jenny Adair"), ("Michael Corrigan", "Mike Corrigan"),
             ("Patricia Kessler", "Trish Kessler"), ("Nicholas Harlow", "Nick Harlow"),
             ("Stephen Whitcombe", "Steve Whitcombe"))
FIRST_ONLY = (("Henrietta Vance", "Henrietta"), ("Bartholomew Price", "Bartholomew"), ("Octavia Reyes", "Octavia"),
              ("Leopold Marsh", "Leopold"))
TRIOS = (("Samuel Ferreira", "Sam Ferreira", "Samuel Fereira"),
         ("Margaret Ellison", "Peggy Ellison", "Margaret Elisson"),
         ("Elizabeth Norberg", "Liz Norberg", "Elizabeth Norbreg"))
# different people who look alike, in the same company; attrs: payload attributes that tell them apart
DISTRACTORS = (
    {"kind": "shared_first_name", "names": ["Daniel Ortiz", "Daniel Meyer", "Daniel"]},
    {"kind": "shared_first_name", "names": ["Sophie Laurent", "Sophie Marchand", "Sophie"]},
    {"kind": "ambiguous_short_form", "names": ["Christopher Dunn", "Christina Dunn", "Chris Dunn"]},
    {"kind": "given_name_variant", "names": ["Alexander Novak", "Alexandra Novak"]},
    {"kind": "given_name_variant", "names": ["Marco Rossi", "Mario Rossi"]},
    {"kind": "conflicting_attributes", "names": ["Jana Hofmann", "Jana Hoffmann"],
     "attrs": [{"email": "jana@hofmann.example"}, {"email": "j.hoffmann@corp.example"}]},
    {"kind": "conflicting_attributes", "names": ["Peter Lindgren", "Peter Lindgreen"],
     "attrs": [{"birthday": "1980-04-02"}, {"birthday": "1975-11-19"}]},
)
WEEKLY = ("Maya Weekly-Sync", "Team standup notes", "Budget tracker")
ONE_OFF = "Dr. Ansel Quimby"


_C, _V = "bdfgklmnprstvz", "aeiou"


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(_C[rng.randrange(len(_C))] + _V[rng.randrange(len(_V))] for _ in range(syllables))


def planted(seed: int = 1) -> dict:
    """The manifest's ``upkeep`` section: what the upkeep benchmark checks maintain against."""
    rng = random.Random(f"upkeep:{seed}")
    return {
        "duplicates": (
            [{"kind": "nickname", "names": list(p)} for p in NICKNAMES]
            + [{"kind": "typo", "names": list(p)} for p in TYPOS]
            + [{"kind": "exact_alias", "names": list(p), "alias": p[1]} for p in ALIASED]
            + [{"kind": "nickname_full_name", "names": list(p)} for p in NICK_FULL]
            + [{"kind": "first_name_only", "names": list(p)} for p in FIRST_ONLY]
            + [{"kind": "nickname_typo_trio", "names": list(p)} for p in TRIOS]),
        "distractors": [dict(d) for d in DISTRACTORS],
        "one_off_mention": {"name": ONE_OFF, "threads": 1},
        "weekly_pattern": {"names": list(WEEKLY), "weeks": 8, "weekday": "Monday",
                           "hour": 9 + rng.randrange(3)},
    }


@dataclass
class NodeSpec:
    name: str
    kind: str = "world_entity"
    state: str = "confirmed"
    aliases: tuple[str, ...] = ()
    sightings: list[tuple[str, int, str]] = field(default_factory=list)  # (thread, position, when)
    cluster: str | None = None  # ground truth: the planted duplicate cluster this node belongs to
    days_old: int = 10
    attrs: dict = field(default_factory=dict)  # payload attributes (a distractor's e-mail, birthday)
    group: int | None = None  # the planted group (duplicate or distractor) whose shared node it links to


def graph(n_nodes: int, seed: int = 1, *, now_day: str = "2026-03-01") -> tuple[list[NodeSpec], list[tuple]]:
    """``n_nodes`` node specs (planted cases first) and edges (i, relation, j, confidence) between them."""
    rng = random.Random(f"graph:{seed}")
    nodes: list[NodeSpec] = []
    plan = planted(seed)
    groups = [(f"dup{i}", d) for i, d in enumerate(plan["duplicates"])] + [(None, d) for d in plan["distractors"]]
    for g, (cluster, d) in enumerate(groups):
        for k, name in enumerate(d["names"]):
            aliases = (d["alias"],) if d.get("alias") and k == 0 else ()
            nodes.append(NodeSpec(name, aliases=aliases, cluster=cluster, group=g,
                                  attrs=dict(d["attrs"][k]) if d.get("attrs") else {}))
    n_planted_people = len(nodes)
    nodes.append(NodeSpec(ONE_OFF, sightings=[("oneoff-thread", 0, f"{now_day}T08:00:00.000Z")]))
    day0 = dt.date.fromisoformat(now_day) - dt.timedelta(days=7 * 8 + 1)
    monday = day0 + dt.timedelta(days=(7 - day0.weekday()) % 7)
    for pos, name in enumerate(WEEKLY):
        kind = "world_entity" if pos == 0 else "work_product"
        nodes.append(NodeSpec(name, kind=kind, sightings=[
            (f"weekly{w}", pos, f"{monday + dt.timedelta(days=7 * w)}T{plan['weekly_pattern']['hour']:02d}:00:00.000Z")
            for w in range(8)]))
    seen: set[str] = {n.name.casefold() for n in nodes}
    kinds = ("world_entity",) * 7 + ("goal", "domain_concept", "work_product")
    i = 0
    while len(nodes) < n_nodes:
        i += 1
        kind = kinds[rng.randrange(len(kinds))]
        if kind == "world_entity":
            name = f"{FIRST[rng.randrange(len(FIRST))]} {_word(rng, 3).capitalize()}"
        else:
            name = f"{_word(rng, 2)} {_word(rng, 3)}"
        if name.casefold() in seen:
            continue
        seen.add(name.casefold())
        state = "observed" if rng.random() < 0.05 else "confirmed"
        nodes.append(NodeSpec(name, kind=kind, state=state, days_old=20 if state == "observed" else 10))
    # threads: groups of 3–6 filler nodes seen together, once each (noise for the clique step)
    filler = list(range(n_planted_people + 1 + len(WEEKLY), len(nodes)))
    rng.shuffle(filler)
    t = 0
    pos = 0
    while pos < len(filler):
        size = 3 + rng.randrange(4)
        day = dt.date.fromisoformat(now_day) - dt.timedelta(days=1 + rng.randrange(300))
        for k, idx in enumerate(filler[pos:pos + size]):
            nodes[idx].sightings.append((f"t{t}", k, f"{day}T12:00:00.000Z"))
        pos += size
        t += 1
    edges = []
    # a planted group is seen in the same company: all its names link to one shared node (the context a typo'd
    # duplicate really has — the same colleagues, the same employer — and what makes a look-alike dangerous)
    for i in range(n_planted_people):
        first = i == 0 or nodes[i - 1].group != nodes[i].group
        edges.append((i, "affiliated_with", filler[nodes[i].group], 0.8 if first else 0.6))
    rels = ("collaborated_with", "affiliated_with", "part_of", "used_in")
    for _ in range(int(n_nodes * 1.5)):
        a, b = rng.randrange(len(nodes)), rng.randrange(len(nodes))
        if a != b:
            edges.append((a, rels[rng.randrange(len(rels))], b, round(0.3 + 0.6 * rng.random(), 3)))
    return nodes, edges


def iter_truth_pairs(nodes: list[NodeSpec]) -> Iterator[tuple[int, int]]:
    by: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        if n.cluster:
            by.setdefault(n.cluster, []).append(i)
    for members in by.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                yield members[x], members[y]
