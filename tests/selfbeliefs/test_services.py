"""§4.12 tentative-link auto accept / reject on stored links, and §4.9's text-similarity fallback."""

from __future__ import annotations

import json

from conftest import run_cli
from kenning.api import Vault
from kenning.pipeline.clock import Clock
from kenning.selfbelief.links import TentativeLinkService
from kenning.sources.ids import IdFactory
from kenning.store import selfbeliefs as sql
from kenning.store.connection import transaction
from selfbeliefs.helpers import AS_OF, export, hash_config


def test_links_auto_accept_and_auto_reject_never_merge(tmp_path):
    cfg = hash_config(tmp_path)
    db = tmp_path / "v.db"
    run_cli("ingest", str(export(tmp_path)), "--config", str(cfg), "--stages", "0,1,self", "--as-of", AS_OF, db=db)
    with Vault.open(db, config_path=cfg) as v:
        ids = [r[0] for r in v.conn.execute("SELECT belief_id FROM belief_nodes ORDER BY belief_id")]
        a, b, c = ids[0], ids[1], ids[2]
        with transaction(v.conn):
            v.conn.execute("DELETE FROM tentative_links")
            svc = TentativeLinkService(v.conn, v.config, Clock.from_option(AS_OF), IdFactory(v.config.ids.id_namespace),
                                       "test")
            first = svc.create_or_update(b, a, {"n": 1})           # stored in order, whatever the argument order
            assert (first["from_belief_id"], first["to_belief_id"]) == (a, b)
            assert first["status"] == "pending" and round(first["confidence"], 6) == 0.768525
            second = svc.create_or_update(a, b, {"n": 2})           # support_both 2 → 0.917 > 0.85
            assert second["status"] == "accepted" and second["status_reason"] == "auto_accept"
            link = svc.create_or_update(a, c, {"n": 1})
            for _ in range(4):              # four definite matches to one side only: sigmoid(1.2 − 3.6) = 0.083
                link = svc.definite_match(a, {"m": 1})[0] if link["status"] == "pending" else link
            assert link["status"] == "rejected" and link["status_reason"] == "auto_reject"
        # accepted is not merged (invariant 4): both nodes still stand on their own
        nodes = sql.nodes_by_ids(v.conn, [a, b])
        assert all(n["merged_into_belief_id"] is None for n in nodes.values())


def test_text_similarity_fallback_without_embeddings(tmp_path):
    cfg = hash_config(tmp_path, "self_beliefs:\n  embeddings:\n    enabled: false\n")
    db = tmp_path / "v.db"
    run_cli("ingest", str(export(tmp_path, [("user", "I am a patient person."), ("assistant", "ok"),
                                            ("user", "I am a patient person!"), ("assistant", "ok"),
                                            ("user", "I am a patent person.")])),
            "--config", str(cfg), "--stages", "0,1,self", "--as-of", AS_OF, db=db)
    with Vault.open(db, config_path=cfg) as v:
        occ = v.conn.execute("SELECT n.canonical_text, o.resolution, o.signals_json FROM belief_occurrences o "
                             "JOIN belief_nodes n USING (belief_id) ORDER BY o.occurred_at").fetchall()
    methods = [json.loads(s)["resolution"].get("method") for _, _, s in occ]
    assert [o[1] for o in occ] == ["no_match", "match", "match"]    # "patent" ≈ "patient": ratio ≥ 0.92
    assert methods[0] == "levenshtein_ratio" and methods[1] == "canonical_hash"
    assert methods[2] == "levenshtein_ratio" and occ[2][0] == "i am a patient person"
