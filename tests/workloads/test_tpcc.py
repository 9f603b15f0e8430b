"""TPROC-C end to end on the machine's PostgreSQL and MariaDB: the CLI and the agent as real
processes, the real servers."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from app.store.session import SessionFile
from tests.dbs import MY, PG, unique, versus

ROOT = Path(__file__).resolve().parents[2]


def _events(path) -> list[dict]:
    with SessionFile(path) as s:
        runs = s.runs()
        return s.events(runs[-1].id)


def _summary(evs, phase) -> dict:
    return next(e for e in evs if e["kind"] == "summary" and e["phase"] == phase)


def _check(url) -> tuple[int, dict]:
    r = versus("check", "tpcc", url, "--json")
    assert r.stdout.strip(), r.stderr
    return r.returncode, json.loads(r.stdout)


def _run(url, out, *sets, duration="20"):
    args = ["run", "--target", url, "--workload", "tpcc", "--duration", duration,
            "--out", str(out)]
    for s in ("warehouses=1", "load-clients=2", "rampup=0", "vus=2") + sets:
        args += ["--set", s]
    return versus(*args, timeout=300)


def _assert_measure_matches(evs, sp: bool):
    m = _summary(evs, "measure")
    res = m["result"]
    client = res["client"]
    assert res["stored_procedures"] is sp
    assert not m["errors"], m["errors"]
    assert client["new_orders"] > 100
    # NOPM as HammerDB defines it (sum of d_next_o_id) equals the client's count exactly
    assert res["new_orders"] == client["new_orders"] == m["counters"]["new_orders"]
    # TPM from the server's counters against the client's commits + rollbacks: on
    # MySQL/MariaDB within 5 % from the virtual users' own sessions, since Com_commit is
    # server-wide and other clients share the server (the server-wide count must hold at
    # least ours); on PostgreSQL the database's own count, exactly (its edges are read when
    # every backend has reported; the machine's server runs without autovacuum)
    txns = client["commits"] + client["rollbacks"]
    if res["tpm_source"].startswith("SHOW"):
        own = res["session_transactions"]
        assert abs(own - txns) <= 0.05 * txns, (res, m["server"])
        assert res["server_transactions"] >= 0.95 * txns, (res, m["server"])
    else:
        assert res["server_transactions"] == txns, (res, m["server"])
    # every type ran, with latency percentiles from the histograms
    for t in ("new-order", "payment", "order-status", "delivery", "stock-level"):
        assert m["ops"][t] > 0, t
        lat = m["lat_ms"][t]
        assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    # the mix: about 45 % new orders, 43 % payments
    total = sum(m["ops"].values())
    assert 0.40 < m["ops"]["new-order"] / total < 0.50
    assert 0.38 < m["ops"]["payment"] / total < 0.48
    assert m["unit"] == "NOPM" and m["rate"] > 0
    # per-second samples carry the counters and the rate in NOPM
    samples = [e for e in evs if e["kind"] == "sample" and e["phase"] == "measure"]
    assert len(samples) >= 15
    assert sum(s["counters"]["new_orders"] for s in samples) == client["new_orders"]
    assert all(s["unit"] == "NOPM" for s in samples)


def _interrupt_run(url, out, sets, duration, when: str, act, wait: float = 2.0):
    """Start `versus run`, wait for the line `when`, let it run `wait` s more, act on it; the
    finished process with its remaining stdout and stderr."""
    args = [sys.executable, "-m", "app.main", "run", "--target", url, "--workload", "tpcc",
            "--duration", duration, "--out", str(out)]
    for x in sets:
        args += ["--set", x]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(ROOT))
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:
            if when in line:
                break
            assert time.monotonic() < deadline, f"no {when!r} line"
        time.sleep(wait)
        act(proc)
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc, rest, err


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_load_run_both_modes_and_check(request, db, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "tpcc.versus"
    # stored procedures on, on a fresh database: the load phase comes first
    r = _run(url, out, "stored-procedures=true")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "NOPM" in r.stdout
    evs = _events(out)
    load = _summary(evs, "load")
    assert load["load_clients"] == 2 and load["unit"] == "rows/s" and load["rate"] > 0
    assert load["rows"]["item"] == 100_000 and load["rows"]["stock"] == 100_000
    assert load["rows"]["customer"] == 30_000 and load["rows"]["new_order"] == 9_000
    progress = [e for e in evs if e["kind"] == "progress" and e["phase"] == "load"]
    assert progress and progress[-1]["done"] == progress[-1]["total"] == 1
    assert progress[-1]["unit"] == "warehouses"
    _assert_measure_matches(evs, True)
    rc, res = _check(url)
    assert rc == 0 and res["ok"], res
    assert [c["id"] for c in res["conditions"]][:4] == [1, 2, 3, 4]
    # the same schema, client-side statements
    r = _run(url, out, "stored-procedures=false", "check-after=true")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "reusing the TPROC-C schema of 1 warehouse(s)" in r.stdout
    evs = _events(out)
    assert not any(e["kind"] == "phase" and e["name"] == "load" for e in evs)
    _assert_measure_matches(evs, False)
    assert _summary(evs, "check")["check"]["ok"]
    rc, res = _check(url)
    assert rc == 0 and res["ok"], res
    text = versus("check", "tpcc", url)
    assert text.returncode == 0 and "condition 4: PASS" in text.stdout


def _pg_user_without_create(url: str) -> str:
    import psycopg
    db = urlsplit(url).path.lstrip("/")
    user = unique("vs_noproc")
    with psycopg.connect(**PG, dbname=db, autocommit=True) as c:
        c.execute(f'CREATE ROLE "{user}" LOGIN')
        c.execute('REVOKE CREATE ON SCHEMA public FROM PUBLIC')
        c.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public '
                  f'TO "{user}"')
    return user


def _pg_drop_user(url: str, user: str) -> None:
    import psycopg
    db = urlsplit(url).path.lstrip("/")
    with psycopg.connect(**PG, dbname=db, autocommit=True) as c:
        c.execute(f'DROP OWNED BY "{user}"')
        c.execute(f'DROP ROLE "{user}"')


def _my_user_without_create(url: str) -> str:
    import pymysql
    db = urlsplit(url).path.lstrip("/")
    user = unique("vs_np")[:30]
    c = pymysql.connect(**MY, autocommit=True)
    for host in ("%", "localhost", "127.0.0.1"):
        c.cursor().execute(f"CREATE USER '{user}'@'{host}'")
        c.cursor().execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON `{db}`.* "
                           f"TO '{user}'@'{host}'")
    c.close()
    return user


def _my_drop_user(url: str, user: str) -> None:
    import pymysql
    c = pymysql.connect(**MY, autocommit=True)
    for host in ("%", "localhost", "127.0.0.1"):
        c.cursor().execute(f"DROP USER IF EXISTS '{user}'@'{host}'")
    c.close()


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_clear_messages_for_bad_runs(request, db, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "tpcc.versus"
    r = _run(url, out, "stored-procedures=false", duration="1")
    assert r.returncode == 0, r.stdout + r.stderr
    # another warehouse count: refused, with what to do
    r = _run(url, out, "warehouses=2", duration="1")
    assert r.returncode == 1
    assert "holds a TPROC-C schema of 1 warehouse(s), not 2" in r.stderr + r.stdout
    assert "rebuild=true" in r.stderr + r.stdout
    assert "Traceback" not in r.stderr
    # warehouses=0: refused before anything starts
    r = _run(url, out, "warehouses=0", duration="1")
    assert r.returncode == 2 and "warehouses must be at least 1" in r.stderr
    # a user who may not create procedures
    pg = db == "pg_db"
    user = _pg_user_without_create(url) if pg else _my_user_without_create(url)
    try:
        u = urlsplit(url)
        limited = f"{u.scheme}://{user}@{u.hostname}:{u.port}{u.path}"
        r = _run(limited, out, "stored-procedures=true", duration="1")
        assert r.returncode == 1, r.stdout + r.stderr
        msg = r.stdout + r.stderr
        assert "cannot create the TPROC-C" in msg and "stored-procedures=false" in msg, msg
        assert "Traceback" not in r.stderr
        # the same user runs the client-side statements
        r = _run(limited, out, "stored-procedures=false", duration="2")
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        _pg_drop_user(url, user) if pg else _my_drop_user(url, user)


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_stop_during_load_is_reported_and_rebuilt(request, db, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "tpcc.versus"
    proc, rest, err = _interrupt_run(
        url, out, ("warehouses=4", "load-clients=1", "rampup=0"), "5", "phase load started",
        lambda p: p.send_signal(signal.SIGINT))
    assert proc.returncode == 130, rest + err
    rc, res = _check(url)
    assert rc == 1 and not res["ok"]
    assert "interrupted load" in res["schema"]["problem"]
    assert res["schema"]["load_state"] == "loading"
    text = versus("check", "tpcc", url)
    assert text.returncode == 1 and "schema: FAIL" in text.stdout
    # the next run rebuilds, and the result is consistent
    r = _run(url, out, "stored-procedures=false", duration="2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rebuilding: found an interrupted load of 4 warehouse(s)" in r.stdout
    rc, res = _check(url)
    assert rc == 0 and res["ok"], res


def _kill_sessions(url: str) -> int:
    """End every other connection to the run's database, as a server restart would."""
    name = urlsplit(url).path.lstrip("/")
    if url.startswith("postgresql"):
        import psycopg
        with psycopg.connect(**PG, dbname=name, autocommit=True) as c:
            rows = c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE datname = %s AND pid <> pg_backend_pid()", (name,)).fetchall()
        return len(rows)
    import pymysql
    c = pymysql.connect(**MY, autocommit=True)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT id FROM information_schema.processlist WHERE db = %s "
                        "AND id <> CONNECTION_ID()", (name,))
            ids = [r[0] for r in cur.fetchall()]
            for i in ids:
                try:
                    cur.execute(f"KILL CONNECTION {int(i)}")
                except pymysql.Error:
                    pass                      # it ended on its own meanwhile
        return len(ids)
    finally:
        c.close()


@pytest.mark.parametrize("db,sp", [("pg_db", "true"), ("pg_db", "false"),
                                   ("mariadb_db", "true")])
def test_connections_killed_mid_run_are_reported_and_recorded_data_kept(
        request, db, sp, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "tpcc.versus"

    def kill(_proc):
        assert _kill_sessions(url) >= 2

    proc, rest, err = _interrupt_run(
        url, out, ("warehouses=1", "load-clients=2", "rampup=0", "vus=2",
                   f"stored-procedures={sp}"), "30", "phase measure started", kill,
        wait=3.0)
    # every virtual user lost its connection: the run fails with that sentence, well before
    # its 30 s, and nothing recorded before is lost
    assert proc.returncode == 1, rest + err
    assert "lost the database connection" in rest + err, rest + err
    assert "Traceback" not in rest + err and "OperationalError" not in rest + err
    # counters cut off with the connections are said to be unavailable, not shown as 0
    assert "· 0 TPM" not in rest
    evs = _events(out)
    samples = [e for e in evs if e["kind"] == "sample" and e["phase"] == "measure"]
    assert len(samples) >= 2 and sum(s["counters"]["new_orders"] for s in samples) > 0
    m = _summary(evs, "measure")
    assert m["duration_s"] < 20 and m["counters"]["new_orders"] > 0
    end = next(e for e in evs if e["kind"] == "end")
    assert end["status"] == "failed"
