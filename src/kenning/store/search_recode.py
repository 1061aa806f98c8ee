"""Migration 0112's SQL functions (Y1): an existing vault's forward index (R51) is recoded in place, so that an
upgraded vault keeps reading its search hits from the forward index instead of waiting for the next index run.

The migration first numbers the vocabulary (``search_term_docs.id`` = the key's rank in signed key order), so a
12-byte record's key becomes its id by a binary search in the sorted keys, read once per connection."""

from __future__ import annotations

from typing import Any

import apsw

MIGRATION = 112   # 0112_search_term_ids.sql

_OLD = None  # the 12-byte record of migration 0063: key u64 LE, a count byte per column


def register(conn: apsw.Connection) -> None:
    """``kenning_forward_terms|codes|counts(old)`` (a 12-byte row's three new blobs) and
    ``kenning_forward_keys(keys)`` (a NULL row's u64 keys as u32 ids)."""
    state: dict[str, Any] = {}

    def sorted_keys() -> Any:
        import numpy as np

        if "keys" not in state:
            state["keys"] = np.fromiter((k for (k,) in conn.execute("SELECT key FROM search_term_docs ORDER BY key")),
                                        dtype=np.int64)
        return state["keys"]

    def ids_of(keys_u64: Any) -> Any:
        """Each key's id (its 1-based rank), or None when a key is not in the vocabulary."""
        import numpy as np

        known = sorted_keys()
        k = keys_u64.astype(np.uint64).view(np.int64)
        pos = np.searchsorted(known, k)
        if len(k) and (pos.max() >= len(known) or (known[np.minimum(pos, len(known) - 1)] != k).any()):
            return None
        return pos + 1

    def recode(old: bytes) -> tuple[bytes | None, bytes | None, bytes | None]:
        import numpy as np

        from kenning.store import search as search_sql

        if state.get("last") is not None and state["last"][0] == old:
            return state["last"][1]
        rec = np.frombuffer(old, dtype=np.dtype([("key", "<u8"), ("n", "u1", (4,))]))
        ids = ids_of(rec["key"])
        if ids is None:
            out: tuple[bytes | None, ...] = (None, None, None)  # hits from FTS5 (cannot happen when counted)
        else:
            order = np.argsort(ids, kind="stable")
            ids = ids[order]
            counts = rec["n"][order].astype(np.int64)
            code = search_sql.encode_counts(counts).astype(np.uint8)
            gaps = ids.copy()
            gaps[1:] -= ids[:-1]
            esc = counts[code == 0].astype(np.uint8).tobytes()
            out = (search_sql.encode_varints(gaps)[0].tobytes(), code.tobytes(), esc or None)
        state["last"] = (old, out)
        return out

    def terms(old: bytes | None) -> bytes | None:
        return None if old is None else recode(old)[0]

    def codes(old: bytes | None) -> bytes | None:
        return None if old is None else recode(old)[1]

    def counts(old: bytes | None) -> bytes | None:
        return None if old is None else recode(old)[2]

    def keys(old: bytes | None) -> bytes | None:
        import numpy as np

        if old is None:
            return None
        ids = ids_of(np.frombuffer(old, dtype="<u8"))
        return None if ids is None else ids.astype("<u4").tobytes()

    conn.create_scalar_function("kenning_forward_terms", terms, 1, deterministic=True)
    conn.create_scalar_function("kenning_forward_codes", codes, 1, deterministic=True)
    conn.create_scalar_function("kenning_forward_counts", counts, 1, deterministic=True)
    conn.create_scalar_function("kenning_forward_keys", keys, 1, deterministic=True)
