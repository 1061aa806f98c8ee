"""Later stages' progress: a total and the unit they count (issue 23 part 4)."""

from types import SimpleNamespace

from chatgpt_fixtures import simple_chat, write_export
from kenning.api import Vault
from kenning.cli.common import AmountColumn


def test_stages_report_totals_in_their_own_units(tmp_path):
    src = write_export(tmp_path / "c.json", [simple_chat(f"c{i}", f"Chat {i}", [("user", f"I live in Lisbon {i}."),
                                                                                ("assistant", "ok")])
                                             for i in range(3)])
    calls = []
    with Vault.open(tmp_path / "kenning.db", overrides={"embeddings": {"backend": "hash"}}) as v:
        v.ingest([src], stages="0,1,2A,2B,3,4,5,6", progress=lambda **kw: calls.append(kw))
    by_file = {}
    for kw in calls:
        by_file.setdefault(kw.get("file"), []).append(kw)
    a = by_file["stage 2A"][-1]
    assert (a["unit"], a["records"], a["total"]) == ("messages", 6, 6)
    four = by_file["stage 4"][-1]
    assert (four["unit"], four["records"], four["total"]) == ("conversations", 3, 3)
    assert by_file["stage 6"][-1]["unit"] == "nodes" and by_file["stage 6"][-1]["total"] is not None
    assert by_file[str(src)][-1]["total_bytes"] == src.stat().st_size  # the import itself counts bytes


def test_a_counted_task_shows_done_of_total_and_its_unit():
    col = AmountColumn()
    task = SimpleNamespace(fields={"unit": "conversations", "records": 40}, completed=40, total=120, elapsed=2.0)
    assert col.render(task).plain == "40/120 conversations · 20/s"
    no_total = SimpleNamespace(fields={"unit": "turns"}, completed=5, total=None, elapsed=0)
    assert col.render(no_total).plain == "5 turns"
