"""The disk holding the session file fills up mid-run (issue 15, item 7), on a real small
tmpfs: one sentence, no traceback, nothing stored is lost, the run goes on on the host and
its row stays open; after space is freed `versus attach` brings in the rest exactly once."""
import subprocess

import pytest

from app.store.session import SessionFile
from tests.faults import (CLIProcess, assert_nothing_left, assert_stored_exactly_once,
                          small_tmpfs)

pytestmark = pytest.mark.faults


@pytest.fixture
def small_disk(tmp_path):
    """A 400 KB tmpfs: room for a session file's first seconds of a run, not for the run."""
    with small_tmpfs(tmp_path / "small") as mnt:
        yield mnt


def test_full_disk_leaves_the_run_going_and_attach_brings_in_the_rest_once(
        versus_home, pg_db, small_disk):
    out = small_disk / "run.versus"
    cli = CLIProcess("run", "--target", pg_db, "--workload", "point-query", "--duration", "12",
                     "--set", "table-size=2000", "--out", str(out))
    rid = cli.run_id()
    r = cli.finish()
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 130, r.stderr[-2000:]          # left going on the host
    assert "session saved" not in r.stdout and f"session so far: {out}" in r.stdout
    assert (f"the disk holding {out} is full; the run goes on on this computer and its events "
            f"stay in the host's spool" in r.stderr)
    assert f"run 'versus attach {out}' to bring in the rest" in r.stderr
    with SessionFile(out) as s:
        rec = s.run(rid)
        seqs = [e["seq"] for e in s.events(rid)]
        ends = s.events(rid, kinds=["end"])
    # what was stored before the disk filled is all there, in order; the run is open
    assert rec.status == "running" and seqs == list(range(1, len(seqs) + 1)) and seqs
    assert not ends
    assert f"everything up to event {seqs[-1]} is saved" in r.stderr

    # free space, then attach: the rest arrives, each event once, the run ends by itself
    subprocess.run(["mount", "-o", "remount,size=16m", str(small_disk)], check=True)
    a = CLIProcess("attach", str(out)).finish()
    assert a.returncode == 0, a.stderr[-2000:]
    evs = assert_stored_exactly_once(out, rid)
    assert len(evs) > len(seqs)
    with SessionFile(out) as s:
        assert s.run(rid).status == "ok"
    assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "ok"
    assert_nothing_left(rid)


def test_a_disk_too_full_to_start_a_session_starts_nothing(versus_home, pg_db, small_disk):
    filler = small_disk / "filler"
    with open(filler, "wb") as f:          # leave about 40 KB: less than a new session needs
        try:
            f.write(b"x" * (400 * 1024 - 40 * 1024))
        except OSError:
            pass
    out = small_disk / "run.versus"
    r = CLIProcess("run", "--target", pg_db, "--workload", "point-query", "--duration", "2",
                   "--set", "table-size=2000", "--out", str(out)).finish()
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 2, r.stderr[-2000:]
    assert f"the disk holding {out} is full" in r.stderr
    assert " started on " not in r.stdout
    assert not out.exists()                 # no half-made file for the next try to refuse
