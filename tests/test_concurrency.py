"""Issue 23 part 5 (and part 4's read-only storage): imports and reads at once, real processes, real files."""

import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time

import apsw
import pytest

from chatgpt_fixtures import simple_chat, write_export
from conftest import SRC

SAMPLE = SRC / "kenning" / "samples" / "sample-chatgpt-export.zip"


def export(path, prefix, n):
    return write_export(path, [simple_chat(f"{prefix}-{i}", f"{prefix} {i}",
                                           [("user", f"I visited Lisbon with Ana in 2023, note {i}"),
                                            ("assistant", "Nice.")]) for i in range(n)])


def env():
    return {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "200"}


def start(*args, db):
    return subprocess.Popen([sys.executable, "-m", "kenning", *args, "--db", str(db)], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def conversations(db):
    return {r[0] for r in apsw.Connection(str(db)).execute("SELECT conversation_id FROM conversations")}


@pytest.mark.slow
def test_two_imports_at_once_both_land_and_reads_keep_working(tmp_path, cli):
    db = tmp_path / "v" / "kenning.db"
    cli("ingest", str(export(tmp_path / "seed.json", "seed", 3)), "--stages", "0,1", db=db)
    a = export(tmp_path / "a.json", "a", 1500)
    b = export(tmp_path / "b.json", "b", 1500)
    pa = start("ingest", str(a), "--stages", "0,1,2A", "-q", db=db)
    pb = start("ingest", str(b), "--stages", "0,1,2A", "-q", db=db)
    reads = []
    while pa.poll() is None or pb.poll() is None:  # read while they write
        r = subprocess.run([sys.executable, "-m", "kenning", "status", "--json", "--db", str(db)], env=env(),
                           capture_output=True, text=True, timeout=120)
        reads.append(r)
        time.sleep(0.1)
    outs = [p.communicate() for p in (pa, pb)]
    assert pa.returncode == 0 and pb.returncode == 0, outs
    assert all("Traceback" not in err for _, err in outs)
    assert any("waiting for it to finish" in err for _, err in outs)  # the second one said it waits
    assert conversations(db) == ({f"seed-{i}" for i in range(3)} | {f"a-{i}" for i in range(1500)}
                                 | {f"b-{i}" for i in range(1500)})
    assert reads and all(r.returncode == 0 and "Traceback" not in r.stderr for r in reads)
    assert all(json.loads(r.stdout) for r in reads)


def _hold_lock(db):
    fd = os.open(db.with_name(db.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.pwrite(fd, b"4242", 0)
    return fd


def test_a_second_import_waits_then_proceeds(tmp_path, cli):
    db = tmp_path / "kenning.db"
    cli("init", db=db)
    fd = _hold_lock(db)  # another import is running (as far as the vault can tell)
    proc = start("ingest", str(export(tmp_path / "a.json", "a", 5)), "--stages", "0,1", "-q", db=db)
    ready, _, _ = select.select([proc.stderr], [], [], 120)
    first = proc.stderr.readline() if ready else ""
    assert "another import into" in first and "(pid 4242)" in first and "waiting" in first
    time.sleep(0.5)
    assert proc.poll() is None and conversations(db) == set()  # it waits, writing nothing
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert len(conversations(db)) == 5


def test_a_second_import_refuses_after_waiting_too_long(tmp_path, cli):
    db = tmp_path / "kenning.db"
    cli("init", db=db)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("concurrency:\n  import_wait_s: 0.5\n")
    fd = _hold_lock(db)
    try:
        proc = cli("ingest", str(export(tmp_path / "a.json", "a", 5)), "--stages", "0,1", "--config", str(cfg),
                   db=db, check=False)
    finally:
        os.close(fd)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "still running (pid 4242)" in proc.stderr and "nothing was imported" in proc.stderr
    assert conversations(db) == set()


def _readonly_run(folder, *args):
    """Run the CLI with ``folder`` on read-only storage: a read-only bind mount as root (root ignores file
    modes), chmod 0444/0555 otherwise."""
    cmd = [sys.executable, "-m", "kenning", *args]
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("needs unshare to mount read-only as root")
        script = (f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && exec "$@"')
        cmd = ["unshare", "-m", "sh", "-c", script, "sh", *cmd]
    return subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)


def test_a_vault_on_readonly_storage_can_be_read_and_writes_say_read_only(tmp_path, cli):
    folder = tmp_path / "ro"
    db = folder / "kenning.db"
    cli("ingest", str(SAMPLE), "--stages", "0,1,2A,2B,3,4", db=db)
    for p in folder.iterdir():
        p.chmod(0o444)
    folder.chmod(0o555)
    try:
        probe = _readonly_run(folder, "status", "--json", "--db", str(db))
        if "mount" in probe.stderr and probe.returncode != 0:
            pytest.skip(f"cannot mount read-only here: {probe.stderr.strip()}")
        assert probe.returncode == 0, probe.stderr
        assert json.loads(probe.stdout)
        facts = _readonly_run(folder, "facts", "--json", "--db", str(db))
        assert facts.returncode == 0 and json.loads(facts.stdout), facts.stderr
        write = _readonly_run(folder, "ingest", str(export(tmp_path / "a.json", "a", 2)), "--stages", "0,1",
                              "--db", str(db))
        assert write.returncode != 0 and "read-only" in write.stderr and "Traceback" not in write.stderr
    finally:
        folder.chmod(0o755)
    assert "a-0" not in conversations(db)
