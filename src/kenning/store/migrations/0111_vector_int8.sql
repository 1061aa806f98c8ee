-- Issue 24 §2 (decisions X3–X5): a vec0 table stores its vectors as float32 or as int8 (each vector scaled by
-- 127 / its largest component, rounded). The element type is part of a table's identity like its model and
-- dimension: one table never mixes the two. Existing tables are float32; the index converts them to the configured
-- storage (embeddings.vector_index.storage) at the next write, from the stored floats (no re-encoding).
ALTER TABLE vector_tables ADD COLUMN element TEXT NOT NULL DEFAULT 'float32' CHECK (element IN ('float32', 'int8'));
