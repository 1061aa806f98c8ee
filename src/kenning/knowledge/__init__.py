"""DOC72 knowledge store: node kinds and contracts, the single writer, confidence, lifecycle, provenance, experience."""
