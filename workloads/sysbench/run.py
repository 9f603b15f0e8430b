"""sysbench on the host: `prepare` as the load (tables reused when they match), an optional
warm-up run, then the measured run with `--report-interval` lines as samples and the final
report as the phase summary. The password goes in a 0600 `--config-file`."""
from __future__ import annotations

import re
import subprocess

from ..sbtest.load import table_matches
from ..engine.api import SqlSession
from ..engine.api import missing, SecretFile, ToolProcess, require
from .parse import Parser, sample_body, summary_body

INSTALL = "Debian: apt-get install sysbench"


def connection_args(target) -> list[str]:
    if target.dialect == "postgres":
        return ["--db-driver=pgsql", f"--pgsql-host={target.address}",
                f"--pgsql-port={target.port}", f"--pgsql-user={target.user or 'postgres'}",
                f"--pgsql-db={target.database}"]
    return ["--db-driver=mysql", f"--mysql-host={target.address}",
            f"--mysql-port={target.port}", f"--mysql-user={target.user or 'root'}",
            f"--mysql-db={target.database}"]


def password_option(target) -> str:
    prefix = "pgsql" if target.dialect == "postgres" else "mysql"
    return f"{prefix}-password={target.password}\n" if target.password else ""


def probe(values: dict) -> str | None:
    """Why sysbench cannot run this test here (not installed, a test it does not know), asked
    of the host's own sysbench before anything starts; None when it can."""
    why = missing("sysbench", INSTALL)
    if why:
        return why
    test = str(values.get("test", ""))
    try:
        c = subprocess.run([require("sysbench", INSTALL), test, "help"], capture_output=True,
                           text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sysbench could not be asked about test={test}: {exc}"
    said = [ln.strip() for ln in (c.stdout + c.stderr).splitlines() if ln.startswith("FATAL")]
    if c.returncode == 0 or not said:       # a script of the user's may have no help
        return None
    return f"sysbench cannot run test={test}: {'; '.join(said[:3])}"


def run(agent) -> None:
    p, target = agent.params, agent.target
    exe = require("sysbench", INSTALL)
    base = [exe, p["test"], *connection_args(target), f"--tables={p['tables']}",
            f"--table-size={p['table-size']}", f"--rand-type={p['rand-type']}"]
    secret = SecretFile(password_option(target)) if target.password else None
    if secret is not None:
        base.append(f"--config-file={secret.path}")
    try:
        with agent.phase("load"):
            _load(agent, base)
        if p["warmup"] > 0:
            _timed(agent, base, "warmup", p["warmup"])
        _timed(agent, base, "measure", p["time"])
    finally:
        if secret is not None:
            secret.close()


def _builtin(test: str) -> bool:
    return re.fullmatch(r"oltp_\w+|select_random_\w+|bulk_insert", test) is not None


def _load(agent, base: list[str]) -> None:
    p = agent.params
    tables, size = p["tables"], p["table-size"]
    if _builtin(p["test"]) and p["test"] != "bulk_insert" and not p["rebuild"]:
        db = SqlSession(agent.target)
        try:
            if all(table_matches(db, n, size) for n in range(1, tables + 1)):
                agent.log(f"reusing {tables} sbtest table(s) of {size} rows")
                agent.progress("load", tables * size, tables * size)
                return
        finally:
            db.close()
    secrets = [agent.target.password]
    t0 = agent.now()
    for step in ("cleanup", "prepare"):
        done = 0
        proc = ToolProcess(agent, [*base, "--threads=1", step], secrets=secrets)
        for line in proc.lines():
            if line.strip():
                agent.emit("log", level="info", message=line, source="sysbench")
            if step == "prepare" and line.startswith("Inserting "):
                agent.progress("load", done, tables * size)
                done += size
        proc.check()
    agent.progress("load", tables * size, tables * size)
    agent.load_summary("load", tables * size, agent.now() - t0, tables=tables,
                       source="sysbench prepare (rows asked for, wall clock)")


def _timed(agent, base: list[str], phase: str, seconds: int) -> None:
    p = agent.params
    argv = [*base, f"--threads={p['threads']}", f"--time={seconds}",
            f"--report-interval={p['report-interval']}", "--events=0", "run"]
    parser = Parser("sysbench")
    with agent.phase(phase, planned_s=seconds):
        mark = agent.server_mark()
        proc = ToolProcess(agent, argv, secrets=[agent.target.password])
        t0 = proc.t_start
        prev = 0.0
        errors = 0
        report: list[str] = []
        for line in proc.lines():
            rec = parser.feed(line)
            if report or line.strip() == "SQL statistics:":
                report.append(line)
            if line.strip() == "Threads started!":
                t0 = agent.now()
            if rec is not None:
                agent.emit("sample", **sample_body(rec, t0 + prev, t0 + rec["t"], phase))
                prev = rec["t"]
            while errors < len(parser.errors):          # the tool's words, verbatim
                agent.emit("error", message=parser.errors[errors], fatal=False,
                              source="sysbench")
                errors += 1
        proc.check()
        if report:          # the tool's own report, verbatim, in the run log
            agent.emit("log", level="info", message="\n".join(report).rstrip(),
                          source="sysbench")
        rep = parser.report()
        summ = summary_body(rep, t0, phase)
        summ["driver_cpu"] = proc.cpu(summ["ops_total"])
        srv = agent.server_since(mark, summ["duration_s"])
        if srv is not None:
            summ["server"] = srv
        agent.emit("summary", **summ)
