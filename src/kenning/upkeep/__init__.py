"""Graph upkeep (seed 003 §42, §42A): evidence bundles and the review queue, and the nightly maintain DAG."""
