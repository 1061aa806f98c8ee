"""`kenning maintain`: the nightly upkeep as one resumable DAG (seed 003 §42, §42A.5–6, §3.6) — cleanup, semantic
folding, co-occurrence cliques and motifs, hygiene, compaction, VACUUM — and `kenning health` (§41, §42A.6)."""
