"""The demo's issue-20 section on the bundled sample: counts, the top three review items, one approval."""

from __future__ import annotations

import shutil

import apsw

from kenning.cli.demo_review import demo_review


def test_demo_review_prints_counts_queue_and_an_approval(backlinks_db, tmp_path, hash_config_file, capsys):
    db = tmp_path / "v.db"
    shutil.copy(backlinks_db, db)
    demo_review(db, hash_config_file)
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert "Back-links and review (issue 20)" in text and "evidence bundles" in text
    assert "$ kenning review --page-size 3" in text and "$ kenning review approve" in text
    assert "α" in text and "confidence" in text and "undo: kenning rollback" in text
    assert len(text.strip().splitlines()) <= 15
    conn = apsw.Connection(str(db))
    assert conn.execute("SELECT count(*) FROM evidence_bundles_derived WHERE user_verdict='approved'").fetchone()[0] == 1
