"""Fault suite, SSH side: links cut while the app reconnects, frozen links, follower
processes killed; every event stored once, the run closed truly, nothing left on the host."""
import json
import sys
import threading

import pytest

from app.model.config import HostConfig
from app.remote.runner import RunController, RunRequest
from app.store.catalog import Catalog
from tests.faults import (CLIProcess, Cut, assert_nothing_left, assert_stored_exactly_once,
                          run_dir, wait_for_seq, wait_until)

pytestmark = [pytest.mark.faults, pytest.mark.ssh]


@pytest.fixture
def ssh_host(fault_sshd, versus_home):
    sshd = fault_sshd
    cat = Catalog()
    cat.save_host(HostConfig(name="bench-box", address=sshd.host, port=sshd.port,
                             user=sshd.user, auth="key", key_file=str(sshd.key_file),
                             python=sys.executable))
    return cat


def _run(sshd, pg_db, out, duration=6, *extra):
    return CLIProcess("run", "--host", "bench-box", "--target", pg_db, "--workload",
                      "point-query", "--duration", str(duration), "--set", "table-size=2000",
                      "--out", str(out), "--accept-host-key", sshd.host_key_fingerprint,
                      "--json", *extra)


def test_cuts_while_reconnecting_do_not_abandon_the_run(fault_sshd, ssh_host, cutter, pg_db,
                                                       tmp_path):
    """Cut the link mid-run, then kill each new connection: as it appears (key exchange),
    during the login, right after it, as SFTP opens, as the follower starts. The run must
    still be followed to its end, every event stored once."""
    out = tmp_path / "cuts.versus"
    cli = _run(fault_sshd, pg_db, out)
    rid = cli.run_id()
    wait_for_seq(rid, 12)
    cutter.cut_all()
    cutter.schedule(Cut("appear"), Cut("login"), Cut("Accepted publickey"),
                    Cut("subsystem 'sftp'"), Cut("Starting session: command"), Cut("login"))
    r = cli.finish()
    assert cutter.killed >= 7 and cutter.pending == 0, cutter.log
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "Exception (client)" not in r.stderr
    assert "refused the login" not in r.stderr
    assert "dropped during the login" in r.stderr         # seen as a drop, not a refusal
    run = json.loads(r.stdout)
    assert run["status"] == "ok" and run["reason"] == ""
    assert_stored_exactly_once(out, rid)
    assert_nothing_left(rid)


def test_frozen_link_is_detected_and_reconnected(fault_sshd, ssh_host, cutter, pg_db,
                                                 tmp_path):
    """SIGSTOP the connection: the socket stays open and no packet moves. The stream's read
    timeout (the agent sends an empty line every few seconds) must notice it and reconnect."""
    out = tmp_path / "frozen.versus"
    statuses: list[str] = []
    frozen = threading.Event()

    def on_events(run_id, evs):
        if not frozen.is_set() and any(e["kind"] == "sample" for e in evs):
            frozen.set()
            assert cutter.cut_all("freeze") == 1

    req = RunRequest(host="bench-box", target=pg_db, workload="point-query",
                     params={"duration": 8, "table-size": 2000}, session_path=out,
                     accept_host_key=fault_sshd.host_key_fingerprint)
    ctl = RunController(req, ssh_host, on_events=on_events, on_status=statuses.append,
                        frozen_after=3)
    outcome = ctl.run()
    assert frozen.is_set()
    assert any("the link looks frozen" in s for s in statuses), statuses
    assert any("while reading the output of the agent (follow)" in s for s in statuses)
    assert any("resuming from event" in s for s in statuses), statuses
    assert outcome.status == "ok", outcome.reason
    assert_stored_exactly_once(out, outcome.run_id)
    # the frozen connection ends as a real one would (TCP timeout): until then the first
    # follower can be blocked writing into its stopped sshd's full pipe
    cutter.close()
    assert_nothing_left(outcome.run_id)


def test_damaged_spool_line_is_counted_once_across_reconnects(fault_sshd, ssh_host, cutter,
                                                              pg_db, tmp_path):
    out = tmp_path / "damaged.versus"
    cli = _run(fault_sshd, pg_db, out, 7)
    rid = cli.run_id()
    wait_for_seq(rid, 8)
    with open(run_dir(rid) / "events.jsonl", "ab") as f:
        f.write(b"Segmentation fault (core dumped)\n")
    cli.wait_for("skipped a line")
    for n in (1, 2):                       # resume twice after the damaged line
        cutter.cut_all()
        wait_until(lambda: sum("resuming from event" in x for x in cli.err) >= n, 30,
                   what="a reconnect")
    r = cli.finish()
    assert r.returncode == 3, r.stderr[-2000:]
    assert r.stderr.count("skipped a line that is not an event") == 1
    run = json.loads(r.stdout)
    assert run["status"] == "ok" and run["reason"].startswith("1 line(s) of the event stream")
    assert_stored_exactly_once(out, rid)
    assert_nothing_left(rid)


def test_app_killed_then_attach_over_ssh_through_a_cut(fault_sshd, ssh_host, cutter, pg_db,
                                                       tmp_path):
    """The app dies mid-run; `versus attach` reaches the run's host from what the session
    recorded and brings in the rest exactly once, though its own link is cut once."""
    out = tmp_path / "attach.versus"
    cli = _run(fault_sshd, pg_db, out, 6)
    rid = cli.run_id()
    wait_for_seq(rid, 8)
    cli.proc.kill()
    cli.finish()
    att = CLIProcess("attach", str(out), "--host", "bench-box")
    att.wait_for("bringing in run")
    cutter.cut_all()
    r = att.finish()
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"run {rid}: ok" in r.stdout
    evs = assert_stored_exactly_once(out, rid)
    assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "ok"
    assert_nothing_left(rid)


def test_cut_while_the_agent_starts_starts_it_once(fault_sshd, ssh_host, cutter, pg_db,
                                                   tmp_path):
    """The link drops as the agent's start command runs (the third command of the run's
    first connection). The controller reconnects and starts again; the agent starts once."""
    out = tmp_path / "start.versus"
    cutter.schedule(Cut("Starting session: command", nth=3))
    cli = _run(fault_sshd, pg_db, out, 3)
    r = cli.finish()
    assert cutter.killed == 1, cutter.log
    assert r.returncode == 0, r.stderr[-2000:]
    assert "connection lost" in r.stderr
    run = json.loads(r.stdout)
    rid = run["id"]
    evs = assert_stored_exactly_once(out, rid)
    assert [e["kind"] for e in evs].count("hello") == 1         # one agent
    assert run["status"] == "ok"
    assert_nothing_left(rid)


def test_host_key_changed_mid_run_says_the_run_goes_on_and_how_to_attach(
        fault_sshd, ssh_host, cutter, pg_db, tmp_path):
    """The host's key no longer matches on a reconnect: the run goes on on the host (the CLI
    must not call it failed), and once the key is verified `versus attach` completes it."""
    import base64
    from cryptography.hazmat.primitives.asymmetric import ed25519, ec, rsa
    from cryptography.hazmat.primitives import serialization
    from app.store import paths
    out = tmp_path / "key.versus"
    cli = _run(fault_sshd, pg_db, out, 6)
    rid = cli.run_id()
    wait_for_seq(rid, 8)
    known = paths.known_hosts_file()
    good = known.read_text()
    name, kind, _ = good.split()[:3]
    other = {"ssh-ed25519": lambda: ed25519.Ed25519PrivateKey.generate(),
             "ssh-rsa": lambda: rsa.generate_private_key(65537, 2048),
             }.get(kind, lambda: ec.generate_private_key(ec.SECP256R1()))().public_key()
    blob = other.public_bytes(serialization.Encoding.OpenSSH,
                              serialization.PublicFormat.OpenSSH).split()[1]
    known.write_text(f"{name} {kind} {blob.decode()}\n")       # as if the host had changed
    assert base64.b64decode(blob) and cutter.cut_all() >= 1
    r = cli.finish()
    assert r.returncode == 130, r.stderr[-2000:]
    assert "the run failed" not in r.stderr and "has changed" in r.stderr
    assert "The run goes on on the host" in r.stderr
    assert f"once the host's key is verified, 'versus attach {out}' brings in the rest" in r.stderr
    known.write_text(good)                                     # the key verified again
    r = CLIProcess("attach", str(out)).finish()
    assert r.returncode == 0 and f"run {rid}: ok" in r.stdout, r.stdout + r.stderr
    evs = assert_stored_exactly_once(out, rid)
    assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "ok"
    assert_nothing_left(rid)
