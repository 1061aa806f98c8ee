"""SQL of the belief ledger (seed 002): workspaces, documents, footnotes, claim provenance, wiki_beliefs and
its FTS index, sightings, overrides, verifier findings."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import apsw

from kenning.store.connection import row, rows, scalar
from kenning.store.sqltext import chunks, insert_sql, marks, update_sql

BELIEF_COLUMNS = (
    "belief_id", "workspace", "statement", "topic", "subject", "predicate", "object", "wiki_document_id",
    "wiki_section_anchor", "footnote_ids", "provenance_ids", "asserted_at", "asserted_in_run", "superseded_at",
    "superseded_by_belief_id", "superseded_in_run", "supersession_reason", "source_valid_from", "source_valid_to",
    "supporting_count", "contradicting_belief_ids", "confidence_hint", "created_at", "recorded_at",
    "superseded_recorded_at",
)
PROVENANCE_COLUMNS = (
    "id", "workspace", "document_id", "footnote_key", "source_kind", "raw_path", "raw_document_id",
    "conversation_id", "message_id", "char_start", "char_end", "page_hint", "quote", "quote_hash",
)
DOCUMENT_COLUMNS = (
    "id", "workspace", "kind", "path", "title", "sha256", "size_bytes", "conversation_id", "created_at",
    "first_run_id", "last_changed_run_id",
)
FOOTNOTE_COLUMNS = ("id", "document_id", "footnote_key", "raw_path", "page_hint", "definition", "line",
                    "reference_count")


def defer_foreign_keys(conn: apsw.Connection) -> None:
    """Check foreign keys at COMMIT: a batch may insert a belief before the one that supersedes it."""
    conn.execute("PRAGMA defer_foreign_keys=ON")


# ---- workspaces -----------------------------------------------------------------------------------------


def get_workspace(conn: apsw.Connection, slug: str) -> dict | None:
    return row(conn, "SELECT * FROM workspaces WHERE slug=?", (slug,))


def insert_workspace(conn: apsw.Connection, slug: str, root_path: str | None, created_at: str, run_id: str) -> None:
    conn.execute("INSERT INTO workspaces(slug, root_path, created_at, created_in_run) VALUES (?,?,?,?)",
                 (slug, root_path, created_at, run_id))


def set_workspace_root(conn: apsw.Connection, slug: str, root_path: str) -> None:
    conn.execute("UPDATE workspaces SET root_path=? WHERE slug=?", (root_path, slug))


def workspace_roots(conn: apsw.Connection) -> dict[str, str | None]:
    return {s: r for s, r in conn.execute("SELECT slug, root_path FROM workspaces")}


def list_workspaces(conn: apsw.Connection) -> list[dict]:
    return rows(conn, "SELECT w.slug, w.root_path, w.created_at, (SELECT COUNT(*) FROM wiki_beliefs b WHERE "
                      "b.workspace=w.slug) AS beliefs FROM workspaces w ORDER BY w.slug")


# ---- documents ------------------------------------------------------------------------------------------


def documents_of(conn: apsw.Connection, workspace: str, kinds: Sequence[str]) -> dict[str, dict]:
    return {r["id"]: r for r in rows(conn, f"SELECT * FROM documents WHERE workspace=? AND kind IN ({marks(len(kinds))})",
                                     (workspace, *kinds))}


def get_document(conn: apsw.Connection, doc_id: str) -> dict | None:
    return row(conn, "SELECT * FROM documents WHERE id=?", (doc_id,))


def insert_document(conn: apsw.Connection, doc: dict) -> None:
    conn.execute(insert_sql("documents", DOCUMENT_COLUMNS), tuple(doc[c] for c in DOCUMENT_COLUMNS))


def update_document(conn: apsw.Connection, doc_id: str, title: str | None, sha256: str | None, size: int | None,
                    run_id: str) -> None:
    conn.execute("UPDATE documents SET title=?, sha256=?, size_bytes=?, last_changed_run_id=? WHERE id=?",
                 (title, sha256, size, run_id, doc_id))


def documents_in_use(conn: apsw.Connection, doc_ids: Sequence[str], except_from: Sequence[str]) -> set[str]:
    """Of ``doc_ids``, those a belief lives in, or a quote anchor made outside ``except_from`` documents cites."""
    used: set[str] = set()
    skip = set(except_from)
    for part in chunks(list(doc_ids)):
        used |= {r[0] for r in conn.execute(f"SELECT DISTINCT wiki_document_id FROM wiki_beliefs WHERE wiki_document_id "
                                            f"IN ({marks(len(part))})", tuple(part))}
        used |= {r[0] for r in conn.execute(f"SELECT raw_document_id, document_id FROM wiki_claim_provenance WHERE "
                                            f"raw_document_id IN ({marks(len(part))})", tuple(part)) if r[1] not in skip}
    return used


def delete_documents(conn: apsw.Connection, ids: Sequence[str]) -> None:
    for part in chunks(list(ids)):
        conn.execute(f"DELETE FROM documents WHERE id IN ({marks(len(part))})", tuple(part))


# ---- footnotes ------------------------------------------------------------------------------------------


def footnotes_of(conn: apsw.Connection, doc_ids: Sequence[str]) -> list[dict]:
    out: list[dict] = []
    for part in chunks(list(doc_ids)):
        out += rows(conn, f"SELECT * FROM wiki_footnotes WHERE document_id IN ({marks(len(part))}) "
                          "ORDER BY document_id, line", tuple(part))
    return out


def replace_footnotes(conn: apsw.Connection, doc_ids: Sequence[str], footnotes: list[dict]) -> None:
    for part in chunks(list(doc_ids)):
        conn.execute(f"DELETE FROM wiki_footnotes WHERE document_id IN ({marks(len(part))})", tuple(part))
    if footnotes:
        conn.executemany(insert_sql("wiki_footnotes", FOOTNOTE_COLUMNS),
                         [tuple(f[c] for c in FOOTNOTE_COLUMNS) for f in footnotes])


# ---- claim provenance ----------------------------------------------------------------------------------


def provenance_of_documents(conn: apsw.Connection, doc_ids: Sequence[str]) -> list[dict]:
    out: list[dict] = []
    for part in chunks(list(doc_ids)):
        out += rows(conn, f"SELECT * FROM wiki_claim_provenance WHERE document_id IN ({marks(len(part))}) ORDER BY id",
                    tuple(part))
    return out


def get_provenance(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for part in chunks(list(ids)):
        for r in rows(conn, f"SELECT * FROM wiki_claim_provenance WHERE id IN ({marks(len(part))})", tuple(part)):
            out[r["id"]] = r
    return out


def delete_provenance_of_documents(conn: apsw.Connection, doc_ids: Sequence[str]) -> None:
    for part in chunks(list(doc_ids)):
        conn.execute(f"DELETE FROM wiki_claim_provenance WHERE document_id IN ({marks(len(part))})", tuple(part))


def delete_provenance_ids(conn: apsw.Connection, ids: Sequence[str]) -> None:
    for part in chunks(list(ids)):
        conn.execute(f"DELETE FROM wiki_claim_provenance WHERE id IN ({marks(len(part))})", tuple(part))


def insert_provenance(conn: apsw.Connection, items: list[dict]) -> None:
    if items:
        conn.executemany(insert_sql("wiki_claim_provenance", PROVENANCE_COLUMNS),
                         [tuple(p[c] for c in PROVENANCE_COLUMNS) for p in items])


def upsert_provenance(conn: apsw.Connection, items: list[dict]) -> None:
    """Insert or update in place (never delete-and-insert: links to beliefs would cascade away)."""
    cols = [c for c in PROVENANCE_COLUMNS if c != "id"]
    sql = (insert_sql("wiki_claim_provenance", PROVENANCE_COLUMNS) + " ON CONFLICT(id) DO UPDATE SET "
           + ", ".join(f"{c}=excluded.{c}" for c in cols))
    if items:
        conn.executemany(sql, [tuple(p[c] for c in PROVENANCE_COLUMNS) for p in items])


def provenance_for_beliefs(conn: apsw.Connection, belief_ids: Sequence[str]) -> dict[str, list[dict]]:
    """belief_id -> its provenance rows, in provenance_ids order."""
    out: dict[str, list[dict]] = {b: [] for b in belief_ids}
    for part in chunks(list(belief_ids)):
        for r in rows(conn, "SELECT l.belief_id AS _belief_id, p.* FROM belief_provenance l "
                            "JOIN wiki_claim_provenance p ON p.id = l.provenance_id "
                            f"WHERE l.belief_id IN ({marks(len(part))}) ORDER BY l.belief_id, l.ord", tuple(part)):
            out[r.pop("_belief_id")].append(r)
    return out


def beliefs_citing(conn: apsw.Connection, provenance_ids: Sequence[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in chunks(list(provenance_ids)):
        for pid, bid in conn.execute(f"SELECT provenance_id, belief_id FROM belief_provenance WHERE provenance_id IN "
                                     f"({marks(len(part))}) ORDER BY provenance_id, belief_id", tuple(part)):
            out.setdefault(pid, []).append(bid)
    return out


def count_provenance(conn: apsw.Connection, workspace: str | None) -> int:
    if workspace is None:
        return int(scalar(conn, "SELECT COUNT(*) FROM wiki_claim_provenance"))
    return int(scalar(conn, "SELECT COUNT(*) FROM wiki_claim_provenance WHERE workspace=?", (workspace,)))


def iter_provenance(conn: apsw.Connection, workspace: str | None, batch: int = 5000) -> Iterator[list[dict]]:
    """Every quote anchor cited by a belief, grouped so each raw file / message is read once."""
    cols = ", ".join(PROVENANCE_COLUMNS)
    where = "WHERE workspace=?" if workspace else ""
    params = (workspace,) if workspace else ()
    cur = conn.cursor().execute(f"SELECT {cols} FROM wiki_claim_provenance {where} "
                                "ORDER BY workspace, source_kind, raw_path, message_id, id", params)
    chunk: list[dict] = []
    for r in cur:
        chunk.append(dict(zip(PROVENANCE_COLUMNS, r)))
        if len(chunk) >= batch:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def message_texts(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for part in chunks(list(message_ids)):
        for mid, text in conn.execute(f"SELECT message_id, text_raw FROM messages WHERE message_id IN "
                                      f"({marks(len(part))})", tuple(part)):
            out[mid] = text
    return out


def message_with_conversation(conn: apsw.Connection, message_id: str) -> dict | None:
    return row(conn, "SELECT m.message_id, m.conversation_id, m.text_raw, m.created_at_utc, m.role, c.title "
                     "FROM messages m JOIN conversations c ON c.conversation_id = m.conversation_id "
                     "WHERE m.message_id=?", (message_id,))


def messages_meta(conn: apsw.Connection, message_ids: Sequence[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for part in chunks(list(message_ids)):
        for r in rows(conn, "SELECT m.message_id, m.conversation_id, m.created_at_utc, m.role, c.title FROM messages m "
                            "JOIN conversations c ON c.conversation_id = m.conversation_id "
                            f"WHERE m.message_id IN ({marks(len(part))})", tuple(part)):
            out[r["message_id"]] = r
    return out


def get_conversation_title(conn: apsw.Connection, conversation_id: str) -> tuple[bool, str | None]:
    r = conn.execute("SELECT title FROM conversations WHERE conversation_id=?", (conversation_id,)).fetchone()
    return (r is not None, r[0] if r else None)


# ---- beliefs --------------------------------------------------------------------------------------------

_SELECT_BELIEF = "SELECT " + ", ".join(f"b.{c}" for c in BELIEF_COLUMNS) + ", d.path AS _doc_path, d.kind AS _doc_kind"
_FROM_BELIEF = " FROM wiki_beliefs b JOIN documents d ON d.id = b.wiki_document_id"


def get_beliefs(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for part in chunks(list(ids)):
        for r in rows(conn, _SELECT_BELIEF + _FROM_BELIEF + f" WHERE b.belief_id IN ({marks(len(part))})", tuple(part)):
            out[r["belief_id"]] = r
    return out


def get_belief(conn: apsw.Connection, belief_id: str) -> dict | None:
    return get_beliefs(conn, [belief_id]).get(belief_id)


def _wiki_beliefs_where_in(conn: apsw.Connection, column: str, values: Sequence[str]) -> dict[str, dict]:
    """belief_id -> wiki_beliefs row for every row whose ``column`` is one of ``values`` (chunked IN lists)."""
    out: dict[str, dict] = {}
    for part in chunks(list(values)):
        for r in rows(conn, f"SELECT * FROM wiki_beliefs WHERE {column} IN ({marks(len(part))})", tuple(part)):
            out[r["belief_id"]] = r
    return out


def beliefs_of_documents(conn: apsw.Connection, doc_ids: Sequence[str]) -> dict[str, dict]:
    return _wiki_beliefs_where_in(conn, "wiki_document_id", doc_ids)


def beliefs_by_ids_raw(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, dict]:
    return _wiki_beliefs_where_in(conn, "belief_id", ids)


def existing_belief_ids(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, str]:
    """belief_id -> workspace for the ids that exist."""
    return {bid: r["workspace"] for bid, r in _wiki_beliefs_where_in(conn, "belief_id", ids).items()}


def insert_beliefs(conn: apsw.Connection, beliefs: list[dict]) -> None:
    if beliefs:
        conn.executemany(insert_sql("wiki_beliefs", BELIEF_COLUMNS), [tuple(b[c] for c in BELIEF_COLUMNS) for b in beliefs])


def update_belief(conn: apsw.Connection, belief: dict, cols: Iterable[str]) -> None:
    cols = list(cols)
    if cols:
        conn.execute(update_sql("wiki_beliefs", "belief_id", cols),
                     tuple(belief[c] for c in cols) + (belief["belief_id"],))


def delete_beliefs(conn: apsw.Connection, ids: Sequence[str]) -> None:
    for part in chunks(list(ids)):
        conn.execute(f"DELETE FROM wiki_beliefs WHERE belief_id IN ({marks(len(part))})", tuple(part))


def detach_supersession_refs(conn: apsw.Connection, ids: Sequence[str]) -> list[str]:
    """Clear superseded_by_belief_id on rows pointing at ``ids`` (about to be deleted); return those rows."""
    touched: list[str] = []
    for part in chunks(list(ids)):
        touched += [r[0] for r in conn.execute(
            f"SELECT belief_id FROM wiki_beliefs WHERE superseded_by_belief_id IN ({marks(len(part))})", tuple(part))]
        conn.execute(f"UPDATE wiki_beliefs SET superseded_by_belief_id=NULL WHERE superseded_by_belief_id IN "
                     f"({marks(len(part))})", tuple(part))
    return touched


def set_belief_links(conn: apsw.Connection, links: list[tuple[str, str, int]], replace_for: Sequence[str]) -> None:
    for part in chunks(list(replace_for)):
        conn.execute(f"DELETE FROM belief_provenance WHERE belief_id IN ({marks(len(part))})", tuple(part))
    if links:
        conn.executemany("INSERT INTO belief_provenance(belief_id, provenance_id, ord) VALUES (?,?,?)", links)


def set_superseded(conn: apsw.Connection, belief_id: str, superseded_at: str, by: str | None, run_id: str,
                   reason: str, recorded_at: str) -> None:
    conn.execute("UPDATE wiki_beliefs SET superseded_at=?, superseded_by_belief_id=?, superseded_in_run=?, "
                 "supersession_reason=?, superseded_recorded_at=? WHERE belief_id=?",
                 (superseded_at, by, run_id, reason, recorded_at, belief_id))


def clear_superseded(conn: apsw.Connection, belief_id: str) -> None:
    conn.execute("UPDATE wiki_beliefs SET superseded_at=NULL, superseded_by_belief_id=NULL, superseded_in_run=NULL, "
                 "supersession_reason=NULL, superseded_recorded_at=NULL WHERE belief_id=?", (belief_id,))


def functional_predicates(conn: apsw.Connection) -> set[str]:
    """Predicates stage 5's rules call functional (one object at a time: one home, one employer)."""
    try:
        return {r[0] for r in conn.execute(
            "SELECT p.canonical_label_norm FROM invalidation_rules r JOIN predicates p ON p.predicate_id = "
            "r.predicate_id WHERE r.is_functional = 1")}
    except apsw.SQLError:
        return set()


def set_contradicting(conn: apsw.Connection, belief_id: str, json_ids: str | None, hint: str | None) -> None:
    conn.execute("UPDATE wiki_beliefs SET contradicting_belief_ids=?, confidence_hint=? WHERE belief_id=?",
                 (json_ids, hint, belief_id))


def current_by_subject_predicate(conn: apsw.Connection, workspace: str) -> list[dict]:
    """Current beliefs with a subject and predicate: the lint for contradicting_belief_ids."""
    return rows(conn, "SELECT belief_id, subject, predicate, object FROM wiki_beliefs WHERE workspace=? AND "
                      "superseded_at IS NULL AND subject IS NOT NULL AND predicate IS NOT NULL "
                      "ORDER BY subject, predicate, belief_id", (workspace,))


# -- queries for `why` (seed 002 "Resolution") --------------------------------------------------------------


def _window_sql(since: str | None, until_excl: str | None, told_by: str | None = None) -> tuple[str, list]:
    sql, params = "", []
    if told_by:
        sql += " AND b.recorded_at < ?"
        params.append(told_by)
    if since:
        sql += " AND (b.superseded_at IS NULL OR b.superseded_at > ?)"
        params.append(since)
    if until_excl:
        sql += " AND b.asserted_at < ?"
        params.append(until_excl)
    return sql, params


def find_by_id(conn: apsw.Connection, workspace: str, belief_id: str, since: str | None, until_excl: str | None,
               limit: int) -> tuple[list[dict], int]:
    w, p = _window_sql(since, until_excl)
    found = rows(conn, _SELECT_BELIEF + _FROM_BELIEF + " WHERE b.belief_id=? AND b.workspace=?" + w,
                 (belief_id, workspace, *p))
    return found, len(found)


def find_by_subject(conn: apsw.Connection, workspace: str, subject: str, predicate: str | None, since: str | None,
                    until_excl: str | None, limit: int) -> tuple[list[dict], int]:
    return _find_by_column(conn, "subject", workspace, subject, predicate, since, until_excl, limit)


def find_by_topic(conn: apsw.Connection, workspace: str, topic: str, predicate: str | None, since: str | None,
                  until_excl: str | None, limit: int) -> tuple[list[dict], int]:
    return _find_by_column(conn, "topic", workspace, topic, predicate, since, until_excl, limit)


def _find_by_column(conn: apsw.Connection, column: str, workspace: str, value: str, predicate: str | None,
                    since: str | None, until_excl: str | None, limit: int) -> tuple[list[dict], int]:
    """Newest first, at most ``limit``, and the total count (counted only when the page is full)."""
    w, p = _window_sql(since, until_excl)
    cond = f" WHERE b.workspace=? AND b.{column}=?"
    params: list = [workspace, value]
    if predicate:
        cond += " AND b.predicate=?"
        params.append(predicate)
    found = rows(conn, _SELECT_BELIEF + _FROM_BELIEF + cond + w + " ORDER BY b.asserted_at DESC, b.belief_id LIMIT ?",
                 (*params, *p, limit))
    total = len(found) if len(found) < limit else int(scalar(conn, "SELECT COUNT(*) FROM wiki_beliefs b" + cond + w,
                                                              (*params, *p)))
    return found, total


def find_by_fts(conn: apsw.Connection, workspace: str, match: str, predicate: str | None, since: str | None,
                until_excl: str | None, limit: int) -> list[dict]:
    w, p = _window_sql(since, until_excl)
    if predicate:
        w += " AND b.predicate=?"
        p.append(predicate)
    try:
        return rows(conn, _SELECT_BELIEF + ", f.rank AS _rank FROM wiki_beliefs_fts f "
                    "JOIN wiki_beliefs b ON b.rowid = f.rowid JOIN documents d ON d.id = b.wiki_document_id "
                    "WHERE wiki_beliefs_fts MATCH ? AND b.workspace=?" + w + " ORDER BY f.rank, b.belief_id LIMIT ?",
                    (match, workspace, *p, limit))
    except apsw.SQLError:
        return []


def search_beliefs(conn: apsw.Connection, match: str, limit: int, at: str | None = None) -> list[dict]:
    """Beliefs in any workspace whose FTS row matches ``match`` (best first): current ones, or with ``at``
    those believed at that instant (asserted by then, not yet superseded)."""
    if at:
        w, p = " AND b.asserted_at <= ? AND (b.superseded_at IS NULL OR b.superseded_at > ?)", [at, at]
    else:
        w, p = " AND b.superseded_at IS NULL", []
    try:
        return rows(conn, "SELECT b.belief_id, f.rank AS _rank FROM wiki_beliefs_fts f "
                          "JOIN wiki_beliefs b ON b.rowid = f.rowid WHERE wiki_beliefs_fts MATCH ?" + w +
                          " ORDER BY f.rank, b.belief_id LIMIT ?", (match, *p, limit))
    except apsw.SQLError:
        return []


def predecessors(conn: apsw.Connection, ids: Sequence[str]) -> list[dict]:
    out: list[dict] = []
    for part in chunks(list(ids)):
        out += rows(conn, _SELECT_BELIEF + _FROM_BELIEF + f" WHERE b.superseded_by_belief_id IN ({marks(len(part))})",
                    tuple(part))
    return out


def believed_as_of(conn: apsw.Connection, workspace: str, subject: str, at: str) -> list[dict]:
    """Seed 002's "what did I think in April?" query, verbatim but for the parameters."""
    return rows(conn, "SELECT statement, asserted_at, superseded_at FROM wiki_beliefs WHERE workspace = ? "
                      "AND subject = ? AND asserted_at < ? AND (superseded_at IS NULL OR superseded_at >= ?) "
                      "ORDER BY asserted_at DESC", (workspace, subject, at, at))


def list_beliefs(conn: apsw.Connection, workspace: str | None, topic: str | None, current_only: bool, limit: int,
                 offset: int = 0) -> tuple[list[dict], int]:
    cond, params = " WHERE 1=1", []
    if workspace:
        cond += " AND b.workspace=?"
        params.append(workspace)
    if topic:
        cond += " AND b.topic=?"
        params.append(topic)
    if current_only:
        cond += " AND b.superseded_at IS NULL"
    found = rows(conn, _SELECT_BELIEF + _FROM_BELIEF + cond + " ORDER BY b.asserted_at DESC, b.belief_id LIMIT ? OFFSET ?",
                 (*params, limit, offset))
    total = int(scalar(conn, "SELECT COUNT(*) FROM wiki_beliefs b" + cond, params))
    return found, total


def iter_all_beliefs(conn: apsw.Connection, workspace: str | None) -> Iterator[dict]:
    cond, params = ("WHERE b.workspace=?", (workspace,)) if workspace else ("", ())
    cur = conn.cursor().execute(_SELECT_BELIEF + _FROM_BELIEF + f" {cond} ORDER BY b.workspace, b.belief_id", params)
    names = [d[0] for d in cur.getdescription()]
    for r in cur:
        yield dict(zip(names, r))


def current_belief_ids(conn: apsw.Connection, workspace: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT belief_id FROM wiki_beliefs WHERE workspace=? AND superseded_at IS NULL "
                                       "ORDER BY belief_id", (workspace,))]


def count_beliefs(conn: apsw.Connection, workspace: str | None = None) -> int:
    if workspace is None:
        return int(scalar(conn, "SELECT COUNT(*) FROM wiki_beliefs"))
    return int(scalar(conn, "SELECT COUNT(*) FROM wiki_beliefs WHERE workspace=?", (workspace,)))


def fts_rebuild(conn: apsw.Connection) -> None:
    conn.execute("INSERT INTO wiki_beliefs_fts(wiki_beliefs_fts) VALUES ('rebuild')")


def fts_integrity(conn: apsw.Connection) -> bool:
    try:
        conn.execute("INSERT INTO wiki_beliefs_fts(wiki_beliefs_fts, rank) VALUES ('integrity-check', 1)")
        return True
    except apsw.Error:
        return False


def fts_count(conn: apsw.Connection, match: str) -> int:
    return int(scalar(conn, "SELECT COUNT(*) FROM wiki_beliefs_fts WHERE wiki_beliefs_fts MATCH ?", (match,)))


def bare_lookup(conn: apsw.Connection, belief_id: str) -> Any:
    """The baseline the `why` benchmark compares against: one primary-key read."""
    return conn.execute("SELECT statement FROM wiki_beliefs WHERE belief_id=?", (belief_id,)).fetchone()


# ---- sightings, overrides, findings ---------------------------------------------------------------------


def get_sightings(conn: apsw.Connection, ids: Sequence[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for part in chunks(list(ids)):
        for r in rows(conn, f"SELECT * FROM belief_sightings WHERE belief_id IN ({marks(len(part))})", tuple(part)):
            out[r["belief_id"]] = r
    return out


def insert_sightings(conn: apsw.Connection, items: list[dict]) -> None:
    if items:
        conn.executemany("INSERT INTO belief_sightings(belief_id, workspace, first_seen_run, first_seen_at, "
                         "superseded_seen_run, superseded_seen_at) VALUES (:belief_id, :workspace, :first_seen_run, "
                         ":first_seen_at, :superseded_seen_run, :superseded_seen_at)", items)


def mark_superseded_seen(conn: apsw.Connection, belief_id: str, run_id: str, at: str) -> None:
    conn.execute("UPDATE belief_sightings SET superseded_seen_run=?, superseded_seen_at=? WHERE belief_id=? "
                 "AND superseded_seen_run IS NULL", (run_id, at, belief_id))


def insert_override(conn: apsw.Connection, o: dict) -> None:
    conn.execute("INSERT INTO belief_overrides(override_id, workspace, belief_id, action, superseded_by_belief_id, "
                 "reason, at, run_id, note, other_belief_id) VALUES (:override_id, :workspace, :belief_id, :action, "
                 ":superseded_by_belief_id, :reason, :at, :run_id, :note, :other_belief_id)",
                 {"other_belief_id": None, **o})


def overrides_of(conn: apsw.Connection, workspace: str) -> list[dict]:
    return rows(conn, "SELECT * FROM belief_overrides WHERE workspace=? ORDER BY at, override_id", (workspace,))


def findings_of(conn: apsw.Connection, workspace: str) -> dict[tuple[str, str], dict]:
    return {(r["belief_id"], r["check_name"]): r
            for r in rows(conn, "SELECT * FROM wiki_verifier_findings WHERE workspace=?", (workspace,))}


def findings_for_beliefs(conn: apsw.Connection, belief_ids: Sequence[str]) -> list[dict]:
    out: list[dict] = []
    for part in chunks(list(belief_ids)):
        out += rows(conn, f"SELECT * FROM wiki_verifier_findings WHERE belief_id IN ({marks(len(part))}) "
                          "ORDER BY belief_id, check_name", tuple(part))
    return out


def upsert_findings(conn: apsw.Connection, items: list[dict]) -> None:
    if items:
        conn.executemany(
            "INSERT INTO wiki_verifier_findings(workspace, belief_id, check_name, outcome, vote, judge, input_hash, "
            "detail, run_id) VALUES (:workspace, :belief_id, :check_name, :outcome, :vote, :judge, :input_hash, "
            ":detail, :run_id) ON CONFLICT(workspace, belief_id, check_name) DO UPDATE SET outcome=excluded.outcome, "
            "vote=excluded.vote, judge=excluded.judge, input_hash=excluded.input_hash, detail=excluded.detail, "
            "run_id=excluded.run_id", items)


def delete_findings(conn: apsw.Connection, workspace: str, belief_ids: Sequence[str]) -> None:
    for part in chunks(list(belief_ids)):
        conn.execute(f"DELETE FROM wiki_verifier_findings WHERE workspace=? AND belief_id IN ({marks(len(part))})",
                     (workspace, *part))


def delete_finding(conn: apsw.Connection, workspace: str, belief_id: str, check_name: str) -> None:
    conn.execute("DELETE FROM wiki_verifier_findings WHERE workspace=? AND belief_id=? AND check_name=?",
                 (workspace, belief_id, check_name))


def finding_counts(conn: apsw.Connection, workspace: str | None = None) -> list[dict]:
    cond, params = ("WHERE workspace=?", (workspace,)) if workspace else ("", ())
    return rows(conn, f"SELECT check_name, outcome, COUNT(*) AS n FROM wiki_verifier_findings {cond} "
                      "GROUP BY check_name, outcome ORDER BY check_name, outcome", params)


# ---- feed rebuild (`kenning reindex --rebuild-beliefs`, W33) -------------------------------------------------


def conversation_belief_ids(conn: apsw.Connection, workspace: str, except_stages: Sequence[str]) -> list[str]:
    """Beliefs living on a conversation that the feeds published: first recorded by a run of any stage but
    ``except_stages`` (a caller's own `publish_beliefs` runs)."""
    return [r[0] for r in conn.execute(
        "SELECT b.belief_id FROM wiki_beliefs b JOIN documents d ON d.id = b.wiki_document_id "
        "JOIN runs r ON r.run_id = b.asserted_in_run WHERE b.workspace=? AND d.kind = 'conversation' "
        f"AND r.stage NOT IN ({marks(len(except_stages))}) ORDER BY b.belief_id", (workspace, *except_stages))]


def self_node_ids(conn: apsw.Connection) -> list[str]:
    try:
        return [r[0] for r in conn.execute("SELECT belief_id FROM belief_nodes ORDER BY belief_id")]
    except apsw.SQLError:
        return []


def delete_uncited_conversation_provenance(conn: apsw.Connection, workspace: str) -> int:
    n = int(scalar(conn, "SELECT COUNT(*) FROM wiki_claim_provenance p WHERE p.workspace=? AND p.source_kind="
                         "'conversation' AND NOT EXISTS (SELECT 1 FROM belief_provenance l WHERE l.provenance_id = p.id)",
                   (workspace,)))
    conn.execute("DELETE FROM wiki_claim_provenance WHERE workspace=? AND source_kind='conversation' AND NOT EXISTS "
                 "(SELECT 1 FROM belief_provenance l WHERE l.provenance_id = wiki_claim_provenance.id)", (workspace,))
    return n


# ---- `why` for questions (beliefs/question.py, W34) ----------------------------------------------------------


def workspace_predicates(conn: apsw.Connection, workspace: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT DISTINCT predicate FROM wiki_beliefs WHERE workspace=? AND predicate "
                                       "IS NOT NULL ORDER BY predicate", (workspace,))]


def belief_ids_with_predicates(conn: apsw.Connection, workspace: str, predicates: Sequence[str], limit: int) -> list[str]:
    """Current beliefs first, then newest first."""
    return [r[0] for r in conn.execute(
        f"SELECT belief_id FROM wiki_beliefs WHERE workspace=? AND predicate IN ({marks(len(predicates))}) "
        "ORDER BY superseded_at IS NOT NULL, asserted_at DESC, belief_id LIMIT ?", (workspace, *predicates, limit))]


def belief_ids_about(conn: apsw.Connection, workspace: str, names: Sequence[str], predicates: Sequence[str],
                     limit: int) -> list[str]:
    """Beliefs whose subject or object is one of ``names`` (case-insensitive), with one of ``predicates`` when
    given; current first, then newest."""
    low = [n.casefold() for n in names]
    cond = f"(lower(subject) IN ({marks(len(low))}) OR lower(object) IN ({marks(len(low))}))"
    params: list = [workspace, *low, *low]
    if predicates:
        cond += f" AND predicate IN ({marks(len(predicates))})"
        params += list(predicates)
    return [r[0] for r in conn.execute(
        f"SELECT belief_id FROM wiki_beliefs WHERE workspace=? AND {cond} "
        "ORDER BY superseded_at IS NOT NULL, asserted_at DESC, belief_id LIMIT ?", (*params, limit))]


def belief_ids_by_fts(conn: apsw.Connection, workspace: str, match: str, limit: int) -> list[str]:
    try:
        return [r[0] for r in conn.execute(
            "SELECT b.belief_id FROM wiki_beliefs_fts f JOIN wiki_beliefs b ON b.rowid = f.rowid "
            "WHERE wiki_beliefs_fts MATCH ? AND b.workspace=? ORDER BY f.rank, b.belief_id LIMIT ?",
            (match, workspace, limit))]
    except apsw.SQLError:
        return []


def undisputed_pairs(conn: apsw.Connection, workspace: str) -> list[tuple[str, str | None]]:
    return [(r[0], r[1]) for r in conn.execute(
        "SELECT belief_id, other_belief_id FROM belief_overrides WHERE workspace=? AND action='undispute' "
        "ORDER BY at, override_id", (workspace,))]
