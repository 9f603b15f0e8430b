"""Runs over a real OpenSSH server on loopback against the machine's PostgreSQL and MariaDB."""
import json
import sys
import threading

import pytest

from app.model.config import HostConfig
from app.remote.runner import RunController, RunRequest
from app.store.catalog import Catalog
from app.store.session import SessionFile
from tests.dbs import versus


@pytest.fixture
def ssh_host(sshd, versus_home):
    """A saved host pointing at the loopback sshd; its Python is this venv's (it has the
    database drivers), as a user would set it for a prepared host."""
    cat = Catalog()
    cat.save_host(HostConfig(name="bench-box", address=sshd.host, port=sshd.port,
                             user=sshd.user, auth="key", key_file=str(sshd.key_file),
                             python=sys.executable))
    return cat


def test_unknown_host_key_is_refused_until_accepted(sshd, ssh_host, pg_db, tmp_path):
    out = tmp_path / "k.versus"
    args = ["run", "--host", "bench-box", "--target", pg_db, "--workload", "point-query",
            "--duration", "1", "--set", "table-size=1000", "--out", str(out)]
    r = versus(*args)
    assert r.returncode == 2
    assert sshd.host_key_fingerprint in r.stderr and "--accept-host-key" in r.stderr
    assert not out.exists()
    r = versus(*args, "--accept-host-key", "SHA256:AAAAnotTheRightKeyAAAAAAAAAAAAAAAAAAAAAAAAA")
    assert r.returncode == 2 and sshd.host_key_fingerprint in r.stderr
    r = versus(*args, "--accept-host-key", sshd.host_key_fingerprint)
    assert r.returncode == 0, r.stdout + r.stderr
    r = versus(*args)                     # remembered in the app's known_hosts
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_point_query_over_ssh(request, db, sshd, ssh_host, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "ssh.versus"
    r = versus("run", "--host", "bench-box", "--target", url, "--workload", "point-query",
               "--duration", "5", "--set", "table-size=20000", "--out", str(out),
               "--accept-host-key", sshd.host_key_fingerprint, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    run = json.loads(r.stdout)
    assert run["events"] == run["last_seq"]
    m = next(p for p in run["phases"] if p["name"] == "measure")
    assert m["samples"] >= 4 and m["host_samples"] >= 4
    assert abs(m["server"]["delta"] - m["ops_total"]) <= 0.02 * m["ops_total"]


def test_dropped_link_resumes_without_loss(sshd, ssh_host, pg_db, tmp_path):
    """Cut the SSH connection mid-run: the run goes on on the host, the controller
    reconnects and resumes from the last stored event."""
    out = tmp_path / "drop.versus"
    statuses: list[str] = []
    measured = []
    dropped = threading.Event()

    def on_events(run_id, evs):
        measured.extend(e for e in evs if e["kind"] == "sample" and e["phase"] == "measure")
        if len(measured) >= 2 and not dropped.is_set():
            dropped.set()
            ctl.drop_link()

    req = RunRequest(host="bench-box", target=pg_db, workload="point-query",
                     params={"duration": 8, "table-size": 5000}, session_path=out,
                     accept_host_key=sshd.host_key_fingerprint)
    ctl = RunController(req, ssh_host, on_events=on_events, on_status=statuses.append)
    outcome = ctl.run()
    assert dropped.is_set()
    assert outcome.status == "ok", outcome.reason
    assert any("connection lost" in s for s in statuses)
    assert any("resuming from event" in s for s in statuses)
    with SessionFile(out) as s:
        seqs = [e["seq"] for e in s.events(outcome.run_id)]
        evs = s.events(outcome.run_id)
    assert seqs == list(range(1, len(seqs) + 1))          # every event exactly once
    samples = [e for e in evs if e["kind"] == "sample" and e["phase"] == "measure"]
    summary = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")
    assert sum(e["ops"]["point-query"] for e in samples) == summary["ops_total"]
    assert summary["duration_s"] >= 7.5                    # the run went on during the gap


def test_stop_ends_the_run_cleanly(sshd, ssh_host, pg_db, tmp_path):
    out = tmp_path / "stop.versus"
    started = threading.Event()

    def on_events(run_id, evs):
        if any(e["kind"] == "sample" for e in evs) and not started.is_set():
            started.set()
            ctl.stop()

    req = RunRequest(host="bench-box", target=pg_db, workload="point-query",
                     params={"duration": 600, "table-size": 1000}, session_path=out,
                     accept_host_key=sshd.host_key_fingerprint)
    ctl = RunController(req, ssh_host, on_events=on_events)
    import time
    t0 = time.monotonic()
    outcome = ctl.run()
    assert outcome.status == "stopped"
    assert time.monotonic() - t0 < 30
    with SessionFile(out) as s:
        kinds = [e["kind"] for e in s.events(outcome.run_id)]
    assert "summary" in kinds and kinds[-1] == "end"
    # no agent, virtual user or follower is left behind on the host
    import subprocess
    deadline = time.monotonic() + 5
    while True:
        ps = subprocess.run(["pgrep", "-af", f"runs/{outcome.run_id}"], capture_output=True,
                            text=True)
        if ps.returncode == 1 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert ps.returncode == 1, ps.stdout


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_micro_over_ssh_builds_its_compiled_loop_on_the_host(request, db, sshd, ssh_host,
                                                              tmp_path):
    """The agent as uploaded (its own folder on the host, not this checkout) carries
    fastloop.c and builds it there: the clients run the compiled loop."""
    url = request.getfixturevalue(db)
    out = tmp_path / "micro.versus"
    r = versus("run", "--host", "bench-box", "--target", url, "--workload", "micro",
               "--set", "tests=point-query,update-nonindex", "--set", "table-size=2000",
               "--set", "read-seconds=1", "--set", "write-seconds=1", "--set", "warmup=0",
               "--set", "client-loop=compiled", "--out", str(out),
               "--accept-host-key", sshd.host_key_fingerprint)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    with SessionFile(out) as s:
        evs = s.events(s.runs()[-1].id)
    summaries = [e for e in evs if e["kind"] == "summary" and "sql_client" in e]
    assert [e["phase"] for e in summaries] == ["point-query.pre", "update-nonindex",
                                              "point-query"]
    for e in summaries:
        assert e["sql_client"]["loop"] == "compiled event loop (fastloop.c)"
        assert e["server_check"]["statements"] == pytest.approx(e["counters"]["statements"],
                                                                rel=0.02)
