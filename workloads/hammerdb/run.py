"""HammerDB's TPROC-C through its CLI kit (`hdb`, see ../shared/peer-tools/hammerdb): `hdb
build` as the load (reused when the schema has the warehouses asked for), then `hdb run`
with HammerDB's transaction counter on; the counter's log (hdbtcount) becomes samples, the
virtual users' rampup and test markers the phases, and the TEST RESULT line the measured
phase's summary. Passwords reach `hdb` through its environment."""
from __future__ import annotations

import os
import re
import time

from .. import events
from ..engine.api import DatabaseError, SqlSession
from ..engine.api import ToolMissing, ToolProcess, require
from . import SPEC
from .parse import VuserParser, measure_summary, parse_tcount, tcount_sample

INSTALL = ("install HammerDB's CLI kit: run its install.sh (as root if Debian's Tcl packages "
           "are missing) and put its `hdb` command on the PATH")
_RUNDIR = re.compile(r"^HDB-(?:RUN|BUILD): rundir (\S+)")


def kit_home() -> str:
    return os.environ.get("HDB_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "versus-peers", "hammerdb")


def find_cli(path: str = "") -> str:
    """The `hdb` command and an installed kit, or ToolMissing before the run starts."""
    exe = require("hdb", INSTALL, path)
    if not os.path.exists(os.path.join(kit_home(), ".installed")):
        raise ToolMissing(f"HammerDB's CLI kit is not installed in {kit_home()}; {INSTALL}")
    return exe


def probe(values: dict) -> str | None:
    try:
        find_cli(values.get("cli", ""))
    except ToolMissing as exc:      # not `missing`: the kit must be installed too
        return str(exc)
    return None


def schema_name(p: dict, target) -> str:
    return p["schema"] or target.database


def _env(target, p: dict) -> tuple[str, dict[str, str]]:
    env = {"HDB_DB": schema_name(p, target), "HDB_TCOUNT": "1"}
    if target.dialect == "postgres":
        env.update(PG_HOST=target.address, PG_PORT=str(target.port),
                   PG_SUPERUSER=target.user or "postgres", PG_SUPERPASS=target.password,
                   PG_USER=target.user or "postgres", PG_PASS=target.password)
        return "pg", env
    env.update(MARIA_HOST=target.address, MARIA_PORT=str(target.port),
               MARIA_USER=target.user or "root", MARIA_PASS=target.password)
    return "maria", env


def _mode(engine: str, sp: bool) -> str:
    return {("pg", True): "procs", ("pg", False): "funcs", ("maria", True): "sp",
            ("maria", False): "nosp"}[(engine, sp)]


def run(agent) -> None:
    p, target = agent.params, agent.target           # checked by the spec's validate
    exe = find_cli(p["cli"])
    engine, env = _env(target, p)
    mode = _mode(engine, p["stored-procedures"])
    schema = schema_name(p, target)
    with agent.phase("load"):
        have, tables = _schema_state(agent, schema)
        if have == p["warehouses"] and not p["rebuild"]:
            agent.log(f"reusing HammerDB's schema in {schema} ({have} warehouses)")
        else:
            if tables:
                if schema == target.database or not p["rebuild"]:
                    raise DatabaseError(
                        f"the database {schema} has {tables} tables but not HammerDB's schema "
                        f"of {p['warehouses']} warehouses; HammerDB builds into an empty "
                        f"database: pick an empty one, or set schema=NAME (and rebuild=true "
                        f"to drop that one first)")
                _hdb(agent, [exe, "drop", engine], env).check()
            _build(agent, [exe, "build", engine, str(p["warehouses"]), mode], env)
    _run(agent, [exe, "run", engine, mode, str(p["rampup"] // 60), str(p["duration"] // 60),
                 str(p["vus"])], env)


def _hdb(agent, argv: list[str], env: dict[str, str]) -> ToolProcess:
    proc = ToolProcess(agent, argv, env=env, name="hdb", secrets=[agent.target.password])
    for line in proc.lines():
        if line.strip():
            agent.emit("log", level="info", message=line, source="hdb")
    return proc


def _schema_state(agent, schema: str) -> tuple[int | None, int]:
    """(warehouses in HammerDB's schema or None, tables in that database)."""
    from ..engine.api import TargetInfo
    t = agent.target
    try:
        db = SqlSession(TargetInfo(t.engine, t.address, t.port, t.user, schema, t.password))
    except DatabaseError:
        return None, 0                      # no such database yet: hdb creates it
    try:
        if db.dialect == "postgres":
            tables = int(db.scalar("SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'")
                         or 0)
        else:
            tables = int(db.scalar("SELECT COUNT(*) FROM information_schema.tables WHERE "
                                   "table_schema = DATABASE()") or 0)
        try:
            return int(db.scalar("SELECT COUNT(*) FROM warehouse") or 0), tables
        except Exception:
            return None, tables
    finally:
        db.close()


def _build(agent, argv: list[str], env: dict[str, str]) -> None:
    total = agent.params["warehouses"] * 10
    parser = VuserParser("hdb build")
    proc = ToolProcess(agent, argv, env=env, name="hdb", secrets=[agent.target.password])
    t0 = proc.t_start
    for line in proc.lines():
        rec = parser.feed(line)
        n = len(parser.districts)
        if line.endswith("Orders Done"):
            agent.progress("load", n, total, unit="districts")
        elif rec is not None and rec["what"] == "error":
            agent.emit("error", message=rec["message"], fatal=False, source="hammerdb")
        elif rec is not None or line.startswith("HDB-") or not line.startswith("Vuser"):
            if line.strip():
                agent.emit("log", level="info", message=line, source="hdb")
    proc.check()
    dur = agent.now() - t0
    agent.emit("summary", **events.summary(
        phase="load", interval=[round(t0, 4), round(t0 + dur, 4)], duration_s=round(dur, 3),
        ops_total=None, rate=None, unit="rows/s", errors_total=len(parser.errors),
        source="hdb build (wall clock)", driver_cpu=proc.cpu(None),
        result={"build_s": round(dur, 3), "build_source": "hdb build, wall clock",
                "warehouses": agent.params["warehouses"]}))


class _Counter:
    """Follows hdbtcount.log in the kit's run folder while the run goes on."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.pos = 0
        self.buf = ""

    def new_readings(self) -> list[dict]:
        """New counter readings: {"tpm", "epoch" (the line's own stamp, or None)}."""
        if not self.path or not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8", errors="replace") as f:
            f.seek(self.pos)
            data = f.read()
            self.pos = f.tell()
        *lines, self.buf = (self.buf + data).split("\n")
        return [r for r in map(parse_tcount, lines) if r is not None]


def _run(agent, argv: list[str], env: dict[str, str]) -> None:
    p = agent.params
    parser = VuserParser("hdb run")
    counter = _Counter()
    state = {"phase": None, "t": 0.0, "last": None}
    mark = {}
    em = agent

    def start(name: str, planned: float) -> None:
        em.emit("phase", name=name, state="start", planned_s=planned,
                role=SPEC.phase_role(name))
        state.update(phase=name, t=em.now(), last=em.now())
        if name == "measure":
            mark["server"] = agent.server_mark()

    def end() -> float:
        name, t = state["phase"], state["t"]
        dur = em.now() - t
        if name is not None:
            em.emit("phase", name=name, state="end", duration_s=round(dur, 3))
        state["phase"] = None
        return dur

    def poll() -> None:
        for r in counter.new_readings():
            now = em.now()
            # on the run's clock at the counter's own stamp (read a moment later)
            at = now if r["epoch"] is None else min(now, now - (time.time() - r["epoch"]))
            last = state["last"] if state["last"] is not None else at - 10.0
            if state["phase"] is not None and at > last and (r["tpm"] or state["last"]):
                em.emit("sample", **tcount_sample(r["tpm"], last, at, state["phase"], p["vus"]))
            state["last"] = at

    proc = ToolProcess(agent, argv, env=env, name="hdb", secrets=[agent.target.password])
    result = None
    measure = [0.0, 0.0]
    try:
        for line in proc.lines(idle=poll):
            m = _RUNDIR.match(line)
            if m:
                counter.path = os.path.join(m.group(1), "tmp", "hdbtcount.log")
            rec = parser.feed(line)
            if rec is None:
                if line.startswith("HDB-") or line.startswith("CLIENT_") or \
                        line.startswith("NOPM="):
                    em.emit("log", level="info", message=line, source="hdb")
                continue
            what = rec["what"]
            if what == "rampup_start" and p["rampup"] > 0:
                start("rampup", p["rampup"])
            elif what == "rampup_end":
                if state["phase"] == "rampup":
                    end()
                start("measure", p["duration"])
            elif what == "measure_end" and state["phase"] == "measure":
                measure[:] = [state["t"], em.now()]
                poll()
            elif what == "result":
                result = rec
                em.emit("log", level="info", message=line, source="hammerdb")
                if state["phase"] == "measure":
                    if measure[1] <= measure[0]:     # no "Test complete" line was seen
                        measure[:] = [state["t"], em.now()]
                    _result_summary(agent, parser, result, measure, mark)
                    end()
            elif what == "error":
                em.emit("error", message=rec["message"], fatal=False, source="hammerdb")
            elif what == "dbversion":
                em.emit("log", level="info", message=line, source="hammerdb")
    finally:
        if state["phase"] is not None:
            end()
    if result is None:
        proc.check()
        raise DatabaseError("HammerDB ended without its TEST RESULT line; see the run log")
    if proc.returncode and not proc.stopped:
        # the kit's wrapper reads the result with its own pattern (no negative TPM)
        agent.log(f"hdb exited with status {proc.returncode} after HammerDB's TEST RESULT line "
                  f"was read; the result above is HammerDB's own", "warning")
    if proc.stopped:
        proc.check()


def _result_summary(agent, parser, result, measure, mark) -> None:
    p = agent.params
    a, b = measure
    summ = measure_summary(result, p, round(a, 4), round(b, 4), round(b - a, 3),
                           len(parser.errors))
    srv = agent.server_since(mark["server"], b - a) if "server" in mark else None
    if srv is not None:
        summ["server"] = srv
    summ["driver_cpu"] = {"source": "the hdb process's CPU is in the host samples "
                                    "(driver_cpu) while it runs"}
    agent.emit("summary", **summ)
