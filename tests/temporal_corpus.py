"""Hand-built exports for stages 5–6: the lifecycle cases of seed 001 digest §C, one small vault per theme."""

from __future__ import annotations

from assertion_corpus import conversation

DAY = 86400
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def lifecycle() -> list[dict]:
    c = []
    # "I live in Berlin since 2019" then "I moved to Paris in March 2023": Berlin closes at 2023-03-01
    c.append(conversation("a-move", [
        ("user", "I live in Berlin since 2019."),
        ("assistant", "Berlin is a great city."),
        ("user", "Big news: I moved to Paris in March 2023."),
    ], start=T0))
    # undated employers: each holds when it was said, so the later one ends the earlier (T40, T44)
    c.append(conversation("b-undated-work", [
        ("user", "I work at Acme Corp."),
        ("user", "These days I work at Globex."),
    ], start=T0 + 1 * DAY))
    # the same fact twice at one time: SAME_TIME_DUPLICATES (informational, both stay active)
    c.append(conversation("c-duplicate", [
        ("user", "To repeat: I live in Paris since March 2023."),
    ], start=T0 + 2 * DAY))
    # "until" hint
    c.append(conversation("d-until", [
        ("user", "I'll be working remotely until June 2024."),
    ], start=T0 + 3 * DAY))
    # retractions: a unique target, and one whose candidates are two facts
    c.append(conversation("e-retractions", [
        ("user", "We adopted a cat last week."),
        ("user", "Actually, that's not true."),
    ], start=T0 + 4 * DAY))
    c.append(conversation("e2-anna", [("user", "My sister Anna lives in Lisbon.")], start=T0 - 30 * DAY))
    c.append(conversation("e3-ambiguous", [
        ("user", "Anna moved to Porto and she's getting married in June."),
        ("assistant", "Congratulations to Anna on both counts!"),
        ("user", "Actually, that's not true. I was mixing it up."),
    ], start=T0 + 4 * DAY + 3600))
    # correction
    c.append(conversation("f-correction", [
        ("user", "My cousin lives in Porto."),
        ("user", "I meant Lisbon, not Porto."),
    ], start=T0 + 5 * DAY))
    # "I stopped running" ends a habit (T7)
    c.append(conversation("g-stopped", [
        ("user", "I run every morning."),
        ("user", "I stopped running."),
    ], start=T0 + 6 * DAY))
    return c


def conflicts() -> list[dict]:
    return [
        # two cities on one date: OBJECT_DISAGREEMENT
        conversation("a-disagree", [
            ("user", "I live in Rome since May 2021."),
            ("user", "I live in Madrid since May 2021."),
            ("user", "I moved to Vienna in 2023."),
        ], start=T0),
        # two employers, equal confidence and tiers, no transition cue: OBJ_CONFIDENCE_TOO_CLOSE
        conversation("b-too-close", [
            ("user", "I work at Initech since 2019."),
            ("user", "I work at Hooli since 2021."),
        ], start=T0 + DAY),
    ]


def negations() -> list[dict]:
    return [
        # a dated negation closes the one state it names
        conversation("a-negation", [
            ("user", "I live in Vienna since 2018."),
            ("user", "Since April 2022 I don't live in Vienna anymore."),
        ], start=T0),
        # two earlier states of the same fact: the negation is ambiguous
        conversation("b-ambiguous", [
            ("user", "I work at Initech since 2018."),
            ("user", "I work at Initech since 2019."),
            ("user", "Since 2022 I don't work at Initech anymore."),
        ], start=T0 + DAY),
        # a negation that predates the state never closes it (T10)
        conversation("c-predates", [
            ("user", "In 2015 I didn't study at MIT."),
            ("user", "I study at MIT since 2020."),
        ], start=T0 + 2 * DAY),
    ]


def undated() -> list[dict]:
    """Issue 22 §5: states said without a date, said again and again, and ended by a later dated or said change."""
    c = []
    # the same job said in three conversations, then a dated change said later: the whole state closes at 1 Jan
    for i, day in enumerate((0, 10, 20)):
        c.append(conversation(f"u-acme-{i}", [
            ("user", "Quick note: I work at Acme Corp."),
        ], start=T0 + day * DAY))
    c.append(conversation("u-globex", [
        ("user", "In January 2024 I started working at Globex."),
    ], start=T0 + 60 * DAY))
    # a home said twice, then another said later: Berlin ends when Paris was said
    c.append(conversation("u-berlin-1", [("user", "I live in Berlin.")], start=T0 + 1 * DAY))
    c.append(conversation("u-berlin-2", [("user", "For context, I live in Berlin.")], start=T0 + 30 * DAY))
    c.append(conversation("u-paris", [("user", "I live in Paris.")], start=T0 + 90 * DAY))
    c.append(conversation("u-paris-2", [("user", "I live in Paris.")], start=T0 + 95 * DAY))
    # a liking said twice, then denied: one state, ended by the negation (not two candidates)
    c.append(conversation("u-jazz-1", [("user", "I like jazz.")], start=T0 + 2 * DAY))
    c.append(conversation("u-jazz-2", [("user", "I like jazz.")], start=T0 + 40 * DAY))
    c.append(conversation("u-jazz-3", [("user", "I don't like jazz anymore.")], start=T0 + 70 * DAY))
    return c
