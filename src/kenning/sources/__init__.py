"""Source readers (ChatGPT exports, transcripts, notes) and the raw-layer primitives they share."""
