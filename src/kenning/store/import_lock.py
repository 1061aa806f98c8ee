"""One import at a time per vault (issue 23 part 5).

SQLite already serialises writers (WAL + busy timeout) and lets readers read during an import, but an
import is many stage transactions in a row: two imports could interleave their stages, and the second
one's BEGIN would time out while the first runs a long stage. So an import holds an advisory lock file
beside the vault (``<vault>.lock``, owner-only) for all its stages; a second import says it is waiting,
waits up to ``concurrency.import_wait_s``, then refuses with a clear message. Readers never take it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

from kenning.privatefs import PRIVATE_FILE
from kenning.store.connection import StoreError


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def lock_path(db: Path, suffix: str = ".lock") -> Path:
    """The advisory lock file beside the vault (``<vault>.lock``: imports; the vector fill has its own suffix)."""
    return db.with_name(db.name + suffix)


@contextlib.contextmanager
def lock_file(path: Path) -> Iterator[int | None]:
    """The lock file, opened owner-only, as a descriptor (None on read-only storage: no lock possible, and the
    first write says "read-only"); whatever lock the caller took is released on the way out."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    except OSError:
        yield None
        return
    try:
        yield fd
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def claim(fd: int) -> None:
    """Write our pid into the held lock file, for the messages of whoever waits."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)


def holder_pid(fd: int) -> int | None:
    try:
        pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
    except OSError:
        return None
    return int(pid) if pid.isdigit() else None


@contextlib.contextmanager
def import_lock(db: Path, wait_s: float, notify: Callable[[str], None] = _say) -> Iterator[None]:
    with lock_file(lock_path(db)) as fd:
        if fd is not None:
            if not try_lock(fd):
                notify(f"another import into {db} is running{_holder(fd)}; waiting for it to finish "
                       f"(up to {wait_s:g} s, concurrency.import_wait_s)…")
                deadline = time.monotonic() + wait_s
                while not try_lock(fd):
                    if time.monotonic() >= deadline:
                        raise StoreError(f"another import into {db} is still running{_holder(fd)} after {wait_s:g} "
                                         "s; nothing was imported, try again when it has finished")
                    time.sleep(0.2)
            claim(fd)
        yield


def _holder(fd: int) -> str:
    pid = holder_pid(fd)
    return f" (pid {pid})" if pid is not None else ""
