"""Hybrid retrieval: ranked lanes (FTS5 BM25, vectors, speaker, time, adjacency, …) fused with RRF."""
