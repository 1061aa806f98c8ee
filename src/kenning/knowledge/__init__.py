"""DOC72 knowledge store: the 11-kind node graph, its payload contracts and its relation vocabulary."""
