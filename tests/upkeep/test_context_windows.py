"""Z5 (issue 24 §2): a back-link mention's context window is kept as where it lies in its message's text_raw;
the store reads it back exactly as the pipeline cut it, and an older vault's literal windows are placed by
migration 0122 so that they read the same."""

from __future__ import annotations

from kenning.store import upkeep as usql
from kenning.upkeep.mentions import context_window
from tests.beliefs.beliefs_helpers import add_conversation
from tests.old_vaults import migration_sql, vault_upto


def test_the_pipeline_stores_window_offsets_and_the_store_reads_the_window_back(vault):
    conn, cfg = vault.conn, vault.config.backlinks
    rows = conn.execute("SELECT d.mention_id, d.context_window, d.context_at, d.context_len, d.start_offset, "
                        "d.end_offset, m.text_raw FROM mention_observations_derived d JOIN messages m "
                        "ON m.message_id = d.observation_id").fetchall()
    assert len(rows) > 100
    placed = [r for r in rows if r[2] is not None]
    assert len(placed) == len(rows) and all(r[1] == "" for r in placed)   # every window of the sample is a slice
    for mid, _w, at, n, start, end, text in rows:
        want = context_window(text, start, end, cfg.coreference_window_chars)
        assert text[at:at + n] == want
        assert usql.get_mention(conn, mid)["context_window"] == want
    bundle = conn.execute("SELECT evidence_bundle_id FROM mention_observations_derived WHERE evidence_bundle_id "
                          "IS NOT NULL LIMIT 1").fetchone()[0]
    for m in usql.mentions_of_bundles(conn, [bundle]):
        text = conn.execute("SELECT text_raw FROM messages WHERE message_id=?", (m["observation_id"],)).fetchone()[0]
        assert m["context_window"] == context_window(text, m["start_offset"], m["end_offset"],
                                                     cfg.coreference_window_chars) != ""


def _mention(i: int, obs: str, window: str, start: int, end: int) -> tuple:
    return (f"mid{i}", obs, "node:a", None, "ada", "canonical_alias", "observed_mention", "private", "c1",
            "chat:user", "2024-06-01T00:00:00Z", start, end, "Ada", 0, None, f"mid{i}", None, "unresolved", 0.0, 0.0,
            None, window, "support", None)


def test_an_old_vaults_windows_are_placed_and_read_the_same():
    text = "We met at noon. Ada brought the maps. Then Ada left.\nAda"
    nul = "Ada\x00 said hi. Ada again."
    old = vault_upto(121)
    with old:
        add_conversation(old, "c1", "t", [("m1", "user", "2024-06-01T00:00:00.000Z", text),
                                          ("m2", "user", "2024-06-01T00:01:00.000Z", nul)])
        rows = [_mention(1, "m1", "We met at noon. Ada brought the maps.", 16, 19),
                _mention(2, "m1", "Ada brought the maps. Then Ada left.", 43, 46),
                _mention(3, "m1", "", 53, 56),                                   # empty: stays ''
                _mention(4, "m1", "a window the text does not hold", 16, 19),   # literal
                _mention(5, "m2", "Ada\x00 said hi.", 0, 3),                     # a text with NUL: literal
                _mention(6, "gone", "Ada left", 0, 3)]                           # no such message: literal
        old.executemany(f"INSERT INTO mention_observations_derived({', '.join(usql.MENTION_COLS)}) VALUES "
                        f"({', '.join('?' * len(usql.MENTION_COLS))})", rows)
    with old:
        old.execute(migration_sql(122))
    got = dict((r[0], r[1:]) for r in old.execute(
        "SELECT mention_id, context_window, context_at, context_len FROM mention_observations_derived"))
    assert got["mid1"] == ("", 0, 37) and got["mid2"] == ("", 16, 36)
    assert got["mid3"] == ("", None, None) and got["mid4"][1:] == (None, None) and got["mid5"][1:] == (None, None)
    assert got["mid6"] == ("Ada left", None, None)
    for r in rows:
        assert usql.get_mention(old, r[0])["context_window"] == r[22]
    # a fresh write places a window the same way (str.find = SQL instr), and keeps one it cannot place
    fresh = [dict(zip(usql.MENTION_COLS, _mention(i + 10, obs, w, 0, 3)))
             for i, (obs, w) in enumerate([("m1", "Ada brought the maps. Then Ada left."), ("m1", "elsewhere"),
                                           ("m2", "Ada\x00 said hi.")])]
    with old:
        assert usql.insert_mentions(old, fresh, {"m1": text, "m2": nul}) == 3
    got = dict((r[0], r[1:]) for r in old.execute(
        "SELECT mention_id, context_window, context_at, context_len FROM mention_observations_derived"))
    assert got["mid10"] == ("", 16, 36) and got["mid11"] == ("elsewhere", None, None)
    assert got["mid12"] == ("Ada\x00 said hi.", None, None)
    assert [usql.get_mention(old, f"mid{i}")["context_window"] for i in (10, 11, 12)] == \
        ["Ada brought the maps. Then Ada left.", "elsewhere", "Ada\x00 said hi."]
