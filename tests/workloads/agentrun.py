"""Run the agent as a real process on a spec and read back its events (for workload tests)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

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
