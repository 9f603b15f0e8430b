"""Transfers end to end on the machine's PostgreSQL and MariaDB: the CLI and the agent as real
processes, the real servers. Heavy contention (4 clients on 10 accounts), a run stopped in the
middle, and a database whose money was tampered with."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.store.session import SessionFile
from tests.dbs import query, versus

ROOT = Path(__file__).resolve().parents[2]
SETS = ("users=5", "accounts-per-user=2", "clients=4", "initial-balance=1000",
        "max-amount=300")


def _args(url, out, duration):
    args = ["run", "--target", url, "--workload", "transfers", "--duration", str(duration),
            "--out", str(out)]
    for s in SETS:
        args += ["--set", s]
    return args


def _measure(path) -> dict:
    with SessionFile(path) as s:
        evs = s.events(s.runs()[-1].id)
    return next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure"), evs


def _check(url) -> tuple[int, dict]:
    r = versus("check", "transfers", url, "--json")
    assert r.stdout.strip(), r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_contention_stop_and_tampered_money(request, db, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "run.versus"
    r = versus(*_args(url, out, 4), timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    m, evs = _measure(out)
    res = m["result"]
    assert m["errors_total"] == 0 and res["transfers"] > 100
    assert res["rejections"] > 0                       # 300 from 1000 empties accounts
    assert m["check"]["ok"] and res["money_violations"] == 0 and "flags" not in m
    # the server's commits are the client's transfers plus rejections, exactly: on MariaDB
    # from the clients' own sessions; on PostgreSQL (15+) the database's xact_commit minus
    # the monitor's own transactions, read at edges where every backend has reported (the
    # machine's server runs without autovacuum, whose worker would add its own transactions
    # if it visited the database in the period)
    assert res["server_commits"] == res["client_commits"], res
    assert res["client_commits"] == m["counters"]["transfers"] + m["counters"]["rejections"]
    assert m["rate"] == pytest.approx(res["transfers"] / m["duration_s"], rel=0.01)
    # per second: transfers, rejections, retries, and each round trip's latency
    samples = [e for e in evs if e["kind"] == "sample" and e["phase"] == "measure"]
    assert sum(s["counters"]["transfers"] for s in samples) == res["transfers"]
    assert sum(s["counters"]["rejections"] for s in samples) == res["rejections"]
    # a transfer whose lock round trip fell in the second before counts in this one's
    # transfers, so a one-transfer second under load can have no rt2-lock timing of its own
    timed = [s["timings"]["rt2-lock"] for s in samples if s["timings"]["rt2-lock"]["n"]]
    assert sum(t["n"] for t in timed) >= res["transfers"]
    assert timed and all(t["p99"] > 0 for t in timed)
    assert set(m["timings"]) == {"rt1-token", "rt2-lock", "rt3-move", "rt4-commit"}
    rc, chk = _check(url)
    assert rc == 0 and chk["ok"], chk

    # stopped in the middle: money still adds up, in the run's own check and afterwards
    stopped = tmp_path / "stopped.versus"
    proc = subprocess.Popen([sys.executable, "-m", "app.main", *_args(url, stopped, 60)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(ROOT))
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            if "phase measure started" in line:
                break
            assert time.monotonic() < deadline
        time.sleep(2.0)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    m, evs = _measure(stopped)
    assert evs[-1]["status"] == "stopped" and m["check"]["ok"] and m["counters"]["transfers"]
    rc, chk = _check(url)
    assert rc == 0 and chk["ok"], chk

    # money created out of nothing: the check fails, and so does the next run, visibly
    query(url, "UPDATE tf_accounts SET balance = balance + 7 WHERE id = 3")
    rc, chk = _check(url)
    assert rc == 1 and not chk["ok"]
    failed = {c["id"] for c in chk["conditions"] if not c["ok"]}
    assert failed == {1, 4} and chk["sum"][1] - chk["sum"][0] == 7
    bad = tmp_path / "bad.versus"
    r = versus(*_args(url, bad, 1), timeout=180)
    assert r.returncode == 1 and "money is not conserved" in r.stderr, r.stderr
    shown = versus("show", str(bad)).stdout
    assert "FAILED: money not conserved" in shown
    m, evs = _measure(bad)
    assert m["flags"][0]["severity"] == "fail" and evs[-1]["status"] == "failed"


def test_deletes_of_old_transfers_keep_the_books(pg_db, versus_home, tmp_path):
    """deletes=on (one old transfer deleted in every 20, delete-lag behind; Reserva's 1000
    would need more transfers than a short run makes): the transfers left in the table are
    the transfers made minus those deleted, and the money check still holds (audit rows of a
    deleted transfer stay, as in a ledger)."""
    out = tmp_path / "del.versus"
    r = versus("run", "--target", pg_db, "--workload", "transfers", "--duration", "6",
               "--set", "users=50", "--set", "accounts-per-user=2", "--set", "clients=2",
               "--set", "initial-balance=1000", "--set", "max-amount=300",
               "--set", "deletes=on", "--set", "delete-lag=40", "--out", str(out), timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    with SessionFile(out) as s:
        evs = s.events(s.runs()[-1].id)
    made = deleted = 0
    for e in evs:
        if e["kind"] == "summary" and e.get("counters"):
            made += e["counters"]["transfers"]
            deleted += e["counters"]["deletes"]
    # each client deletes one in 20 of its transfers once it has made 40
    assert made > 2 * 200, made
    assert 0 < deleted <= made // 20 + 2, (made, deleted)
    assert query(pg_db, "SELECT count(*) FROM tf_transfers")[0][0] == made - deleted
    rc, chk = _check(pg_db)
    assert rc == 0 and chk["ok"], chk
