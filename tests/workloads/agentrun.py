"""Run the agent as a real process on a spec and read back its events (for workload tests)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from workloads.engine.measure.procgroups import cmdline, read_stat
from workloads.engine.measure.sampler import read_cpu

REPO = Path(__file__).resolve().parents[2]
PG15 = "/usr/lib/postgresql/15/bin"


def run_agent(tmp_path: Path, workload: str, params: dict, target: dict,
              prefix: list[str] | None = None, extra: dict | None = None,
              timeout: float = 600, env: dict | None = None) -> list[dict]:
    """`python -m workloads.agent run` in a fresh run directory; the events it spooled."""
    rundir = tmp_path / f"run-{uuid.uuid4().hex[:6]}"
    rundir.mkdir()
    spec = {"run_id": uuid.uuid4().hex[:12], "workload": workload, "params": params,
            "target": target, **(extra or {})}
    (rundir / "spec.json").write_text(json.dumps(spec))
    subprocess.run([*(prefix or []), sys.executable, "-m", "workloads.agent", "run", "--dir",
                    str(rundir)], cwd=str(REPO), stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=timeout, env={**os.environ, **(env or {})})
    return [json.loads(line) for line in (rundir / "events.jsonl").read_text().splitlines()]


def managed_target(basedir: str, engine: str, profile_text: str, workdir: str) -> dict:
    """A target the agent starts as a private server for the run (and removes after)."""
    return {"engine": engine, "address": "127.0.0.1", "port": 0, "user": "", "database": "",
            "managed": {"basedir": basedir, "profile_text": profile_text, "workdir": workdir}}


def local_target(url_db: str, engine: str) -> dict:
    if engine == "postgres":
        return {"engine": "postgres", "address": "127.0.0.1", "port": 5432, "user": "postgres",
                "database": url_db}
    return {"engine": "mariadb", "address": "127.0.0.1", "port": 3306, "user": "root",
            "database": url_db}


def _proc_ticks() -> dict[int, int]:
    """utime + stime of every process, in ticks."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = read_stat(f"/proc/{d}/stat")
            if st is not None:
                out[int(d)] = st[1] + st[2]
    return out


def wait_for_quiet_host(busy_below: float = 0.15, limit_s: float = 60) -> str:
    """For tests that judge the host's CPU: wait (up to limit_s) until the host's busy share
    over one second is below busy_below. Returns what kept it busy at the last look, in
    words ("" when quiet), for a failure message."""
    def busy() -> tuple[int, int]:
        f = read_cpu()                      # idle and iowait are not busy
        return sum(f) - f[3] - f[4], sum(f)

    end = time.monotonic() + limit_s
    while True:
        b0, t0 = busy()
        p0 = _proc_ticks()
        time.sleep(1.0)
        b1, t1 = busy()
        share = (b1 - b0) / max(1, t1 - t0)
        if share < busy_below:
            return ""
        if time.monotonic() > end:
            p1 = _proc_ticks()
            top = sorted(((v - p0[k], k) for k, v in p1.items() if k in p0), reverse=True)[:4]
            return (f"host {share:.0%} busy before the run; busiest: "
                    + ", ".join(f"{cmdline(pid)[:60]} ({pid}) {t} ticks" for t, pid in top))
