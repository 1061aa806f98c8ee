"""Files Kenning writes hold a person's private words: they are created owner-only (0600), and folders Kenning
creates for them owner-only (0700). The vault's WAL and SHM files take the vault's mode from SQLite."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_dir(path: str | Path) -> Path:
    """Create ``path`` and any missing parents as 0700 (existing folders are left as they are)."""
    p = Path(path).expanduser()
    missing = []
    q = p
    while not q.exists():
        missing.append(q)
        if q.parent == q:
            break
        q = q.parent
    for d in reversed(missing):
        d.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        os.chmod(d, PRIVATE_DIR)  # mkdir's mode is filtered by the umask
    return p


def open_private(path: str | Path, mode: str = "w", **kwargs: Any) -> IO[Any]:
    """``open(path, mode)`` for writing, the file created (or truncated and tightened) as 0600."""
    p = Path(path)
    private_dir(p.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    fd = os.open(p, flags, PRIVATE_FILE)
    os.fchmod(fd, PRIVATE_FILE)
    return os.fdopen(fd, mode, **kwargs)


def write_private_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    with open_private(path, "w", encoding=encoding) as f:
        f.write(text)
    return Path(path)


def make_private(path: str | Path) -> None:
    """Tighten a file a library wrote (a picture from matplotlib) to 0600."""
    os.chmod(path, PRIVATE_FILE)
