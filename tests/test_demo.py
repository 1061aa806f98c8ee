"""The README's first command runs the main job on the bundled sample."""

import re

import apsw


def test_demo_story_is_short_and_tells_the_story(tmp_path, cli):
    """`make demo` (issue 23 §4): about a screen and a half — import, who matters, a belief with its verified quote, a
    change of mind, a contradiction, a search, the picture, what an assistant gets, what to try next."""
    db = tmp_path / "demo.db"
    proc = cli("demo", db=db, timeout=900)
    text = proc.stdout
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert len(lines) <= 70, len(lines)
    assert "Imported 40 conversations and 829 messages" in text and "changed nothing (40 unchanged)" in text
    assert "2 rejected with the record and the reason" in text
    assert "People: Sam" in text
    assert re.search(r'kenning why "where do I live\?" → I live in Paris \(said \d+ times\)', text)
    assert "✓ verified against the message" in text
    assert "A change of mind: in 2023-03 “Berlin” gave way to “Paris”" in text
    assert "A contradiction in what you say about yourself:" in text
    assert "Anna: Hey Sam! Guess what, I got the job in Lisbon." in text
    assert (tmp_path / "timeline.png").read_bytes()[:4] == b"\x89PNG"
    assert "Sam (person)" in text and f"kenning ui --db {db}" in text
    assert "vector_items" not in text and "assertion_tx_history" not in text   # no row dumps in the story
    # issue 23 §1: one line previewing `kenning forget` (nothing changes)
    assert 'Forget: kenning forget --conversation "Lisbon trip & hiking" would remove it, its 17 messages' in text
    assert apsw.Connection(str(db)).execute("SELECT count(*) FROM conversations WHERE title = ?",
                                            ("Lisbon trip & hiking",)).fetchone()[0] == 1     # only a preview
    assert lines[-1].startswith(f"open it in your browser: kenning ui --db {db}")   # issue 21: ends with the UI
    assert re.search(r"Intake funnel: \d+ turns and conversations assessed with rules, \d+ mined", text)
    assert "• 43 conversations summarised as threads" in text and "`kenning resume` picks up" in text   # issue 18


def test_demo_runs_end_to_end(tmp_path, cli):
    db = tmp_path / "demo.db"
    proc = cli("demo", "--verbose", db=db, timeout=900)   # a loaded shared box takes minutes; the demo now also runs seed 000
    text = proc.stdout + proc.stderr
    # seed 002 on the bundled wiki: a why answer with what it replaced
    assert "Why do I believe this?" in text
    assert "Now: Acme's OAuth refresh endpoint is /auth/v2/refresh as of 2026-03-15." in proc.stdout
    assert "What it replaced:" in proc.stdout
    assert "imported 40 conversations" in text
    assert "re-import of the same export: 40 unchanged" in text
    assert "MALFORMED_JSON" in text and "LONE_SURROGATE" in text
    # the hybrid search, and the same search through the MCP server's `search` tool (R61)
    assert "kenning search 'When did Anna move to Lisbon?'" in text
    agents = text.split("agents: `kenning serve mcp` offers why, beliefs_list, belief_history, search", 1)
    assert len(agents) == 2 and "Lisbon" in agents[1].splitlines()[1]
    conn = apsw.Connection(str(db))
    assert conn.execute("SELECT COUNT(*) FROM conversations WHERE source_kind='chatgpt'").fetchone()[0] == 40
    assert conn.execute("SELECT COUNT(*) FROM rejects").fetchone()[0] == 0  # the damaged sample used its own vault
    # stage 4 in the demo: the author's residence, work and family, with quotes
    assert "you — where you live" in text and "“I moved to Paris”" in text
    assert "you — family and friends" in text and "“My partner Sam”" in text
    assert "you confirmed it" in text and "temporal_bound: “I stopped running” → linked" in text
    assert conn.execute("SELECT COUNT(*) FROM assertions").fetchone()[0] > 50
    # stages 5–6: history, a bitemporal answer, conflicts and the timeline picture
    assert "kenning history lives_in" in text and "Berlin" in text
    assert "--believed-at 2023-01-15" in text and "kenning conflicts:" in text
    assert "kenning timeline --self --png timeline.png" in text
    assert (tmp_path / "timeline.png").read_bytes()[:4] == b"\x89PNG"
    assert conn.execute("SELECT COUNT(*) FROM graph_nodes WHERE node_type='TemporalWindow'").fetchone()[0] > 5
    # seed 000 in the demo: beliefs the author would recognise, and a contradiction
    assert "kenning self list" in text
    for belief in ("I value honesty more than comfort.", "I am curious.", "I overthink decisions."):
        assert belief in text
    assert "contradiction: “I am a runner.” vs “I am not a runner.”" in text or \
        "contradiction: “I am not a runner.” vs “I am a runner.”" in text
    # issue 19: the demo ends with a context packet and a brief for the sample user's most important person
    assert "Knowledge for an assistant (issue 19)" in text and "your most important person: Sam" in text
    assert "Back-links and review (issue 20)" in text and "$ kenning review approve" in text
    assert '$ kenning context "What should I keep in mind before I talk to Sam?"' in text
    assert "  Sam (person)\n" in proc.stdout and "gate tokens" in proc.stdout and "no model" in proc.stdout
    assert "$ kenning brief 'Sam'" in text and "Sam — person" in proc.stdout
    # seed 002 on the chats: a question in plain words, a contested answer, the same question in a time window
    assert '$ kenning why "where do I live?"' in text and '$ kenning why "where do I live?" --until 2023-03-31' in text
    assert re.search(r"^  current +I live in Paris \(said \d+ times", proc.stdout, re.M)      # one answer, counted
    assert re.search(r"^  contested +I live in ", proc.stdout, re.M)                          # two homes at once
    # issue 23: forget one sample conversation in a copy of the demo vault; its phrase is gone from search and bytes
    assert '$ kenning forget --conversation "Lisbon trip & hiking"' in text
    assert re.search(r"kenning search 'cilantro': [1-9]\d* hits quoting it before, 0 after; in the file's bytes: gone",
                     proc.stdout)
    assert conn.execute("SELECT count(*) FROM conversations WHERE title='Lisbon trip & hiking'").fetchone()[0] == 1
    # issue 21: the demo ends with the one command that opens the UI on this vault
    assert proc.stdout.rstrip().splitlines()[-1].startswith(f"open it in your browser: kenning ui --db {db}")
    # issue 18: the funnel's decisions with reasons, the queue, and an incognito conversation leaving nothing
    assert "Intake funnel (issue 18)" in text and "observations assessed (rules only, no model)" in text
    assert re.search(r"^  skip +\d+  score_dispatch\+below_shallow_threshold", proc.stdout, re.M)
    assert re.search(r"Ljubljana.*: [1-9]\d* node\(s\) learned only from it retracted", text.replace("\n", " "))
    assert "0 trace(s) of it left on active nodes" in text.replace("\n", " ")
    # issue 18 parts 6–7: the thread list, a bundled Claude export and notes folder imported, the resume card
    assert "$ kenning threads" in text and "Week plan at Globex" in text
    assert "1 Claude conversation(s), 1 note(s) mined, 1 placeholder note(s) kept but not mined" in text
    assert "$ kenning resume\n[Prior Context — reference]\nThread: Settling in Paris (note" in proc.stdout
    assert "- We decided to keep the flat near Canal Saint-Martin" in proc.stdout
    # 40 chats, 3 sessions, 2 new — less the conversation made incognito: its thread went with the rest (I72)
    assert conn.execute("SELECT COUNT(*) FROM conversation_threads").fetchone()[0] == 44
    assert re.search(r"[1-9]\d* derived row\(s\) removed", text.replace("\n", " "))
    # issue 18: goals, obligations with the .ics export, a procedure and a standing procedure from the bundled chats
    assert "Goals, obligations, procedures and rules from your chats (issue 18)" in text
    assert "goal: run three times a week (active) — part of “run the Berlin half marathon”" in proc.stdout
    assert "obligation: renew my passport — due 2024-02-15T23:59:00+00:00 (statutory, overdue)" in proc.stdout
    assert (tmp_path / "obligations.ics").read_bytes().count(b"BEGIN:VEVENT") == 2
    assert "procedure: back up my laptop (captured, your own steps)" in proc.stdout
    assert "standing: when a backup fails → remind me to rerun it the same evening" in proc.stdout
    # issue 20: health and a maintain dry run on the sample
    assert "$ kenning maintain --dry-run" in text and "knowledge debt" in text
