"""The password does not sit in the environment of the processes a run starts (issue 15):
`VERSUS_DB_PASSWORD` set for the CLI reaches the agent through its 0600 secret file only, so
the agent, its virtual users and the tools they start never hold it in /proc/PID/environ.

A real local run against the machine's PostgreSQL (trust authentication: the password is
carried but not needed), its processes read from /proc while it measures."""
from __future__ import annotations

import secrets

import pytest

from tests.faults import CLIProcess, pids_matching, run_dir, wait_until
from tests.workloads.test_lost_clients import _agent_of, _children, _wait_measuring

pytestmark = pytest.mark.pg


def _environ(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read()
    except OSError:
        return b""


def test_a_local_run_keeps_the_password_out_of_its_processes_environment(pg_db, versus_home,
                                                                         tmp_path):
    marker = f"pw-{secrets.token_hex(8)}"
    cli = CLIProcess("run", "--target", pg_db, "--workload", "point-query", "--duration", "8",
                     "--set", "table-size=2000", "--out", str(tmp_path / "s.versus"),
                     env={"VERSUS_DB_PASSWORD": marker})
    try:
        rid = cli.run_id()
        _wait_measuring(run_dir(rid) / "events.jsonl", "measure")
        agent = _agent_of(rid)
        vus = wait_until(lambda: _children(agent) or None, 30, what="the agent's children")
        followers = pids_matching(rf"workloads\.agent follow\S* .*{rid}")
        checked = [agent, *vus, *followers]
        assert len(checked) >= 3, checked
        assert _environ(cli.proc.pid), "the CLI's own environment could not be read"
        assert marker.encode() in _environ(cli.proc.pid)   # the test did set it
        holding = [p for p in checked if marker.encode() in _environ(p)]
        assert holding == [], f"processes of the run hold the password: {holding}"
    finally:
        r = cli.finish()
    assert r.returncode == 0, r.stderr[-2000:]
