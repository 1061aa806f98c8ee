-- Issue 18 parts 4–5 (seed 003 §20B): an assistant suggestion the user rejected is not written to the node store;
-- it is recorded here as a rejected option so it is not proposed as knowledge again and can be shown.
CREATE TABLE mining_rejected_options (
    option_id TEXT PRIMARY KEY,          -- hash of kind, name and the rejecting message: re-mining adds nothing
    node_kind TEXT NOT NULL,
    name TEXT NOT NULL,
    quote TEXT NOT NULL,
    suggestion_message_id TEXT,
    rejection_message_id TEXT,
    conversation_id TEXT,
    recorded_at TEXT NOT NULL
);
CREATE INDEX mining_rejected_options_conv ON mining_rejected_options(conversation_id);
