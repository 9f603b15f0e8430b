"""pgbench on the host (PostgreSQL): `pgbench -i` as the load (reused when the scale
matches), then the timed run with `--progress` lines as samples and its summary's tps as
the result. The password reaches pgbench in a 0600 password file (PGPASSFILE), removed when
it ends: never its command line, nor its environment."""
from __future__ import annotations

import contextlib
from typing import Iterator

from ..engine.api import DatabaseError, SqlSession
from ..engine.api import missing, require, SecretFile, ToolProcess
from .parse import Parser, load_summary, sample_body, summary_body

INSTALL = "Debian: apt-get install postgresql-client (pgbench is in it)"


@contextlib.contextmanager
def _conn(target) -> Iterator[tuple[list[str], dict[str, str]]]:
    """pgbench's connection options, and its environment: PGPASSFILE naming a private file
    with the password (libpq's .pgpass format, ':' and '\\' escaped)."""
    user = target.user or "postgres"
    args = ["-h", target.address, "-p", str(target.port), "-U", user]
    if not target.password:
        yield args, {}
        return
    esc = [str(x).replace("\\", "\\\\").replace(":", "\\:") for x in
           (target.address, target.port, "*", user, target.password)]
    with SecretFile(":".join(esc) + "\n", ".pgpass") as f:
        yield args, {"PGPASSFILE": f.path}


def probe(values: dict) -> str | None:
    return missing("pgbench", INSTALL)


def run(agent) -> None:
    target = agent.target
    if target.dialect != "postgres":
        raise DatabaseError("pgbench runs against PostgreSQL only; pick a PostgreSQL target")
    exe = require("pgbench", INSTALL)
    with _conn(target) as (conn, env):
        _run(agent, exe, conn, env)


def _run(agent, exe: str, conn: list[str], env: dict[str, str]) -> None:
    p, target = agent.params, agent.target
    with agent.phase("load"):
        if _scale(target) == p["scale"] and not p.get("rebuild"):
            agent.log(f"reusing the pgbench tables at scale {p['scale']}")
        else:
            _init(agent, exe, conn, env)
    argv = [exe, *conn, "-c", str(p["clients"]), "-j", str(p["jobs"]), "-T", str(p["time"]),
            "-M", p["protocol"], "-P", str(p["progress"])]
    argv += ["-f", p["script"]] if p["script"] else ["-b", p["builtin"]]
    argv.append(target.database)
    parser = Parser("pgbench")
    with agent.phase("measure", planned_s=p["time"]):
        mark = agent.server_mark()
        proc = ToolProcess(agent, argv, env=env, secrets=[target.password])
        t0, prev, errors = proc.t_start, 0.0, 0
        report: list[str] = []
        for line in proc.lines(stderr=True):
            if report or line.startswith("transaction type:"):
                report.append(line)
                parser.feed(line)
                continue
            if line.startswith("starting vacuum"):
                t0 = agent.now()
            rec = parser.feed(line)
            if rec is not None:
                agent.emit("sample", **sample_body(rec, t0 + prev, t0 + rec["t"],
                                                      p["clients"]))
                prev = rec["t"]
            elif line.startswith("pgbench:") or errors < len(parser.errors):
                agent.emit("log", level="warning", message=line, source="pgbench")
            elif line.strip():      # anything else it says reaches the log verbatim
                agent.emit("log", level="info", message=line, source="pgbench")
            errors = len(parser.errors)
        proc.check()
        if report:          # the tool's own summary, verbatim, in the run log
            agent.emit("log", level="info", message="\n".join(report).rstrip(),
                          source="pgbench")
        rep = parser.report()
        summ = summary_body(rep, t0)
        summ["driver_cpu"] = proc.cpu(summ["ops_total"])
        srv = agent.server_since(mark, summ["duration_s"] or p["time"])
        if srv is not None:
            summ["server"] = srv
        agent.emit("summary", **summ)


def _scale(target) -> int | None:
    db = SqlSession(target)
    try:
        if not db.scalar("SELECT to_regclass('pgbench_branches') IS NOT NULL AND "
                         "to_regclass('pgbench_accounts') IS NOT NULL"):
            return None
        return int(db.scalar("SELECT COUNT(*) FROM pgbench_branches") or 0)
    finally:
        db.close()


def _init(agent, exe: str, conn: list[str], env: dict[str, str]) -> None:
    p, target = agent.params, agent.target
    parser = Parser("pgbench -i")
    proc = ToolProcess(agent, [exe, *conn, "-i", "-s", str(p["scale"]), target.database],
                       env=env, secrets=[target.password])
    t0 = proc.t_start
    for line in proc.lines(stderr=True):
        parser.feed(line)
        if parser.tuples and line.endswith("s)") and " tuples (" in line:
            done, total, _ = parser.tuples[-1]
            agent.progress("load", done, total)
        elif line.strip():
            agent.emit("log", level="info", message=line, source="pgbench")
    proc.check()
    rep = parser.report()
    summ = load_summary(rep, t0)
    summ["driver_cpu"] = proc.cpu(rep.get("rows"))
    agent.emit("summary", **summ)
