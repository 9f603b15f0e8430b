"""End to end on this computer: the CLI as a process, the agent as a real process, the
machine's PostgreSQL and MariaDB."""
import json

import pytest

from tests.dbs import versus


def _show(path):
    r = versus("show", str(path), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_point_query_run_matches_server_counter(request, db, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    out = tmp_path / "run.versus"
    r = versus("run", "--target", url, "--workload", "point-query", "--duration", "5",
               "--set", "table-size=20000", "--set", "clients=2", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "QPS" in r.stdout                      # one progress line per second
    (run,) = _show(out)["runs"]
    assert run["status"] == "ok"
    assert run["events"] == run["last_seq"]       # lossless
    measure = next(p for p in run["phases"] if p["name"] == "measure")
    assert measure["samples"] >= 4 and measure["host_samples"] >= 4
    assert measure["throughput_unit"] == "QPS" and measure["throughput_mean"] > 100
    client = measure["ops_total"]
    server = measure["server"]["delta"]
    assert abs(server - client) <= 0.02 * client, (client, measure["server"])
    lat = measure["latency_ms"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"]
    cpu = measure["cpu"]
    assert all(0 <= v <= 100 for v in cpu.values()) and cpu["user"] + cpu["system"] > 0
    # a second run reuses the matching table instead of reloading it
    r2 = versus("run", "--target", url, "--workload", "point-query", "--duration", "1",
                "--set", "table-size=20000", "--out", str(out))
    assert r2.returncode == 0, r2.stderr
    assert "reusing 1 table(s)" in r2.stdout
    assert len(_show(out)["runs"]) == 2


def test_bad_input_is_refused_before_anything_starts(versus_home, tmp_path):
    out = tmp_path / "x.versus"
    r = versus("run", "--workload", "no-such-workload", "--out", str(out))
    assert r.returncode == 2 and "unknown workload 'no-such-workload'" in r.stderr
    r = versus("run", "--workload", "point-query", "--set", "clients=lots", "--out", str(out))
    assert r.returncode == 2 and "clients takes a int value" in r.stderr
    r = versus("run", "--workload", "point-query", "--set", "clients", "--out", str(out))
    assert r.returncode == 2 and "KEY=VALUE" in r.stderr
    r = versus("run", "--workload", "point-query",
               "--target", "postgresql://u:secret@127.0.0.1/db", "--out", str(out))
    assert r.returncode == 2 and "do not put the password" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_corrupt_session_file_is_not_touched(versus_home, tmp_path, pg_db):
    out = tmp_path / "corrupt.versus"
    junk = b"garbage" * 1000
    out.write_bytes(junk)
    r = versus("run", "--target", pg_db, "--workload", "point-query", "--duration", "1",
               "--set", "table-size=100", "--out", str(out))
    assert r.returncode == 2 and "not a Versus session file" in r.stderr
    assert out.read_bytes() == junk
    r = versus("show", str(out))
    assert r.returncode == 2 and "damaged" in r.stderr and "Traceback" not in r.stderr


def test_unreachable_database_fails_with_a_sentence(versus_home, tmp_path):
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    out = tmp_path / "u.versus"
    r = versus("run", "--target", f"postgresql://postgres@127.0.0.1:{port}/x",
               "--workload", "point-query", "--duration", "1", "--out", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "cannot connect to postgres" in r.stderr and "is the server running" in r.stderr
    (run,) = _show(out)["runs"]
    assert run["status"] == "failed" and run["events"] == run["last_seq"] > 0


def test_wrong_database_password(versus_home, tmp_path, mariadb_db):
    import pymysql
    from tests.dbs import MY, unique
    user = unique("vu")
    c = pymysql.connect(**MY, autocommit=True)
    c.cursor().execute(f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'right-pw'")
    try:
        out = tmp_path / "pw.versus"
        url = mariadb_db.replace("root@", f"{user}@")
        r = versus("run", "--target", url, "--workload", "point-query", "--duration", "1",
                   "--out", str(out), env={"VERSUS_DB_PASSWORD": "wrong-pw"})
        assert r.returncode == 1
        assert "Access denied" in r.stderr and "check the user and the password" in r.stderr
        assert "wrong-pw" not in r.stdout + r.stderr
    finally:
        c.cursor().execute(f"DROP USER '{user}'@'127.0.0.1'")
        c.close()


def test_workloads_lists_parameters():
    r = versus("workloads", "--json")
    (pq,) = [w for w in json.loads(r.stdout) if w["name"] == "point-query"]
    assert {p["name"] for p in pq["params"]} >= {"tables", "table-size", "clients", "duration",
                                                 "warmup"}
