-- Transcripts (issue 9): who takes part in each transcript session. A session is a `conversations` row
-- with source_kind='transcript' and its turns are `messages` rows (author_name = the speaker); this table
-- keeps the participants' declared names and aliases and which one is the vault owner (--self).
CREATE TABLE transcript_participants (
  conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id),
  participant_key TEXT NOT NULL,        -- the participant's id in the file, else its name
  name TEXT NOT NULL,
  aliases_json TEXT NOT NULL,           -- JCS array of other names the file gives
  is_self INTEGER NOT NULL CHECK (is_self IN (0, 1)),
  PRIMARY KEY (conversation_id, participant_key)
);
CREATE INDEX idx_transcript_participants_name ON transcript_participants(name);
