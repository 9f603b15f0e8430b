"""Session files for the comparison tests: recorded for real by the CLI, or built by hand
from events with exactly known values."""
from __future__ import annotations

import secrets
from pathlib import Path

from app.store.session import SessionFile
from tests.dbs import PG, versus
from workloads import events as ev_format


STREAMS = Path(__file__).resolve().parent / "fixtures" / "streams"


def load(name: str) -> list[dict]:
    """A recorded real agent stream (tests/fixtures/record_streams.py), decoded."""
    return [ev_format.decode(line) for line in (STREAMS / f"{name}.jsonl").read_bytes()
            .splitlines() if line.strip()]


def session_of(name: str, out_dir: Path, chunk: int = 7) -> Path:
    """A recorded stream written to a session file in chunks, as a live run writes it."""
    evs = load(name)
    hello = evs[0]
    path = out_dir / f"{name}.versus"
    with SessionFile(path, readonly=False) as s:
        s.add_run(hello["run_id"], hello["workload"], "recorded", "local", hello["params"])
        for i in range(0, len(evs), chunk):
            s.append_events(hello["run_id"], evs[i:i + chunk])
        end = evs[-1]
        s.finish_run(hello["run_id"], end.get("status", "?"), end.get("reason", ""))
    return path


def record_pg_sessions(out_dir: Path, home: Path, n: int = 2, duration: int = 2) -> list[Path]:
    """n point-query runs against the machine's PostgreSQL, one session file each, in a
    database of their own (dropped afterwards)."""
    import psycopg
    name = f"versus_t_{secrets.token_hex(4)}"
    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    env = {"VERSUS_HOME": str(home), "PYTHON_KEYRING_BACKEND":
           "tests.keyring_backend.SuiteKeyring", "XDG_DATA_HOME": str(home / "xdg")}
    paths = []
    try:
        for i in range(n):
            p = out_dir / f"rec{i + 1}.versus"
            r = versus("run", "--target", f"postgresql://postgres@127.0.0.1:5432/{name}",
                       "--workload", "point-query", "--duration", str(duration),
                       "--set", "table-size=2000", "--set", f"clients={i + 1}",
                       "--out", str(p), env=env)
            assert r.returncode == 0, r.stdout + r.stderr
            paths.append(p)
    finally:
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return paths


def build_run(path: Path, run_id: str, *, rate: float, p95: float, idle: float, cores: int = 4,
              seconds: int = 10, cs: float = 2000.0, read_kb: float = 100.0,
              write_kb: float = 200.0, phases: tuple[str, ...] = ("measure",),
              version: str = "PostgreSQL 16.4", summary: bool = True,
              unit: str = "QPS", workload: str = "point-query",
              rates: dict[str, float] | None = None) -> Path:
    """A run whose every phase lasts ``seconds`` with constant rates, so its phase values are
    known exactly: throughput = rate (or ``rates[phase]``), ops = rate × seconds, CPU busy =
    100 − idle."""
    seq = 0
    evs: list[dict] = []

    def emit(kind, t, **body):
        nonlocal seq
        seq += 1
        evs.append({"v": 1, "seq": seq, "t": t, "kind": kind, **ev_format.body(kind, **body)})

    emit("hello", 0.0, run_id=run_id, workload=workload, params={"clients": 2},
         target={"engine": "postgres"}, host={"hostname": "h1", "cores": cores},
         throughput_unit=unit)
    emit("setting", 0.0, server_version=version)
    t = 0.0
    base_rate = rate
    for ph in phases:
        rate = (rates or {}).get(ph, base_rate)
        emit("phase", t, name=ph, state="start")
        t0 = t
        for i in range(seconds):
            a, b = t, t + 1.0
            emit("host", b, interval=[a, b], cpu={"user": (100 - idle) * 0.75,
                                                  "system": (100 - idle) * 0.25, "idle": idle,
                                                  "iowait": 0.0, "steal": 0.0},
                 cs_per_s=cs, disk={"reads_per_s": 10.0, "writes_per_s": 20.0,
                                    "read_kb_per_s": read_kb, "write_kb_per_s": write_kb},
                 net={"rx_kb_per_s": 1.0, "tx_kb_per_s": 2.0})
            emit("sample", b, phase=ph, interval=[a, b], rate=rate, unit=unit,
                 ops={"q": int(rate)}, errors={},
                 lat_ms={"all": {"p50": p95 / 2, "p95": p95, "p99": p95 * 2, "max": p95 * 3}})
            t = b
        if summary:
            emit("summary", t, phase=ph, interval=[t0, t], duration_s=t - t0,
                 ops_total=int(rate) * seconds, rate=rate, unit=unit, errors_total=0,
                 lat_ms={"all": {"p50": p95 / 2, "p95": p95, "p99": p95 * 2}})
        emit("phase", t, name=ph, state="end")
    emit("end", t, status="ok")
    with SessionFile(path, readonly=False) as s:
        s.add_run(run_id, workload, "postgresql://x", "local", {"clients": 2})
        s.append_events(run_id, evs)
        s.finish_run(run_id, "ok")
    return path


def record_native_and_imported(d: Path):
    """A 3 s sysbench run driven by Versus on the machine's PostgreSQL (its own database,
    dropped afterwards) and a peer sysbench log imported: (native, imported, log)."""
    import shutil

    import psycopg
    import pytest

    from tests.dbs import PG, unique
    from tests.workloads.test_tool_logs import PEER
    if not shutil.which("sysbench"):
        pytest.skip("sysbench is not installed (Debian: apt-get install sysbench)")
    home = d / "home"
    home.mkdir()
    env = {"VERSUS_HOME": str(home), "PYTHON_KEYRING_BACKEND":
           "tests.keyring_backend.SuiteKeyring", "XDG_DATA_HOME": str(d / "xdg")}
    name = unique()
    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        native = d / "native.versus"
        r = versus("run", "--target", f"postgresql://postgres@127.0.0.1:5432/{name}",
                   "--workload", "sysbench", "--duration", "3", "--set", "table-size=5000",
                   "--out", str(native), env=env)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    log = PEER / "sysbench-pg15-oltp_point_select-t2-60s-r1.log"
    imported = d / "imported.versus"
    r = versus("import", str(log), "--out", str(imported), env=env)
    assert r.returncode == 0, r.stderr
    return native, imported, log
