"""mbox mail (issue 18 part 7; stdlib ``email``): one conversation per thread, one message per mail.

- The file is read line by line and split at ``From `` separator lines (mboxrd/mboxo); each mail's bytes, separator
  line included, are its raw record, kept losslessly (``units.raw_bytes``).
- Threads (I59): a mail belongs to the thread named by the first Message-ID of its ``References`` header, else its
  ``In-Reply-To``, else its own ``Message-ID`` — the root of the chain, which mail clients keep first. A thread is
  held until the file ends (mails of one thread may be far apart); its turns are in Date order, then file order.
- The sender is the speaker (display name, else address); a mail from ``corpus.mail.self_addresses`` or from the
  ``--self`` name gets role ``user``, others ``unknown``. Text: the text/plain body, else the HTML body without
  tags; attachments become file parts (name, type, size).
- A mail without a ``From:`` header is rejected (file, mail number, reason) and the rest imports; an unreadable
  ``Date:`` leaves the time missing (a repair)."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import email.utils
import hashlib
import html
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from kenning.sources.timestamps import format_utc
from kenning.sources.transcript import Problem
from kenning.sources.units import Unit, UnitTurn, raw_bytes

_MSGID = re.compile(r"<[^<>\s]+>")
_SUBJECT_PREFIX = re.compile(r"^\s*((re|fw|fwd|aw|sv)\s*(\[\d+\])?\s*:\s*)+", re.I)
_TAG = re.compile(r"<[^>]+>")


def split_mbox(chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """(mail number, bytes) per mail; a ``From `` line after a blank line (or first) starts a mail. A mail's bytes
    run from its ``From `` line to the blank separator line before the next one (excluded), so appending mail to a
    mailbox leaves the earlier mails' bytes unchanged."""
    buf: list[bytes] = []
    n = 0
    prev_blank = True
    pending = b""
    for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            line += b"\n"
            if line.startswith(b"From ") and prev_blank and buf:
                yield n, b"".join(buf[:-1])   # the blank line before "From " is mbox framing, not the mail
                n += 1
                buf = []
            buf.append(line)
            prev_blank = line.strip() == b""
    if pending:
        if pending.startswith(b"From ") and prev_blank and buf:
            yield n, b"".join(buf[:-1])
            n += 1
            buf = []
        buf.append(pending)
    if buf and b"".join(buf).strip():
        yield n, b"".join(buf)


def _chunks(reader: Any) -> Iterator[bytes]:
    while True:
        data = reader.read(1 << 20)
        if not data:
            return
        yield data


@dataclass
class Mail:
    index: int
    raw: bytes
    msg: Any
    message_id: str
    root: str
    sender_name: str
    sender_addr: str
    at: str | None
    subject: str


def _body(msg: Any) -> tuple[str | None, list[dict]]:
    plain, htmls, files = [], [], []
    for part in msg.walk() if msg.is_multipart() else [msg]:
        if part.is_multipart():
            continue
        disp = part.get_content_disposition()
        ctype = part.get_content_type()
        if disp == "attachment" or (part.get_filename() and disp != "inline"):
            payload = part.get_payload(decode=True) or b""
            files.append({"part_type": "image" if ctype.startswith("image/") else "file", "text": None,
                          "mime": ctype, "path": part.get_filename(),
                          "meta": {"size_bytes": len(payload)}, "raw": {"filename": part.get_filename(),
                                                                         "content_type": ctype}})
            continue
        if ctype not in ("text/plain", "text/html"):
            continue
        try:
            text = part.get_content()
        except (LookupError, UnicodeError, AssertionError):
            text = (part.get_payload(decode=True) or b"").decode("utf-8", errors="replace")
        (plain if ctype == "text/plain" else htmls).append(text)
    if plain:
        return "\n\n".join(t.strip("\n") for t in plain), files
    if htmls:
        text = html.unescape(_TAG.sub(" ", re.sub(r"(?is)<(script|style).*?</\1>", " ", "\n".join(htmls))))
        return re.sub(r"[ \t]+", " ", text).strip(), files
    return None, files


def parse_mail(index: int, data: bytes, repairs: list) -> Mail | Problem:
    body = data.split(b"\n", 1)[1] if data.startswith(b"From ") else data
    msg = email.message_from_bytes(body, policy=email.policy.default)
    try:
        from_header = msg.get("From")
    except Exception:  # a header the policy cannot parse
        from_header = None
    if not from_header:
        return Problem(index, None, "skipped", "MISSING_SENDER", "the mail has no From: header", data)
    name, addr = email.utils.parseaddr(str(from_header))
    ids = _MSGID.findall(str(msg.get("Message-ID") or ""))
    message_id = ids[0] if ids else f"<sha256-{hashlib.sha256(data).hexdigest()[:32]}@kenning>"
    refs = _MSGID.findall(str(msg.get("References") or ""))
    reply = _MSGID.findall(str(msg.get("In-Reply-To") or ""))
    root = refs[0] if refs else (reply[0] if reply else message_id)
    at = None
    date = msg.get("Date")
    if date:
        try:
            d = email.utils.parsedate_to_datetime(str(date))
            at = format_utc(d) if d.tzinfo else format_utc(d.replace(tzinfo=dt.timezone.utc))
        except (TypeError, ValueError, IndexError):
            repairs.append((index, "BAD_TIMESTAMP", f"mail {index}: Date {str(date)!r} is not a time; left missing"))
    subject = _SUBJECT_PREFIX.sub("", str(msg.get("Subject") or "")).strip()
    return Mail(index, data, msg, message_id, root, name.strip() or addr, addr.lower(), at, subject)


def mail_units(reader: Any, cfg: Any, self_name: str | None) -> Iterator[Unit | Problem]:
    threads: dict[str, list[Mail]] = {}
    repairs: list[tuple[int, str, str]] = []
    selves = {a.lower() for a in cfg.self_addresses}
    for index, data in split_mbox(_chunks(reader)):
        got = parse_mail(index, data, repairs)
        if isinstance(got, Problem):
            yield got
            continue
        threads.setdefault(got.root, []).append(got)
    fixes = {i: (code, msg) for i, code, msg in repairs}
    for root, mails in sorted(threads.items(), key=lambda kv: kv[1][0].index):
        mails.sort(key=lambda m: (m.at is None, m.at or "", m.index))
        first = min(mails, key=lambda m: m.index)
        unit = Unit(first.index, ("mail_thread", root), root, first.subject or "(no subject)", "mail",
                    {"thread_root": root, "mails": [{"mbox_index": m.index, "message_id": m.message_id,
                                                     **raw_bytes(m.raw)} for m in mails]}, [])
        for m in mails:
            text, files = _body(m.msg)
            if len(text or "") > cfg.max_body_chars:
                unit.warnings.append(("MAIL_BODY_CLIPPED", f"mail {m.index}: body clipped to {cfg.max_body_chars} "
                                      "characters for mining (the raw mail is kept whole)", {"mail": m.index}))
                text = text[: cfg.max_body_chars]
            is_self = m.sender_addr in selves or (self_name is not None and
                                                   m.sender_name.casefold() == self_name.casefold())
            header = f"Subject: {m.subject}\n\n" if m.subject and m is first else ""
            unit.turns.append(UnitTurn(m.message_id, m.sender_name, "user" if is_self else "unknown",
                                       header + (text or "") if (text or header) else None, m.at,
                                       {"mbox_index": m.index, **raw_bytes(m.raw)}, files))
            if m.index in fixes:
                unit.repairs.append(fixes[m.index])
        yield unit


__all__ = ["mail_units", "parse_mail", "split_mbox"]
