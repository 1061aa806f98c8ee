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


@contextlib.contextmanager
def import_lock(db: Path, wait_s: float, notify: Callable[[str], None] = _say) -> Iterator[None]:
    lock = db.with_name(db.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    except OSError:
        yield  # read-only storage: no lock possible, and the import's first write says "read-only"
        return
    try:
        if not _try(fd):
            holder = _holder(fd)
            notify(f"another import into {db} is running{holder}; waiting for it to finish "
                   f"(up to {wait_s:g} s, concurrency.import_wait_s)…")
            deadline = time.monotonic() + wait_s
            while not _try(fd):
                if time.monotonic() >= deadline:
                    raise StoreError(f"another import into {db} is still running{_holder(fd)} after {wait_s:g} s; "
                                     "nothing was imported, try again when it has finished")
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
