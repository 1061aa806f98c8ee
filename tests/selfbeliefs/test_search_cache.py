"""The resolver and the conflict engine share one pass over the vectors per atom (VectorIndex.search_by_kind and
HTNBeliefEmbedder's cache): the answers must be exactly those of separate searches, also after new nodes."""

from __future__ import annotations

from kenning.api import Vault
from kenning.llm.index import VectorIndex
from kenning.selfbelief.embedder import HTNBeliefEmbedder
from kenning.store.connection import transaction

TEXTS = ["i am patient", "i am a patient person", "i am impatient", "i love mornings", "i hate mornings",
         "i am patient with my kids", "i value honesty", "i am a night owl", "i am curious", "i am stubborn",
         "i am not patient", "i like quiet evenings", "i am shy", "i am outgoing", "i overthink decisions"]


def test_search_by_kind_equals_separate_searches_and_the_cache_stays_exact(tmp_path):
    v = Vault.open(tmp_path / "v.db", overrides={"embeddings": {"backend": "hash"}})
    space = v.config.self_beliefs.embeddings.space
    with transaction(v.conn):
        idx = VectorIndex(v.conn, v.config)
        idx.upsert(space, [(f"n{i:02d}", t, "deny" if i % 3 == 0 else "affirm") for i, t in enumerate(TEXTS)])
        emb = HTNBeliefEmbedder(v.conn, v.config)
        q = emb.embed("i am a patient parent")
        both = idx.search_by_kind(q, 5, space=space, kinds=["affirm", "deny"])
        for kind in ("affirm", "deny"):
            sep = idx.search(q, 5, space=space, kinds=[kind])
            assert [(h.item_id, round(h.score, 6)) for h in both[kind]] == [(h.item_id, round(h.score, 6)) for h in sep]
        first = emb.similar("i am a patient parent", q, 4, "affirm")
        # a node indexed by this embedder afterwards is merged into the cached answer exactly
        newv = emb.embed("i am a patient parent")
        emb.index_node("n99", "i am a patient parent", "affirm", newv)
        cached = emb.similar("i am a patient parent", q, 4, "affirm", exclude=["n01"])
        fresh = HTNBeliefEmbedder(v.conn, v.config).similar("i am a patient parent", q, 4, "affirm", exclude=["n01"])
        assert [(s.belief_id, round(s.score, 6)) for s in cached] == [(s.belief_id, round(s.score, 6)) for s in fresh]
        assert cached[0].belief_id == "n99" and first[0].belief_id != "n99"
        # someone else writes to the index: the cache is dropped
        idx.upsert(space, [("n98", "i am a patient parent too", "affirm")])
        emb.check_fresh()
        again = emb.similar("i am a patient parent", q, 4, "affirm")
        assert "n98" in [s.belief_id for s in again]
    v.close()


def test_search_by_kind_in_a_minority_space_uses_its_block_and_stays_exact(tmp_path):
    """A vault's vector table also holds messages and entities: the self-belief space is searched through its own
    contiguous block (kept current by upserts, dropped by deletes), with the answers of a plain filtered search."""
    from kenning.llm.index import _MIRRORS, _mirror_key

    v = Vault.open(tmp_path / "v.db", overrides={"embeddings": {"backend": "hash"}})
    space = v.config.self_beliefs.embeddings.space
    with transaction(v.conn):
        idx = VectorIndex(v.conn, v.config, engine="numpy")
        idx.upsert("search", [(f"m{i:03d}", f"message {i} about {TEXTS[i % len(TEXTS)]} and lunch", "message")
                              for i in range(60)])
        idx.upsert(space, [(f"n{i:02d}", t, "deny" if i % 3 == 0 else "affirm") for i, t in enumerate(TEXTS)])
        q = HTNBeliefEmbedder(v.conn, v.config).embed("i am a patient parent")

        def check():
            both = idx.search_by_kind(q, 5, space=space, kinds=["affirm", "deny"])
            for kind in ("affirm", "deny"):
                sep = idx.search(q, 5, space=space, kinds=[kind], exact=True)
                assert [(h.item_id, round(h.score, 6)) for h in both[kind]] == \
                    [(h.item_id, round(h.score, 6)) for h in sep]
                assert all(h.space == space and h.kind == kind for h in both[kind])
            return both

        check()
        mirror = _MIRRORS[_mirror_key(v.conn, idx.active()["table_name"])]
        code = mirror.spaces[space]
        assert code in mirror.blocks and mirror.blocks[code]["n"] == len(TEXTS)
        idx.upsert(space, [("n99", "i am a patient parent", "affirm"),           # appended to the block
                           ("n02", "i am a very patient parent", "affirm")])     # re-embedded in place
        assert mirror.blocks[code]["n"] == len(TEXTS) + 1
        got = check()
        assert [h.item_id for h in got["affirm"][:2]] == ["n99", "n02"]
        idx.delete(space, ["n99"])
        assert code not in mirror.blocks                                        # rebuilt on the next search
        assert "n99" not in [h.item_id for h in check()["affirm"]]
    v.close()


def test_prefetch_of_an_experiences_atoms_answers_like_separate_searches(tmp_path):
    """Three or more atom vectors are searched in one matrix product (search_by_kind_many); what `similar` then
    answers equals fresh separate searches (the whole table, and a minority space's block)."""
    import numpy as np

    from kenning.llm.index import drop_mirrors

    v = Vault.open(tmp_path / "v.db", overrides={"embeddings": {"backend": "hash"}})
    space = v.config.self_beliefs.embeddings.space
    queries = ["i am a patient parent", "i hate early mornings", "i am curious about people", "i am shy"]
    with transaction(v.conn):
        idx = VectorIndex(v.conn, v.config, engine="numpy")
        idx.upsert(space, [(f"n{i:02d}", t, "deny" if i % 3 == 0 else "affirm") for i, t in enumerate(TEXTS)])
        for other in (0, 80):                      # belief nodes alone, then a minority of the table
            if other:
                idx.upsert("search", [(f"m{i:03d}", f"message {i} on {TEXTS[i % len(TEXTS)]}", "message")
                                      for i in range(other)])
            emb = HTNBeliefEmbedder(v.conn, v.config)
            vecs = emb.embed_batch(queries)
            many = idx.search_by_kind_many(vecs, 6, space=space, kinds=["affirm", "deny"])
            for q, got in zip(vecs, many):
                one = idx.search_by_kind(q, 6, space=space, kinds=["affirm", "deny"])
                for kind in ("affirm", "deny"):
                    assert [(h.item_id, round(h.score, 5)) for h in got[kind]] == \
                        [(h.item_id, round(h.score, 5)) for h in one[kind]]
            emb.prefetch(vecs)
            assert len(emb._by_kind) == len(queries)
            fresh = HTNBeliefEmbedder(v.conn, v.config)
            for t, q in zip(queries, vecs):
                for pol in ("affirm", "deny"):
                    a = [(s.belief_id, round(s.score, 5)) for s in emb.similar(t, q, 5, pol)]
                    b = [(s.belief_id, round(s.score, 5)) for s in fresh.similar(t, q, 5, pol)]
                    assert a == b and a
            two = HTNBeliefEmbedder(v.conn, v.config)
            two.prefetch(vecs[:2])                 # below PREFETCH_MIN: nothing searched ahead
            assert two._by_kind == {}
            drop_mirrors()
    v.close()
