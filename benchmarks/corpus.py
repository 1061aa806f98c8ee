"""Issue 18 parts 6–7 speed: the Claude.ai and mbox importers and the `threads` stage, each beside a baseline measured
in the same run (ratios, not absolutes).

    python benchmarks/corpus.py --conversations 2000 --mails 4000

- Claude import (stages 0–1) vs the baseline ``json.loads`` of the same file plus one ``executemany`` of its
  messages into a bare table (parse + store, nothing else).
- mbox import (stages 0–1) vs the baseline stdlib ``mailbox.mbox`` iteration parsing every mail.
- `threads` stage (all threads new, then all unchanged) vs the baseline SQL read of every thread's messages."""

from __future__ import annotations

import argparse
import json
import mailbox
import random
import sys
import tempfile
import time
from pathlib import Path

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kenning.api import Vault  # noqa: E402

WORDS = ("train hotel Lisbon Porto laptop battery garden tomatoes budget flat lease doctor bank museum river "
         "running shoes plan week trip price booking guesthouse").split()
AS_OF = "2024-06-01T00:00:00Z"


def sentence(rnd: random.Random) -> str:
    return " ".join(rnd.choices(WORDS, k=rnd.randint(6, 14))).capitalize() + "."


def claude_export(path: Path, n: int, rnd: random.Random) -> int:
    convs, msgs = [], 0
    for i in range(n):
        turns = []
        for j in range(8):
            human = j % 2 == 0
            text = sentence(rnd) + (" Let's go with the train." if j == 6 else "") + \
                (" I still need to book the hotel." if j == 4 else "")
            if not human and j == 5:
                text = "I recommend the guesthouse near the river because it is quiet. " + text
            if j == 6:
                text = "Sounds good, let's do that. " + text
            turns.append({"uuid": f"m-{i}-{j}", "sender": "human" if human else "assistant", "text": text,
                          "content": [{"type": "text", "text": text}],
                          "created_at": f"2024-0{1 + i % 5}-{1 + i % 27:02d}T10:{j:02d}:00Z"})
        msgs += len(turns)
        convs.append({"uuid": f"c-{i}", "name": f"Thread {i}", "created_at": turns[0]["created_at"],
                      "updated_at": turns[-1]["created_at"], "chat_messages": turns})
    path.write_text(json.dumps(convs))
    return msgs


def mbox_file(path: Path, n: int, rnd: random.Random) -> None:
    with open(path, "w") as f:
        for i in range(n):
            root = i - i % 4
            refs = f"References: <m{root}@x>\nIn-Reply-To: <m{i - 1}@x>\n" if i % 4 else ""
            f.write(f"From a@x Mon Mar  4 10:00:00 2024\nFrom: Person {i % 13} <p{i % 13}@x>\nSubject: Topic {root}\n"
                    f"Date: Mon, 04 Mar 2024 10:{i % 60:02d}:00 +0000\nMessage-ID: <m{i}@x>\n{refs}\n"
                    f"{sentence(rnd)} {sentence(rnd)}\n\n")


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", type=int, default=2000)
    ap.add_argument("--mails", type=int, default=4000)
    args = ap.parse_args()
    rnd = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="kenning-corpus-bench-"))
    export = tmp / "conversations.json"
    n_msgs = claude_export(export, args.conversations, rnd)
    mbox = tmp / "mail.mbox"
    mbox_file(mbox, args.mails, rnd)
    over = {"embeddings": {"backend": "hash"}}
    out: dict = {"conversations": args.conversations, "messages": n_msgs, "mails": args.mails}

    def baseline_claude() -> None:
        conn = apsw.Connection(str(tmp / "base.db"))
        conn.execute("CREATE TABLE IF NOT EXISTS m(id TEXT, conv TEXT, text TEXT, raw TEXT)")
        with conn:
            conn.executemany("INSERT INTO m VALUES (?,?,?,?)",
                             [(m["uuid"], c["uuid"], m["text"], json.dumps(m))
                              for c in json.loads(export.read_text()) for m in c["chat_messages"]])
        conn.close()

    with Vault.open(tmp / "v.db", overrides=over) as v:
        base = timed(baseline_claude)
        imp = timed(lambda: v.ingest([export], as_of=AS_OF, stages="0,1", llm="none"))
        out["claude_import"] = {"s": round(imp, 3), "messages_per_s": round(n_msgs / imp), "baseline_s": round(base, 3),
                                "ratio": round(imp / base, 2)}

        def read_all() -> None:
            for (cid,) in list(v.conn.execute("SELECT conversation_id FROM conversations")):
                list(v.conn.execute("SELECT text_raw, role FROM messages WHERE conversation_id=? ORDER BY order_index",
                                    (cid,)))
        base = timed(read_all)
        new = timed(lambda: v.ingest([export], as_of=AS_OF, stages="threads", llm="none"))
        same = timed(lambda: v.ingest([export], as_of=AS_OF, stages="threads", llm="none"))
        out["threads_stage"] = {"new_s": round(new, 3), "threads_per_s": round(args.conversations / new),
                                "unchanged_s": round(same, 3), "baseline_read_s": round(base, 3),
                                "ratio_new": round(new / base, 2), "ratio_unchanged": round(same / base, 2)}
    with Vault.open(tmp / "m.db", overrides=over) as v:
        base = timed(lambda: [m.get_payload() for m in mailbox.mbox(str(mbox))])
        imp = timed(lambda: v.ingest([mbox], as_of=AS_OF, stages="0,1", llm="none"))
        out["mbox_import"] = {"s": round(imp, 3), "mails_per_s": round(args.mails / imp), "baseline_s": round(base, 3),
                              "ratio": round(imp / base, 2)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
