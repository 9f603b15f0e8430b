"""Shared helpers for the benchmarks in bench/ (never imported by the test suite).

Each engine gets a throw-away database with a unique name, created here and dropped at the
end (`Engine.scratch_database`). Server CPU is read from /proc (the servers run on this
machine): mariadbd is one process; PostgreSQL is the postmaster plus its backends, and the
CPU of backends that exited is in the postmaster's cutime/cstime once it reaped them.
"""
from __future__ import annotations

import ctypes
import os
import re
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

SYSBENCH = "/usr/bin/sysbench"
PG = dict(host="127.0.0.1", port=5432, user="postgres")
MY = dict(host="127.0.0.1", port=3306, user="root", password="")
_TICK = os.sysconf("SC_CLK_TCK")


def unique_name(prefix: str = "versus_bench") -> str:
    return f"{prefix}_{os.getpid()}_{int(time.time() * 1000) % 10**10}"


# --- /proc CPU of a process tree ----------------------------------------------------------
def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rindex(")") + 2:].split()   # fields from 'state' on (field 3)


def _cpu_s(fields: list[str], children: bool) -> float:
    # fields[11..14] = utime, stime, cutime, cstime (man 5 proc fields 14..17)
    u, s = int(fields[11]), int(fields[12])
    if children:
        u += int(fields[13]); s += int(fields[14])
    return (u + s) / _TICK


def tree_cpu_seconds(root: int) -> float:
    """CPU of `root` (with its reaped children) plus its live children."""
    f = _stat(root)
    if f is None:
        raise RuntimeError(f"process {root} is gone")
    total = _cpu_s(f, children=True)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != root:
            g = _stat(int(name))
            if g is not None and int(g[1]) == root:
                total += _cpu_s(g, children=False)
    return total


def pid_by_comm(comm: str) -> int | None:
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/comm") as f:
                    if f.read().strip() == comm:
                        return int(name)
            except OSError:
                pass
    return None


# --- memory of a process tree -------------------------------------------------------------
def _tree(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    data = f.read()
                ppid = int(data[data.rindex(")") + 2:].split()[1])
                kids.setdefault(ppid, []).append(int(name))
            except (OSError, ValueError):
                pass
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def memory_kb(root: int) -> tuple[int, int]:
    """(sum of RSS, sum of PSS) in kB over the process tree under root."""
    rss = pss = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss, pss


def proc_stat_cpu() -> list[int]:
    """The host's cumulative CPU ticks (the first line of /proc/stat)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


class FollowedRun:
    """`versus run` as a child process, followed line by line: the agent's pid, the host's
    /proc/stat at the start and the end of the measured phase, and the driver's memory (agent
    and virtual users: RSS and PSS) at the given minutes into it. `on_start()` runs when
    the measured phase starts, `on_line(line)` for every line."""

    def __init__(self, cmd: list[str], env: dict, minutes, cwd: str | None = None,
                 echo: bool = False, on_start=None, on_line=None):
        self.cmd, self.env, self.minutes, self.cwd, self.echo = cmd, env, list(minutes), cwd, echo
        self.on_start, self.on_line = on_start, on_line
        self.agent_pid: int | None = None
        self.lines: list[str] = []
        self.mem: list[tuple[int, int, int]] = []
        self.cpu: list[list[int]] = []

    def run(self) -> "FollowedRun":
        p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, env=self.env, cwd=self.cwd)
        started, done = threading.Event(), threading.Event()

        def sampler():
            started.wait()
            self.cpu.append(proc_stat_cpu())
            if self.on_start:
                self.on_start()
            t0 = time.monotonic()
            for minute in self.minutes:
                while time.monotonic() < t0 + 60 * minute - 1:
                    if done.wait(0.5):
                        return
                if self.agent_pid:
                    rss, pss = memory_kb(self.agent_pid)
                    self.mem.append((minute, rss, pss))

        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        for line in p.stdout:
            self.lines.append(line)
            m = re.search(r"agent pid (\d+)", line)
            if m:
                self.agent_pid = int(m.group(1))
            if "phase measure started" in line:
                started.set()
            if self.on_line:
                self.on_line(line)
            if self.echo:
                print("   " + line.rstrip(), flush=True)
        p.wait()
        self.cpu.append(proc_stat_cpu())
        done.set()
        started.set()
        th.join(5)
        if p.returncode != 0:
            raise RuntimeError(f"versus run failed ({p.returncode}):\n"
                               f"{''.join(self.lines[-30:])}")
        return self


# --- engines ------------------------------------------------------------------------------
@dataclass
class Engine:
    key: str                    # "pg" | "mariadb"

    @property
    def label(self) -> str:
        return {"pg": "PostgreSQL", "mariadb": "MariaDB"}[self.key]

    # admin connection (no database)
    def _admin(self, sql: str) -> None:
        if self.key == "pg":
            import psycopg
            with psycopg.connect(dbname="postgres", autocommit=True, **PG) as c:
                c.execute(sql)
        else:
            from MySQLdb import _mysql
            c = _mysql.connect(**MY)
            try:
                c.query(sql.encode())
            finally:
                c.close()

    @contextmanager
    def scratch_database(self, prefix: str = "versus_bench"):
        db = unique_name(prefix)
        self._admin(f"CREATE DATABASE {db}")
        try:
            yield db
        finally:
            self._admin(f"DROP DATABASE IF EXISTS {db}" +
                        (" WITH (FORCE)" if self.key == "pg" else ""))

    def sysbench_conn_args(self, db: str) -> list[str]:
        if self.key == "pg":
            return ["--db-driver=pgsql", f"--pgsql-host={PG['host']}", f"--pgsql-port={PG['port']}",
                    f"--pgsql-user={PG['user']}", f"--pgsql-db={db}"]
        return ["--db-driver=mysql", f"--mysql-host={MY['host']}", f"--mysql-port={MY['port']}",
                f"--mysql-user={MY['user']}", f"--mysql-password={MY['password']}",
                f"--mysql-db={db}"]

    def versus_target(self, db: str) -> str:
        if self.key == "pg":
            return f"postgresql://{PG['user']}@{PG['host']}:{PG['port']}/{db}"
        return f"mysql://{MY['user']}@{MY['host']}:{MY['port']}/{db}"

    def server_pid(self) -> int:
        if self.key == "mariadb":
            # the server on MY's port (other mariadbd processes may run on this machine)
            from MySQLdb import _mysql
            c = _mysql.connect(**MY)
            try:
                c.query(b"SELECT @@pid_file")
                pid_file = c.store_result().fetch_row()[0][0].decode()
            finally:
                c.close()
            try:
                with open(pid_file) as f:
                    return int(f.read().strip())
            except (OSError, ValueError):
                pid = pid_by_comm("mariadbd") or pid_by_comm("mysqld")
                if pid is None:
                    raise RuntimeError("no mariadbd process on this machine") from None
                return pid
        import psycopg
        with psycopg.connect(dbname="postgres", autocommit=True, **PG) as c:
            datadir = c.execute("SHOW data_directory").fetchone()[0]
        with open(os.path.join(datadir, "postmaster.pid")) as f:
            return int(f.readline())

    def server_cpu_seconds(self, pid: int) -> float:
        return tree_cpu_seconds(pid)

    def sysbench_prepare(self, db: str, rows: int) -> float:
        t = time.monotonic()
        subprocess.run([SYSBENCH, "oltp_point_select", *self.sysbench_conn_args(db), "--tables=1",
                        f"--table-size={rows}", "prepare"], check=True,
                       stdout=subprocess.DEVNULL)
        return time.monotonic() - t


def parse_engines(text: str) -> list[Engine]:
    out = []
    for k in text.split(","):
        k = k.strip().lower()
        k = {"postgres": "pg", "postgresql": "pg", "mysql": "mariadb"}.get(k, k)
        if k not in ("pg", "mariadb"):
            raise SystemExit(f"unknown engine {k!r}: use pg and/or mariadb")
        out.append(Engine(k))
    return out


# --- child processes with rusage ----------------------------------------------------------
@dataclass
class ChildRun:
    rc: int
    wall_s: float
    user_s: float
    sys_s: float
    stdout: str
    stderr: str


_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Make orphaned descendants (the agent `versus run` detaches with a double fork and
    setsid) re-parent to this process instead of init, so os.wait4 can collect their rusage."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def run_with_rusage(cmd: list[str], env: dict | None = None,
                    orphans: bool = False) -> ChildRun:
    """Run cmd, reap it with os.wait4 and return its rusage (the process and its reaped
    descendants). With orphans=True (needs become_subreaper()), also wait for every
    descendant that was re-parented to us and add its rusage: for `versus run` that is the
    detached agent, whose own rusage includes the virtual users it joined."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        user, sys_ = ru.ru_utime, ru.ru_stime
        p.returncode = os.waitstatus_to_exitcode(status)
        while orphans:
            try:
                _, _, ru = os.wait4(-1, 0)
            except ChildProcessError:
                break
            user += ru.ru_utime; sys_ += ru.ru_stime
        wall = time.monotonic() - t
        out.seek(0); err.seek(0)
        return ChildRun(p.returncode, wall, user, sys_,
                        out.read().decode(errors="replace"), err.read().decode(errors="replace"))


# --- host load ------------------------------------------------------------------------------
def host_busy_seconds() -> float:
    """Non-idle CPU seconds of the whole machine since boot (all cores, /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / _TICK


def wait_for_quiet(max_wait: float, threshold: float = 0.15) -> float:
    """Wait until the machine's busy fraction over 1 s is below `threshold` (of all cores),
    at most max_wait seconds; return the seconds waited."""
    t0 = time.monotonic()
    ncpu = os.cpu_count() or 1
    while time.monotonic() - t0 < max_wait:
        b = host_busy_seconds()
        time.sleep(1.0)
        if (host_busy_seconds() - b) / ncpu < threshold:
            break
    return time.monotonic() - t0


class ServerCpuTracker:
    """Server CPU spent on the connections to one database, from /proc.

    MariaDB (one thread per connection, threads cached after disconnect): the OS thread ids
    of the connections to `db` (information_schema.PROCESSLIST.TID) are collected while the
    run goes on; their CPU at the end minus the CPU those threads had at the start.
    PostgreSQL (one process per connection): the backends of `db` (pg_stat_activity) are
    read every `poll` s while alive; a backend's last `poll` seconds before it exits are lost.
    """

    def __init__(self, engine: "Engine", db: str, poll: float = 0.1):
        self.engine, self.db, self.poll = engine, db, poll
        self.pid = engine.server_pid()
        self._stop = threading.Event()
        self._seen: dict[int, float] = {}       # tid/pid -> last CPU seconds read
        self._start: dict[int, float] = {}
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _task_cpu(self, tid: int) -> float | None:
        path = (f"/proc/{self.pid}/task/{tid}/stat" if self.engine.key == "mariadb"
                else f"/proc/{tid}/stat")
        try:
            with open(path) as f:
                data = f.read()
        except OSError:
            return None
        return _cpu_s(data[data.rindex(")") + 2:].split(), children=False)

    def __enter__(self) -> "ServerCpuTracker":
        if self.engine.key == "mariadb":
            for tid in os.listdir(f"/proc/{self.pid}/task"):
                c = self._task_cpu(int(tid))
                if c is not None:
                    self._start[int(tid)] = c
            from MySQLdb import _mysql
            self._conn = _mysql.connect(**MY)
        else:
            import psycopg
            self._conn = psycopg.connect(dbname="postgres", autocommit=True, **PG)
        self._thread.start()
        return self

    def _discover(self) -> list[int]:
        if self.engine.key == "mariadb":
            self._conn.query(b"SELECT TID FROM information_schema.PROCESSLIST WHERE DB='%s'"
                             % self.db.encode())
            return [int(r[0]) for r in self._conn.store_result().fetch_row(0) if r[0]]
        return [r[0] for r in self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.db,)).fetchall()]

    def _loop(self) -> None:
        n = 0
        while not self._stop.is_set():
            if n % 5 == 0:
                for t in self._discover():
                    self._seen.setdefault(t, 0.0)
            n += 1
            for t in list(self._seen):
                c = self._task_cpu(t)
                if c is not None:
                    self._seen[t] = c
            self._stop.wait(self.poll)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.reread()
        self._conn.close()

    def reread(self) -> None:
        """Read the collected threads once more (MariaDB: right after the clients quit)."""
        for t in list(self._seen):
            c = self._task_cpu(t)
            if c is not None:
                self._seen[t] = c

    @property
    def seconds(self) -> float:
        return sum(max(0.0, c - self._start.get(t, 0.0)) for t, c in self._seen.items())


def parse_sysbench(text: str) -> tuple[int, float]:
    """(queries, total time s) from `sysbench ... run` output."""
    q = re.search(r"^\s*queries:\s+(\d+)", text, re.M)
    t = re.search(r"^\s*total time:\s+([\d.]+)s", text, re.M)
    if not q or not t:
        raise RuntimeError("cannot read sysbench's output:\n" + text[-2000:])
    return int(q.group(1)), float(t.group(1))


def mean(xs) -> float:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def table(headers: list[str], rows: list[list], aligns: str | None = None) -> str:
    cells = [[str(h) for h in headers]] + [[c if isinstance(c, str) else _fmt(c) for c in r]
                                           for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    aligns = aligns or ("l" + "r" * (len(headers) - 1))
    lines = []
    for n, r in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if a == "l" else c.rjust(w)
                               for c, w, a in zip(r, widths, aligns)))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if x != x:
            return "-"
        return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.2f}"
    return f"{x:,}" if isinstance(x, int) else str(x)


def run_engines(args, bench_engine, report) -> list[dict]:
    """The engines of --engines one after another (each bench_engine(engine, args, home)
    returns its rows), in one scratch VERSUS_HOME, as this process's subreaper; then the
    report, and the rows as JSON when --json names a file."""
    import json
    from pathlib import Path
    become_subreaper()
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="versus-bench-") as home:
        for eng in parse_engines(args.engines):
            results += bench_engine(eng, args, home)
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return results
