"""A small hand-built corpus exercising stages 2A–3 (digest §C "Detectors", "Lexicon", "Times")."""

from __future__ import annotations

from exportkit import conversation

DAY = 86400
T0 = 1_710_000_000.0  # 2024-03-09T16:00:00Z

# "Astral emoji and combining marks before spans": 🎉 is one code point (two UTF-16 units), e + U+0301 two.
EMOJI_PREFIX = "🎉🧑‍💻 e\u0301te\u0301 "


def corpus() -> list[dict]:
    convs = []
    for i in range(4):
        convs.append(conversation(f"conv-phoenix-{i}", [
            ("user", f"{EMOJI_PREFIX}Project Phoenix update {i}: PHX is on track, said my sister Anna. "
                     f"Mail anna@example.com or see https://example.com/phoenix?x={i}#top."),
            ("assistant", f"Great: Project Phoenix sounds good. ACME Corp will like it, and ACME Corp again. "
                          f"Sentinel mentions {i}."),
            ("user", f"I work at Acme Corp and we ship PHX with \"Blue Garden\" in step {i}. "
                     f"Yesterday I met Dr. Smith; 3 days ago too. I moved to Lisbon in March 2023."),
        ], start=T0 + i * 20 * DAY))
    # detector bait and exclusions
    convs.append(conversation("conv-bait", [
        ("user", "Bait: doi:10.1000/xyz, 123E4567-E89B-12D3-A456-426614174000 and "
                 "/srv/runs/123e4567-e89b-12d3-a456-426614174000/out.json, hash "
                 "da39a3ee5e6b4b0d3255bfef95601890afd80709, ip 192.168.001.010 and 2001:db8::1, call "
                 "+49 30 1234567 or (415) 555-2671, path C:\\Users\\anna\\notes.txt, site example.org, "
                 "self.x and main.py, #zettelkasten #fff @alice @property CVE-2021-44228 arXiv:2101.00001v2 "
                 "ORCID 0000-0002-1825-0097, commit 1a2b3c4d."),
        ("user", "Code next:\n```python\nemail = 'bob@code.example.com'  # Berlin 2024-01-01\n```\n"
                 "> Quoted Berlin at quoted@example.com\nAfter the quote, March 15, 2024 and 2024-03-15T10:30:00Z."),
        ("assistant", "Unclosed fence:\n~~~\nhttps://inside.example.com/never\n"),
    ], start=T0 + 5 * DAY))
    # relative times in messages with imputed timestamps (create_time None → imputed_parent)
    convs.append(conversation("conv-imputed", [
        ("user", "Last week I saw Anna; yesterday too; next month, 3 days ago; but 2024-02-01 is absolute.", None),
        ("assistant", "Noted: last Tuesday and in 2021.", None),
    ], start=T0 + 9 * DAY))
    # lexicon terms that fail one threshold each (digest §C "Lexicon")
    convs.append(conversation("conv-lex-a", [
        ("assistant", "ZORB is here. ZORB again. ZORB thrice. ZORB four. ZORB five."),        # assistant-only
        ("user", "QUUX rocks. QUUX rules. QUUX wins. QUUX more."),                           # one conversation
        ("user", "We use FrobTool daily and FrobTool weekly and FrobTool monthly.\n```\nFrobTool()\nFrobTool()\n"
                 "FrobTool()\nFrobTool()\n```"),                                             # code-heavy
        ("user", 'In "March" we met. "March" was good. "March" ended.'),                     # denylist
        ("user", " ".join(["the GLIM thing"] * 12)),                                          # low diversity
        ("user", "My daughter Mia loves Atlas. Atlassian is not Atlas."),
        ("assistant", "Your daughter MIA and your daughter MIA again, then your daughter MIA."),
    ], start=T0 + 30 * DAY))
    convs.append(conversation("conv-lex-b", [
        ("user", "FrobTool again, and Atlas works. Atlas plans. Atlas ships. My daughter Mia says hi."),
        ("user", "The GLIM thing and the GLIM thing. Nothing else."),
        ("user", "FrobTool is used.\n```\nFrobTool()\nFrobTool()\nFrobTool()\nFrobTool()\n```"),
    ], start=T0 + 40 * DAY))
    return convs
