"""Host CPU split into process groups, one interval at a time (source: /proc on the host).

Every process's /proc/PID/stat is read each interval, so the groups (database server
foreground and background work, the benchmark driver, Versus's own monitoring, everything
else) add up to the host's busy time. CPU of processes that ended between two reads is not
lost: a parent's cutime/cstime grows by a reaped child's whole life, and the part not yet
seen is credited to the ended children's groups (see ProcGroups._settle_ended).

Groups are keys of the `host` event's ``cpu_groups`` in percent of the host's total CPU
(all cores, as the ``cpu`` modes are):

    server.fg                    connection backends / connection threads
    server.bg.<role>             PostgreSQL by process title (autovacuum, checkpointer,
                                 bgwriter, walwriter); MariaDB/MySQL by thread (purge,
                                 page_cleaner, log_writer, innodb_pool); server.bg.other
    driver                       the agent and every process it started (virtual users,
                                 loaders, an external tool)
    monitor                      Versus's sampler thread and its server connection
    other                        every other process (kernel threads included)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

FG = "server.fg"
BG_OTHER = "server.bg.other"
DRIVER = "driver"
MONITOR = "monitor"
OTHER = "other"

# PostgreSQL process titles ("postgres: [cluster: ]checkpointer") -> group; a title that
# names none of these is a client backend (or a parallel worker, which works for one)
PG_TITLES = (
    ("autovacuum launcher", "server.bg.autovacuum"),
    ("autovacuum worker", "server.bg.autovacuum"),
    ("checkpointer", "server.bg.checkpointer"),
    ("background writer", "server.bg.bgwriter"),
    ("walwriter", "server.bg.walwriter"),
    ("parallel worker", FG),
    ("logical replication", BG_OTHER), ("stats collector", BG_OTHER), ("archiver", BG_OTHER),
    ("walsender", BG_OTHER), ("walreceiver", BG_OTHER), ("startup", BG_OTHER),
    ("wal summarizer", BG_OTHER), ("io worker", BG_OTHER), ("slotsync worker", BG_OTHER),
    ("background worker", BG_OTHER), ("bgworker", BG_OTHER),
)

# MySQL/MariaDB thread names (/proc/PID/task/TID/comm as MySQL 8 sets them, or
# performance_schema.threads.NAME) -> group, by substring, first match wins
MYSQL_THREADS = (
    ("one_connection", FG), ("connection", FG), ("threadpool", FG), ("thread_pool_worker", FG),
    ("tp_worker", FG),
    ("purge", "server.bg.purge"), ("ib_srv_wkr", "server.bg.purge"),
    ("page_cleaner", "server.bg.page_cleaner"), ("pg_flush", "server.bg.page_cleaner"),
    ("log_writer", "server.bg.log_writer"), ("log_flush", "server.bg.log_writer"),
    ("ib_log", "server.bg.log_writer"),
    # MariaDB 10.5+ runs purge, IO completion and other InnoDB tasks on one task pool
    ("innodb/thread_pool_thread", "server.bg.innodb_pool"),
)


def pg_group(title: str) -> str:
    t = title.lower()
    if t.startswith("postgres:"):
        t = t[len("postgres:"):]
    for needle, group in PG_TITLES:
        if needle in t:
            return group
    return FG


def mysql_thread_group(name: str) -> str | None:
    """Group of a named MySQL/MariaDB thread; None when the name says nothing."""
    n = name.lower()
    for needle, group in MYSQL_THREADS:
        if needle in n:
            return group
    if n.startswith(("thread/", "ib_", "ib/")):
        return BG_OTHER
    return None


def _read_bytes(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return b""
    try:
        return os.read(fd, 4096)
    except OSError:
        return b""
    finally:
        os.close(fd)


def read_stat(path: str) -> tuple[int, int, int, int, int, int] | None:
    """(ppid, utime, stime, cutime+cstime, starttime, state) in ticks from a stat file."""
    raw = _read_bytes(path)
    if not raw:
        return None
    f = raw[raw.rfind(b")") + 2:].split(b" ", 20)
    try:
        return (int(f[1]), int(f[11]), int(f[12]), int(f[13]) + int(f[14]), int(f[19]), f[0][0])
    except (IndexError, ValueError):
        return None


def cmdline(pid: int) -> str:
    raw = _read_bytes(f"/proc/{pid}/cmdline")
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def comm(path: str) -> str:
    return _read_bytes(path).decode(errors="replace").strip()


@dataclass
class _Seen:
    start: int
    ppid: int
    user: int
    system: int
    child: int
    group: str


@dataclass
class _Ended:
    """A process that ended since its last read, waiting for its reaper's cutime to grow by
    its whole life (which may happen one read later than it vanished)."""
    ticks: int              # user + system + children's, as last seen
    group: str
    ppid: int
    pid: int
    user: int
    system: int
    age: int = 0
    covered: bool = False


class ServerProcs:
    """How one database server's processes and threads map to groups."""

    engine = ""
    pid = 0
    describe = ""

    def process_group(self, pid: int, ppid: int) -> str | None:
        return None

    def threads(self) -> bool:
        """True when the server's threads (not processes) are split into groups."""
        return False

    def thread_group(self, tid: int, name: str) -> str:
        return FG

    def child_default(self) -> str:
        return FG


class PgProcs(ServerProcs):
    """PostgreSQL: the postmaster and its children, grouped by their process titles."""

    engine = "postgres"

    def __init__(self, pid: int, found_by: str, monitor_pid: int = 0):
        self.pid, self.monitor_pid = pid, monitor_pid
        self.describe = f"PostgreSQL postmaster {pid} ({found_by})"

    def process_group(self, pid: int, ppid: int) -> str | None:
        if pid == self.pid:
            return BG_OTHER
        if ppid != self.pid:
            return None
        if pid == self.monitor_pid:
            return MONITOR
        return pg_group(cmdline(pid))


class MysqlProcs(ServerProcs):
    """MySQL/MariaDB: one process; its threads are grouped by name (/proc comm, or
    performance_schema.threads), connection threads by the server's processlist."""

    engine = "mysql"

    def __init__(self, pid: int, found_by: str, lookup: Callable[[], dict[int, str]] | None,
                 monitor_tid: Callable[[], int] | None = None):
        self.pid = pid
        self.describe = f"MySQL/MariaDB server {pid} ({found_by})"
        self._lookup = lookup            # () -> {tid: name, "connection" for connections}
        self._monitor_tid = monitor_tid
        self._known: dict[int, str] = {}
        # threads neither named nor listed yet: background until the server lists them;
        # the count is how often one worked unlisted (3 times: it is background for good)
        self._unlisted: dict[int, int] = {}
        self._pname = comm(f"/proc/{pid}/comm")
        self.monitor_tid = 0

    def process_group(self, pid: int, ppid: int) -> str | None:
        return BG_OTHER if pid == self.pid else None

    def threads(self) -> bool:
        return True

    def classify(self, names: dict[int, str], busy: set[int]) -> None:
        """Name new threads from /proc (name: comm); ask the server when threads are still
        unknown or an unlisted one worked (a cached thread may have taken a connection)."""
        for tid, name in names.items():
            if tid in self._known or tid in self._unlisted:
                continue
            g = mysql_thread_group(name) if name and name != self._pname else None
            if g is not None:
                self._known[tid] = g
            else:
                self._unlisted[tid] = 0
        ask = [t for t in self._unlisted if t in busy or self._unlisted[t] == 0]
        if not ask or self._lookup is None:
            return
        try:
            listed = self._lookup()
        except Exception:
            listed = {}
        if self._monitor_tid is not None and not self.monitor_tid:
            try:
                self.monitor_tid = self._monitor_tid() or 0
            except Exception:
                self.monitor_tid = 0
        for tid in ask:
            name = listed.get(tid)
            if name is not None:
                self._known[tid] = mysql_thread_group(name) or BG_OTHER
                del self._unlisted[tid]
            elif tid in busy:
                self._unlisted[tid] += 1
                if self._unlisted[tid] >= 3:
                    self._known[tid] = BG_OTHER
                    del self._unlisted[tid]
            else:
                self._unlisted[tid] = -1          # idle and unlisted: ask when it works

    def thread_group(self, tid: int) -> str:
        if tid == self.monitor_tid:
            return MONITOR
        return self._known.get(tid, BG_OTHER)

    def unlisted(self, tid: int) -> bool:
        return tid in self._unlisted

    def forget(self, tids) -> None:
        for t in tids:
            self._known.pop(t, None)
            self._unlisted.pop(t, None)


class ProcGroups:
    """Reads every process once per interval and returns CPU ticks per group."""

    def __init__(self, driver_pid: int, server: ServerProcs | None = None,
                 monitor_tid: int = 0):
        self.driver_pid = driver_pid
        self.server = server
        self.monitor_tid = monitor_tid        # the sampler thread inside the driver process
        self._seen: dict[int, _Seen] = {}
        self._threads: dict[int, _Seen] = {}
        self._ended: list[_Ended] = []
        self._gone: dict[int, str] = {}
        self._primed = False

    # --- one interval ---------------------------------------------------------------
    def sample(self) -> dict[str, list[int]] | None:
        """{group: [user ticks, system ticks]} since the previous call (None on the first)."""
        out: dict[str, list[int]] = {}
        cur: dict[int, _Seen] = {}
        new_child: dict[int, int] = {}
        seen = self._seen
        srv = self.server
        srv_pid = srv.pid if srv else -1
        for entry in os.scandir("/proc"):
            name = entry.name
            if not name.isdigit():
                continue
            pid = int(name)
            st = read_stat(f"/proc/{name}/stat")
            if st is None:
                continue
            ppid, ut, stt, child, start, _state = st
            old = seen.get(pid)
            if old is not None and old.start == start:
                group = old.group
                du, ds, dc = ut - old.user, stt - old.system, child - old.child
            else:
                group = self._group_of(pid, ppid, cur)
                du, ds, dc = ut, stt, child
            cur[pid] = _Seen(start, ppid, ut, stt, child, group)
            if pid == srv_pid and srv is not None and srv.threads():
                self._split_threads(pid, du, ds, out)
            elif du or ds:
                acc = out.setdefault(group, [0, 0])
                acc[0] += max(du, 0)
                acc[1] += max(ds, 0)
            if dc > 0:
                new_child[pid] = dc
        if self._primed:
            self._settle_ended(cur, new_child, out)
        self._split_monitor(out)
        self._remember({p: s.group for p, s in self._seen.items() if p not in cur})
        self._seen = cur
        first = not self._primed
        self._primed = True
        return None if first else out

    def set_server(self, server: ServerProcs | None) -> None:
        """The server restarted under a new process: its processes seen since, counted
        under other until now, move to its groups (their CPU so far stays where it was)."""
        self.server = server
        for pid, seen in self._seen.items():     # parents first: a child follows its parent
            if seen.group == OTHER:
                seen.group = self._group_of(pid, seen.ppid, self._seen)

    def server_pids(self) -> list[int]:
        """The server's processes now: the postmaster and its children, or the one
        MySQL/MariaDB process."""
        srv = self.server
        if srv is None:
            return []
        if srv.threads():
            return [srv.pid]
        kids = []
        for e in os.scandir("/proc"):
            if e.name.isdigit():
                st = read_stat(f"/proc/{e.name}/stat")
                if st is not None and st[0] == srv.pid:
                    kids.append(int(e.name))
        return [srv.pid] + sorted(kids)

    def group_of_task(self, tid: int) -> str | None:
        """The group of a process or (server) thread id, also shortly after it ended (a
        profile is folded after its phase's connections closed)."""
        srv = self.server
        if srv is not None and srv.threads() and tid in self._threads:
            return srv.thread_group(tid)
        seen = self._seen.get(tid)
        return seen.group if seen is not None else self._gone.get(tid)

    def _remember(self, ended: dict[int, str]) -> None:
        """Keep the groups of tasks that ended, the latest 4096 of them."""
        self._gone.update(ended)
        while len(self._gone) > 4096:
            self._gone.pop(next(iter(self._gone)))

    def driver_pids(self) -> list[int]:
        """The driver's processes (the agent and every process it started), as last read."""
        return [pid for pid, s in self._seen.items() if s.group == DRIVER]

    def foreground_tasks(self) -> list[str]:
        """/proc paths of the server's foreground processes or threads (as last read)."""
        srv = self.server
        if srv is None:
            return []
        if srv.threads():
            return [f"/proc/{srv.pid}/task/{tid}" for tid in self._threads
                    if srv.thread_group(tid) == FG]
        return [f"/proc/{pid}" for pid, s in self._seen.items() if s.group == FG]

    def _group_of(self, pid: int, ppid: int, cur: dict[int, _Seen]) -> str:
        if pid == self.driver_pid:
            return DRIVER
        if self.server is not None:
            g = self.server.process_group(pid, ppid)
            if g is not None:
                return g
        parent = cur.get(ppid) or self._seen.get(ppid)
        if parent is not None and parent.group == DRIVER:
            return DRIVER
        if parent is None and ppid == self.driver_pid:
            return DRIVER
        if parent is not None and parent.group.startswith("server.") and self.server \
                and self.server.pid != pid:
            return BG_OTHER        # e.g. an archive_command's shell
        return OTHER

    def _default_child_group(self, ppid: int) -> str:
        parent = self._seen.get(ppid)
        if ppid == self.driver_pid or (parent is not None and parent.group == DRIVER):
            return DRIVER
        if self.server is not None and ppid == self.server.pid:
            return self.server.child_default()
        return parent.group if parent is not None else OTHER

    def _settle_ended(self, cur: dict[int, _Seen], new_child: dict[int, int],
                      out: dict[str, list[int]]) -> None:
        for pid, old in self._seen.items():
            now = cur.get(pid)
            if now is None or now.start != old.start:
                self._ended.append(_Ended(old.user + old.system + old.child, old.group,
                                          old.ppid, pid, old.user, old.system))
        # a parent's cutime grew by the whole lives of the children it reaped: first its own
        # ended children, then orphans (their parent is gone too; init or a subreaper reaps)
        left = dict(new_child)
        covered: dict[int, list[_Ended]] = {}
        for orphans in (False, True):
            for ppid in left:
                items = [e for e in self._ended if not e.covered and (
                    (e.ppid not in cur) if orphans else (e.ppid == ppid))]
                if not items:
                    continue
                # a child that reaped its own children just before it ended carries their
                # whole lives in its cutime: they are covered by the same credit
                family = {e.pid for e in items}
                more = True
                while more:
                    more = [e for e in self._ended if not e.covered and e.ppid in family
                            and e.pid not in family]
                    items += more
                    family |= {e.pid for e in more}
                if sum(e.ticks for e in items) > left[ppid]:
                    items.sort(key=lambda e: -e.ticks)    # not all reaped yet: the largest fit
                for e in items:
                    if e.ticks <= left[ppid]:
                        left[ppid] -= e.ticks
                        e.covered = True
                        covered.setdefault(ppid, []).append(e)
        for ppid, rest in left.items():
            if rest <= 0:
                continue
            # the unseen rest of the ended children's lives goes to their groups by their
            # user/system split; children never seen go to the parent's default group
            items = covered.get(ppid)
            if items:
                share = rest / len(items)
                for e in items:
                    acc = out.setdefault(e.group, [0, 0])
                    both = e.user + e.system
                    fu = e.user / both if both else 0.5
                    acc[0] += share * fu
                    acc[1] += share * (1 - fu)
            else:
                acc = out.setdefault(self._default_child_group(ppid), [0, 0])
                acc[0] += rest / 2
                acc[1] += rest / 2
        keep = []
        for e in self._ended:
            e.age += 1
            if not e.covered and e.age <= 3:
                keep.append(e)
        self._ended = keep

    def _split_threads(self, pid: int, du: int, ds: int, out: dict[str, list[int]]) -> None:
        srv = self.server
        assert isinstance(srv, MysqlProcs)
        base = f"/proc/{pid}/task"
        try:
            tids = [int(e.name) for e in os.scandir(base) if e.name.isdigit()]
        except OSError:
            tids = []
        cur: dict[int, _Seen] = {}
        deltas: dict[int, tuple[int, int]] = {}
        names: dict[int, str] = {}
        for tid in tids:
            st = read_stat(f"{base}/{tid}/stat")
            if st is None:
                continue
            _pp, ut, stt, _c, start, _s = st
            old = self._threads.get(tid)
            if old is not None and old.start == start:
                deltas[tid] = (ut - old.user, stt - old.system)
            else:
                deltas[tid] = (ut, stt)
                names[tid] = comm(f"{base}/{tid}/comm")
                if old is not None:
                    srv.forget((tid,))
            cur[tid] = _Seen(start, pid, ut, stt, 0, "")
        ended = [t for t in self._threads if t not in cur]
        ended_groups = [srv.thread_group(t) for t in ended]
        self._remember(dict(zip(ended, ended_groups)))
        srv.forget(ended)
        busy = {t for t, (u, s) in deltas.items() if (u or s) and srv.unlisted(t)}
        srv.classify(names, busy)
        su = ss = 0
        for tid, (tu, ts) in deltas.items():
            if tu or ts:
                acc = out.setdefault(srv.thread_group(tid), [0, 0])
                acc[0] += max(tu, 0)
                acc[1] += max(ts, 0)
                su += tu
                ss += ts
        # time of threads that ended since the last read: in the process's total only
        ru, rs = du - su, ds - ss
        if ru > 0 or rs > 0:
            groups = ended_groups or [FG]
            for g in groups:
                acc = out.setdefault(g, [0, 0])
                acc[0] += max(ru, 0) / len(groups)
                acc[1] += max(rs, 0) / len(groups)
        self._threads = cur

    def _split_monitor(self, out: dict[str, list[int]]) -> None:
        """Move the sampler thread's own ticks from the driver to the monitor group."""
        if not self.monitor_tid:
            return
        st = read_stat(f"/proc/{self.driver_pid}/task/{self.monitor_tid}/stat")
        if st is None:
            return
        ut, stt = st[1], st[2]
        prev = getattr(self, "_mon_prev", None)
        self._mon_prev = (ut, stt)
        if prev is None:
            return
        du, ds = ut - prev[0], stt - prev[1]
        drv = out.setdefault(DRIVER, [0, 0])
        du, ds = min(du, drv[0]), min(ds, drv[1])
        drv[0] -= du
        drv[1] -= ds
        mon = out.setdefault(MONITOR, [0, 0])
        mon[0] += du
        mon[1] += ds


def cap_other(groups: dict[str, list[float]], busy_ticks: float, cores: int) -> float:
    """The groups cannot add up to more than the host was busy in the interval. Beyond the
    resolution of /proc/stat (5 % and a tick per core) the excess can only be CPU counted
    twice: processes seen while they ran, then credited whole to the init that reaped them
    after we had stopped remembering them (a lazy reaper), under other. Take it out of other
    (never out of the server or the driver); returns the ticks taken."""
    over = sum(u + s for u, s in groups.values()) - busy_ticks - (0.05 * busy_ticks + cores)
    other = groups.get(OTHER)
    both = (other[0] + other[1]) if other else 0
    if over <= 0 or both <= 0:
        return 0.0
    take = min(over, both)
    other[0] -= take * other[0] / both
    other[1] -= take * other[1] / both
    return take


def percent(groups: dict[str, list[float]], total_ticks: int) -> dict[str, dict[str, float]]:
    """Ticks per group -> {"user": %, "system": %} of the host's total CPU."""
    t = total_ticks or 1
    return {g: {"user": round(100.0 * u / t, 2), "system": round(100.0 * s / t, 2)}
            for g, (u, s) in sorted(groups.items())}
