"""A hand-built export for stage 4: one conversation per lifecycle case of seed 001 digest §C (assertions)."""

from __future__ import annotations

from typing import Any, Sequence

DAY = 86400
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def text(t: str) -> dict:
    return {"content_type": "text", "parts": [t]}


def conversation(conv_id: str, messages: Sequence[dict[str, Any] | tuple], *, start: float = T0,
                 title: str | None = None) -> dict[str, Any]:
    """A linear conversation. A message is (role, text) or a dict with role, content (or text), and optional
    recipient, name, hidden, time."""
    mapping: dict[str, Any] = {}
    root = f"{conv_id}-root"
    mapping[root] = {"id": root, "message": None, "parent": None, "children": []}
    parent = root
    for i, msg in enumerate(messages):
        if isinstance(msg, tuple):
            msg = {"role": msg[0], "text": msg[1]}
        nid = f"{conv_id}-m{i:03d}"
        content = msg.get("content") or text(msg["text"])
        md: dict[str, Any] = {}
        if msg.get("hidden"):
            md["is_visually_hidden_from_conversation"] = True
        mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": {
            "id": nid, "author": {"role": msg["role"], "name": msg.get("name"), "metadata": {}},
            "create_time": msg.get("time", start + 60 * i), "update_time": None, "content": content,
            "status": "finished_successfully", "end_turn": True, "weight": 1.0, "metadata": md,
            "recipient": msg.get("recipient", "all")}}
        mapping[parent]["children"].append(nid)
        parent = nid
    return {"title": title or conv_id, "create_time": start, "update_time": start + 60 * len(messages),
            "mapping": mapping, "current_node": parent, "conversation_id": conv_id, "id": conv_id}


def corpus() -> list[dict]:
    c = []
    c.append(conversation("a-residence", [
        ("user", "I've lived in Berlin since 2019. I work at Acme Corp."),
        ("assistant", "Noted, Berlin it is."),
        ("user", "Big news: I moved to Paris in March 2023."),
        ("user", "I'll be working remotely until June 2024, then in the office."),
        ("user", "During December 2022 I was in Lisbon."),
    ], start=T0))
    c.append(conversation("b-correction", [
        ("user", "Family stuff: my sister lives in Porto."),
        ("assistant", "Porto is lovely."),
        ("user", "I meant Lisbon, not Porto."),
    ], start=T0 + 1 * DAY))
    c.append(conversation("c-retraction-unique", [
        ("user", "Off-topic: we adopted a cat last week."),
        ("assistant", "Congratulations on the new cat!"),
        ("user", "Actually, that's not true. It is the neighbour's cat."),
    ], start=T0 + 2 * DAY))
    c.append(conversation("d-retraction-ambiguous", [
        ("user", "Anna moved to Porto and she's getting married in June."),
        ("assistant", "Congratulations to Anna on both counts!"),
        ("user", "Actually, that's not true. I was mixing it up."),
    ], start=T0 + 3 * DAY))
    c.append(conversation("e-questions-intentions", [
        ("user", "Should I learn Rust? I love hiking, so any trails near the city?"),
        ("user", "I plan to learn Japanese next year. I hate cilantro."),
        ("user", "Sam says I'm stubborn, and he is probably right."),
    ], start=T0 + 4 * DAY))
    c.append(conversation("f-assistant-claims", [
        ("user", "Can you plan my week around the office hours?"),
        ("assistant", "You mentioned you live in Paris now, so I used Paris time. Since you're based in Munich, "
                      "the train is an option."),
        ("user", "Yes, I live in Paris now."),
        {"role": "assistant", "content": {"content_type": "code", "language": "unknown",
                                          "text": "User lives in Paris and works at Globex."}, "recipient": "bio"},
        {"role": "tool", "name": "bio", "text": "Model set context updated."},
        {"role": "assistant", "content": {"content_type": "thoughts", "thoughts": [
            {"summary": "Plan", "content": "The user lives in Madrid and works at Initech."}]}},
        {"role": "system", "text": "You are ChatGPT. The user lives in Oslo."},
        {"role": "assistant", "content": {"content_type": "model_editable_context",
                                          "model_set_context": "1. [2023-04-02]. User works at Globex."},
         "hidden": True},
        {"role": "assistant", "content": {"content_type": "code", "language": "python",
                                          "text": "print('you live in Rome')"}, "recipient": "python"},
    ], start=T0 + 5 * DAY))
    c.append(conversation("g-negations", [
        ("user", "I loved Berlin. Since April 2023 I don't live in Berlin anymore."),
        ("user", "I stopped running after a knee injury, and I no longer eat meat."),
        ("user", "Vienna and Graz are both nice, but I don't really live there anymore."),
    ], start=T0 + 6 * DAY))
    c.append(conversation("h-habits", [
        ("user", "I run every morning before work. My sister Anna lives in Lisbon."),
        ("user", "I have two kids, Mia and Leo. My partner Sam works at Initech."),
    ], start=T0 - 30 * DAY))
    c.append(conversation("i-masking", [
        ("user", "Here is my config:\n```yaml\n# I live in Rome\nname: test\n```\nThanks!"),
        ("user", "Hi there"),
        ("user", "What if I moved to Madrid? If I lived in Madrid I would walk more."),
    ], start=T0 + 7 * DAY))
    return c
