"""Fault suite on this computer (the `local` host): the follower process killed by PID, a
stream line this Versus cannot read, the app itself killed or interrupted mid-run, and
`versus attach` bringing in the rest exactly once."""
import json
import os
import signal

import pytest

from app.store.session import SessionFile
from tests.faults import (CLIProcess, assert_nothing_left, assert_stored_exactly_once,
                          pids_matching, run_dir, wait_for_seq,
                          wait_until)

pytestmark = pytest.mark.faults


def _run(pg_db, out, duration=5, *extra):
    return CLIProcess("run", "--target", pg_db, "--workload", "point-query", "--duration",
                      str(duration), "--set", "table-size=2000", "--out", str(out), "--json",
                      *extra)


def _stored(path, run_id):
    with SessionFile(path) as s:
        return {r.id: r.events for r in s.runs()}.get(run_id, 0)


def _followers(run_id):
    return pids_matching(rf"workloads\.agent follow --dir \S*{run_id}")


def test_killed_follower_is_restarted_and_every_event_arrives(versus_home, pg_db, tmp_path):
    out = tmp_path / "f.versus"
    cli = _run(pg_db, out)
    rid = cli.run_id()
    for seq in (8, 16):
        wait_for_seq(rid, seq)
        pids = wait_until(lambda: _followers(rid), 10, what="the follower process")
        for p in pids:
            os.kill(p, signal.SIGKILL)
    r = cli.finish()
    assert r.returncode == 0, r.stderr[-2000:]
    assert "starting it again" in r.stderr
    run = json.loads(r.stdout)
    assert run["status"] == "ok" and run["reason"] == ""
    assert_stored_exactly_once(out, rid)
    assert_nothing_left(rid)


def test_unknown_format_version_after_start_fails_the_run_not_bad_input(versus_home, pg_db,
                                                                       tmp_path):
    out = tmp_path / "v.versus"
    cli = _run(pg_db, out, 30)
    rid = cli.run_id()
    wait_for_seq(rid, 5)
    with open(run_dir(rid) / "events.jsonl", "ab") as f:
        f.write(b'{"v": 99, "seq": 1000000000, "t": 1.0, "kind": "sample"}\n')
    r = cli.finish()
    assert r.returncode == 1, r.stderr[-2000:]
    assert "event format 99" in r.stderr and "stopped the run on the host" in r.stderr
    with SessionFile(out) as s:
        rec = s.run(rid)
        seqs = [e["seq"] for e in s.events(rid)]
    assert rec.status == "failed" and "event format 99" in rec.reason
    # every event before the unreadable line is stored, as the reason says
    assert seqs == list(range(1, seqs[-1] + 1)) and seqs[-1] >= 5
    assert f"everything up to event {seqs[-1]} is saved" in rec.reason
    assert_nothing_left(rid)


def test_app_killed_mid_run_then_attach_brings_in_the_rest_once(versus_home, pg_db, tmp_path):
    out = tmp_path / "k.versus"
    cli = _run(pg_db, out, 4)
    rid = cli.run_id()
    wait_for_seq(rid, 6)
    wait_until(lambda: _stored(out, rid) >= 3, 30, what="events in the session file")
    cli.proc.kill()                       # the app dies; the agent goes on on the host
    cli.finish()
    with SessionFile(out) as s:
        rec = s.run(rid)
    assert rec.status == "running" and 3 <= rec.events < 40      # attach starts past hello
    shown = CLIProcess("show", str(out)).finish()
    assert f"'versus attach {out}' brings in the rest" in shown.stdout
    # a new run into the same file says so first (and here stops at its bad parameter)
    again = CLIProcess("run", "--workload", "point-query", "--set", "clients=lots",
                       "--out", str(out)).finish()
    assert again.returncode == 2 and f"has an open run: run {rid}" in again.stdout
    assert f"'versus attach {out}' brings in the rest" in again.stdout
    wait_until(lambda: not pids_matching(rf"workloads\.agent run --dir \S*{rid}"), 30, 0.2,
               "the agent finishing")
    r = CLIProcess("attach", str(out)).finish()
    assert r.returncode == 0, r.stderr[-2000:]
    assert rid in r.stdout
    (done,) = [x for x in r.stdout.splitlines() if "measure done:" in x]    # as `run` says it
    assert " QPS (over " in done and " ops in " not in done, done
    evs = assert_stored_exactly_once(out, rid)
    assert evs[-1]["kind"] == "end"
    with SessionFile(out) as s:
        assert s.run(rid).status == "ok"
    again = CLIProcess("attach", str(out)).finish()     # nothing left to bring in
    assert again.returncode == 0 and "nothing to attach" in again.stdout
    assert_stored_exactly_once(out, rid)
    assert_nothing_left(rid)


def test_second_ctrl_c_leaves_the_run_open_then_attach_follows_it_live(versus_home, pg_db,
                                                                      tmp_path):
    out = tmp_path / "c.versus"
    cli = _run(pg_db, out, 8)
    rid = cli.run_id()
    wait_for_seq(rid, 5)
    cli.proc.send_signal(signal.SIGINT)
    cli.wait_for("stopping the run")
    cli.proc.send_signal(signal.SIGINT)
    r = cli.finish()
    assert r.returncode == 130
    with SessionFile(out) as s:
        rec = s.run(rid)
    # the first Ctrl-C asked the agent to stop; the run still ends on the host
    assert rec.status == "running" and "versus attach" in rec.reason
    r = CLIProcess("attach", str(out)).finish()
    assert r.returncode in (0, 130), r.stderr[-2000:]
    assert_stored_exactly_once(out, rid)
    assert_nothing_left(rid)


def test_killed_agent_is_said_as_it_is_and_attach_is_not_offered(versus_home, pg_db, tmp_path):
    """The agent is killed outright: a local run says "on this computer", does not point to
    an empty agent.log, and neither `show` nor `attach` offers what cannot come."""
    out = tmp_path / "a.versus"
    cli = _run(pg_db, out, 30)
    rid = cli.run_id()
    wait_for_seq(rid, 6)
    os.kill(int((run_dir(rid) / "agent.pid").read_text()), signal.SIGKILL)
    r = cli.finish()
    assert r.returncode == 1, r.stderr[-2000:]
    assert "the agent on this computer ended without finishing the run" in r.stderr
    assert "on the host" not in r.stderr and "agent.log" not in r.stderr
    assert "nothing more can be brought in" in r.stderr
    shown = CLIProcess("show", str(out)).finish()
    assert "versus attach" not in shown.stdout and "ended without finishing" in shown.stdout
    again = CLIProcess("attach", str(out)).finish()
    assert again.returncode == 0 and "nothing to attach" in again.stdout
