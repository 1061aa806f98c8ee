-- One time model for every ledger row (issue 22 §1, docs/decisions.md W30–W31).
-- asserted_at / superseded_at: when the person (or the wiki) started / stopped holding the belief.
-- recorded_at / superseded_recorded_at: Kenning's own transaction time — when it was first told the belief and
-- when it first learned that it ended — so "what had Kenning been told by DATE" stays answerable.
ALTER TABLE wiki_beliefs ADD COLUMN recorded_at TEXT;
ALTER TABLE wiki_beliefs ADD COLUMN superseded_recorded_at TEXT;
UPDATE wiki_beliefs SET recorded_at = COALESCE(
  (SELECT s.first_seen_at FROM belief_sightings s WHERE s.belief_id = wiki_beliefs.belief_id), created_at);
UPDATE wiki_beliefs SET superseded_recorded_at = COALESCE(
  (SELECT s.superseded_seen_at FROM belief_sightings s WHERE s.belief_id = wiki_beliefs.belief_id), superseded_at)
  WHERE superseded_at IS NOT NULL;
CREATE INDEX idx_beliefs_recorded_at ON wiki_beliefs(workspace, recorded_at);

-- Your decisions gain two undo actions (issue 22 §2): `restore` (a belief you or a drift check ended is held
-- again) and `undispute` (two beliefs you say do not conflict; other_belief_id NULL = with any belief).
-- SQLite cannot alter a CHECK, so the table is rebuilt (it is small: one row per command you ran).
CREATE TABLE belief_overrides_new (
  override_id TEXT PRIMARY KEY,
  workspace TEXT NOT NULL,
  belief_id TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('supersede','mark_drifted','restore','undispute')),
  superseded_by_belief_id TEXT,
  reason TEXT NOT NULL CHECK (action IN ('restore','undispute')
    OR reason IN ('contradicted_by_new_source','elaborated','manual_correction','source_drifted')),
  at TEXT NOT NULL,
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  note TEXT,
  other_belief_id TEXT
);
INSERT INTO belief_overrides_new(override_id, workspace, belief_id, action, superseded_by_belief_id, reason, at,
                                 run_id, note)
  SELECT override_id, workspace, belief_id, action, superseded_by_belief_id, reason, at, run_id, note
  FROM belief_overrides;
DROP TABLE belief_overrides;
ALTER TABLE belief_overrides_new RENAME TO belief_overrides;
CREATE INDEX idx_belief_overrides_belief ON belief_overrides(workspace, belief_id);
