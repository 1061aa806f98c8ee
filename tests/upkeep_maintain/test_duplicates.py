"""Near-duplicate evidence beyond exact aliases (G61): nicknames from the bundled table, first/last-name-only
names, typos — each only with shared context, a unique pairing and no conflicting identity attribute."""

from __future__ import annotations

import pytest

from kenning.config import load_config
from kenning.store.connection import open_store
from kenning.upkeep.maintain.duplicates import conflicting_attributes, propose_pairs
from kenning.upkeep.maintain.nicknames import given_names_of, same_given_name
from tests.upkeep_maintain.helpers import edge, node


@pytest.fixture
def conn(tmp_path):
    c = open_store(tmp_path / "v.db")
    yield c
    c.close()


def person(conn, name: str, at_org: str | None = None, **payload) -> str:
    nid = node(conn, name, state="confirmed", payload={"entity_type": "person", **payload})
    if at_org:
        edge(conn, nid, "affiliated_with", at_org)
    return nid


def pairs(conn) -> dict[frozenset, str]:
    return {frozenset((p.a, p.b)): p.evidence for p in propose_pairs(conn, load_config())}


def test_the_nickname_table():
    assert given_names_of("bob") == {"robert"} and same_given_name("bob", "robert")
    assert same_given_name("liz", "elizabeth") and same_given_name("liz", "beth")  # both short forms of one name
    assert "christina" in given_names_of("chris") and "christopher" in given_names_of("chris")
    assert not same_given_name("alexander", "alexandra") and not same_given_name("robert", "robert")
    assert given_names_of("zork") == frozenset()


def test_nicknames_and_name_parts_with_shared_context_are_proposed(conn):
    acme = node(conn, "Acme", state="confirmed", payload={"entity_type": "organization"})
    robert = person(conn, "Robert Hill", acme)
    bob = person(conn, "Bob", acme)
    liz = person(conn, "Liz Crane", acme)
    elizabeth = person(conn, "Elizabeth Crane", acme)
    henrietta = person(conn, "Henrietta Vance", acme)
    vance = person(conn, "Vance", acme)
    lone_bill = person(conn, "Bill")  # no context: no evidence
    william = person(conn, "William Stone", acme)
    p = pairs(conn)
    assert p[frozenset((robert, bob))] == "nickname"
    assert p[frozenset((liz, elizabeth))] == "nickname"
    assert p[frozenset((henrietta, vance))] == "name_part"
    assert not any(lone_bill in k for k in p) and not any(william in k for k in p)


def test_a_short_name_beside_two_candidates_is_no_evidence(conn):
    """Two different people share a first name: "Daniel" could be either, so neither is proposed; "Chris Lane"
    could be Christopher or Christina."""
    acme = node(conn, "Acme", state="confirmed", payload={"entity_type": "organization"})
    daniel = person(conn, "Daniel", acme)
    ortiz, meyer = person(conn, "Daniel Ortiz", acme), person(conn, "Daniel Meyer", acme)
    chris = person(conn, "Chris Lane", acme)
    christopher, christina = person(conn, "Christopher Lane", acme), person(conn, "Christina Lane", acme)
    p = pairs(conn)
    assert not any(daniel in k for k in p) and not any(chris in k for k in p)
    assert frozenset((ortiz, meyer)) not in p and frozenset((christopher, christina)) not in p


def test_typos_but_not_two_given_names_nor_conflicting_attributes(conn):
    acme = node(conn, "Acme", state="confirmed", payload={"entity_type": "organization"})
    a, b = person(conn, "Katherine Moreau", acme), person(conn, "Katherine Moraeu", acme)
    twins = person(conn, "Alexander Novak", acme), person(conn, "Alexandra Novak", acme)
    colleagues = person(conn, "Marco Rossi", acme), person(conn, "Mario Rossi", acme)
    namesakes = (person(conn, "Jana Hofmann", acme, email="jana@hofmann.example"),
                 person(conn, "Jana Hoffmann", acme, email="j.hoffmann@corp.example"))
    p = pairs(conn)
    assert p[frozenset((a, b))] == "typo"
    for pair in (twins, colleagues, namesakes):
        assert frozenset(pair) not in p
    assert conflicting_attributes({"email": "A@x"}, {"email": "a@x"}, ["email"]) is None
    assert conflicting_attributes({"entity_type": "person"}, {"entity_type": "organization"},
                                  ["entity_type"]) == "entity_type"
    assert conflicting_attributes({"email": "a@x"}, {}, ["email"]) is None  # missing is not a conflict


def test_the_owner_and_hubs_are_no_shared_context(conn):
    """Everyone is linked to the vault owner, and many to a big employer: that is no evidence two names are one."""
    from kenning.config import load_config as _load

    me = node(conn, "Maya Owner", state="confirmed", payload={"entity_type": "person", "is_vault_owner": True})
    bob, fischer = person(conn, "Bob"), person(conn, "Robert Fischer")
    edge(conn, me, "collaborated_with", bob)
    edge(conn, me, "collaborated_with", fischer)
    assert not pairs(conn)
    big = node(conn, "Megacorp", state="confirmed", payload={"entity_type": "organization"})
    edge(conn, bob, "affiliated_with", big)
    edge(conn, fischer, "affiliated_with", big)
    assert pairs(conn) == {frozenset((bob, fischer)): "nickname"}  # a small shared employer is context …
    cfg = _load(overrides={"backlinks": {"hub_threshold": 1}})
    assert not propose_pairs(conn, cfg)  # … a hub is not
