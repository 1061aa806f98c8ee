"""Seed 003 §25 conversation corpus: thread summaries, decision checkpoints, resume cards (issue 18 part 6)."""
