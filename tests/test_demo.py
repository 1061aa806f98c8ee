"""The README's first command runs the main job on the bundled sample."""

import apsw


def test_demo_runs_end_to_end(tmp_path, cli):
    db = tmp_path / "demo.db"
    proc = cli("demo", db=db)
    text = proc.stdout + proc.stderr
    assert "imported 40 conversations" in text
    assert "re-import of the same export: 40 unchanged" in text
    assert "MALFORMED_JSON" in text and "LONE_SURROGATE" in text
    conn = apsw.Connection(str(db))
    assert conn.execute("SELECT COUNT(*) FROM conversations").fetchone()[0] == 40
    assert conn.execute("SELECT COUNT(*) FROM rejects").fetchone()[0] == 0  # the damaged sample used its own vault
