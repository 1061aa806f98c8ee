"""A note that never became a conversation (a placeholder first version, §20B.2) is found by `kenning forget` and
leaves nothing behind — its versions, its intake observation (keyed by the note id) — and stays forgotten on the
next import unless asked back (decision H6)."""

import apsw

PLACEHOLDER = "TODO: zebracrossing idea"


def _notes(tmp_path):
    d = tmp_path / "notes"
    d.mkdir()
    (d / "long.md").write_text("# Trip\n\n" + "My goal is to visit Ljubljana with Sam next summer. " * 8)
    (d / "short.md").write_text(f"# Idea\n\n{PLACEHOLDER}")
    return d


def _count(db, sql, *args):
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(sql, args).fetchall()[0][0]
    finally:
        conn.close()


def _leftovers(db, note_id):
    return (_count(db, "SELECT count(*) FROM note_versions WHERE note_id=?", note_id),
            _count(db, "SELECT count(*) FROM intake_observations WHERE conversation_id=?", note_id),
            _count(db, "SELECT count(*) FROM note_versions WHERE content LIKE '%zebracrossing%'"))


def test_forget_finds_a_placeholder_note_and_it_stays_forgotten(tmp_path, cli):
    notes, db = _notes(tmp_path), tmp_path / "v.db"
    cli("ingest", str(notes), "--as-of", "2024-01-01T00:00:00Z", db=db)
    note_id = next(iter(apsw.Connection(str(db)).execute(
        "SELECT note_id FROM note_versions WHERE path='short.md' AND decision='skip_placeholder'")))[0]
    assert _count(db, "SELECT count(*) FROM conversations WHERE conversation_id=?", note_id) == 0
    assert _leftovers(db, note_id) == (1, 1, 1)

    r = cli("forget", "--source", "short.md", db=db)
    preview = r.stdout + r.stderr
    assert "would forget 1 conversation(s)" in preview and "short.md" in preview and "notes 2" in preview
    cli("forget", "--source", "short.md", "--yes", db=db)
    assert _leftovers(db, note_id) == (0, 0, 0)
    assert _count(db, "SELECT count(*) FROM note_versions WHERE path='long.md'") == 1   # the other note stays

    cli("ingest", str(notes), "--as-of", "2024-01-02T00:00:00Z", db=db)
    assert _leftovers(db, note_id) == (0, 0, 0)
    cli("ingest", str(notes), "--as-of", "2024-01-03T00:00:00Z", "--include-forgotten", db=db)
    assert _leftovers(db, note_id)[0] == 1

    # --matching finds a note by what its versions say, placeholder or not
    cli("forget", "--matching", "zebracrossing", "--yes", db=db)
    assert _leftovers(db, note_id) == (0, 0, 0)
