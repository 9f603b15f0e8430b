"""Finding the database server's processes on this host (source: /proc): the PostgreSQL
postmaster by its data directory and port, the MySQL/MariaDB process by the port it listens
on, and whether a target's address is this host. ProcGroups then splits their CPU."""
from __future__ import annotations

import contextlib
import os

from .procgroups import MysqlProcs, PgProcs, ServerProcs, TICK, _read_bytes, cmdline, read_stat

def boot_time() -> float:
    for line in _read_bytes("/proc/stat").split(b"\n"):
        if line.startswith(b"btime "):
            return float(line.split()[1])
    return 0.0


def started_epoch(pid: int) -> float | None:
    st = read_stat(f"/proc/{pid}/stat")
    if st is None:
        return None
    raw = _read_bytes("/proc/stat")
    for line in raw.split(b"\n"):
        if line.startswith(b"btime "):
            return float(line.split()[1]) + st[4] / TICK
    return None


def is_local_address(address: str) -> tuple[bool, str]:
    """Whether a target address is this host; the reason when it is not."""
    import socket
    if not address or address.startswith("/") or address in ("localhost",):
        return True, ""
    try:
        infos = socket.getaddrinfo(address, None, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        return False, f"{address} does not resolve here ({exc.strerror or exc})"
    for fam, _t, _p, _c, sa in infos:
        ip = sa[0]
        if ip.startswith("127.") or ip == "::1":
            return True, ""
        try:
            with socket.socket(fam, socket.SOCK_DGRAM) as s:
                s.bind((ip, 0))          # only an address of this host can be bound
            return True, ""
        except OSError:
            continue
    return False, f"{address} is not an address of this host"


def _first_line(path: str) -> int:
    try:
        with open(path) as f:
            return int(f.readline().strip())
    except (OSError, ValueError):
        return 0


def _start_matches(pid: int, epoch: float | None, slack: float = 5.0) -> bool:
    got = started_epoch(pid)
    return got is not None and epoch is not None and abs(got - epoch) <= slack


def _client_port(session) -> int:
    """The local port of the session's TCP connection (0 for a Unix socket)."""
    import socket
    try:
        fd = session.conn.pgconn.socket if session.dialect == "postgres" else \
            session.conn.fileno()
        with socket.socket(fileno=os.dup(fd)) as s:
            name = s.getsockname()
        return int(name[1]) if isinstance(name, tuple) else 0
    except Exception:
        return 0


def locate_server(target, session, lock=None) -> tuple[ServerProcs | None, str]:
    """The server's processes when it runs on this host, else None and the reason, as a
    sentence. `session` is the monitoring connection (a db.SqlSession); `lock` guards it
    when later thread look-ups (MySQL/MariaDB) share it with another thread."""
    local, why = is_local_address(target.address)
    if not local:
        return None, f"the server is not on this host: {why}"
    if target.dialect == "postgres":
        return _locate_pg(session)
    return _locate_mysql(session, lock or contextlib.nullcontext())


def _locate_pg(session) -> tuple[ServerProcs | None, str]:
    backend = int(session.scalar("SELECT pg_backend_pid()") or 0)
    started = session.scalar("SELECT extract(epoch FROM pg_postmaster_start_time())")
    started = float(started) if started is not None else None
    port = _client_port(session)
    candidates: list[tuple[int, str]] = []
    try:      # superusers and pg_read_all_settings only
        datadir = session.scalar("SELECT current_setting('data_directory')")
    except Exception:
        datadir = None
    if datadir:
        pid = _first_line(os.path.join(datadir, "postmaster.pid"))
        if pid:
            candidates.append((pid, f"postmaster.pid in {datadir}"))
    st = read_stat(f"/proc/{backend}/stat") if backend else None
    if st is not None:
        candidates.append((st[0], "the parent of this connection's backend"))
    for pid, how in candidates:
        if not read_stat(f"/proc/{pid}/stat"):
            continue
        own = cmdline(backend) if backend else ""
        ours = (st is not None and st[0] == pid and own.startswith("postgres")
                and (port == 0 or f"({port})" in own))
        if ours or _start_matches(pid, started):
            return PgProcs(pid, how, monitor_pid=backend if ours else 0), ""
    return None, ("the server's postmaster was not found on this host (postmaster.pid not "
                  "readable and no local process matches the server's start time); its CPU "
                  "counts under other")


class _ThreadNames:
    """MySQL/MariaDB thread names by OS thread id, asked on the monitoring connection:
    performance_schema.threads when it is on, and the connection threads that
    information_schema.PROCESSLIST lists (MariaDB's TID column)."""

    def __init__(self, session, lock):
        self.session, self.lock = session, lock
        self.pfs: bool | None = None
        self.tid_column = True

    def threads(self) -> dict[int, str]:
        with self.lock:
            return self._threads()

    def own_tid(self) -> int:
        with self.lock:
            return _mysql_own_tid(self.session)

    def _threads(self) -> dict[int, str]:
        out: dict[int, str] = {}
        db = self.session
        if self.pfs is None:
            try:
                self.pfs = bool(int(db.scalar("SELECT @@performance_schema") or 0))
            except Exception:
                self.pfs = False
        if self.pfs:
            for tid, name, typ in db.execute(
                    "SELECT THREAD_OS_ID, NAME, TYPE FROM performance_schema.threads "
                    "WHERE THREAD_OS_ID IS NOT NULL"):
                out[int(tid)] = "connection" if typ == "FOREGROUND" else str(name)
        if self.tid_column:
            try:
                rows = db.execute("SELECT TID, COMMAND FROM information_schema.PROCESSLIST "
                                  "WHERE TID > 0")
            except Exception:
                self.tid_column = False           # MySQL has no TID column
                rows = []
            for tid, command in rows:
                out.setdefault(int(tid), "connection" if command != "Daemon"
                               else "daemon")
        return out


def _mysql_own_tid(session) -> int:
    for sql in ("SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
                "SELECT THREAD_OS_ID FROM performance_schema.threads "
                "WHERE PROCESSLIST_ID = CONNECTION_ID()"):
        try:
            v = session.scalar(sql)
        except Exception:
            continue
        if v:
            return int(v)
    return 0


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in _read_bytes_all(path).split(b"\n")[1:]:
            p = line.split()
            if len(p) > 9 and p[3] == b"0A" and int(p[1].rsplit(b":", 1)[1], 16) == port:
                inodes.add(p[9].decode())
    return inodes


def _read_bytes_all(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _port_owner(port: int) -> int:
    inodes = _listening_inodes(port)
    if not inodes:
        return 0
    want = {f"socket:[{i}]" for i in inodes}
    for e in os.scandir("/proc"):
        if not e.name.isdigit():
            continue
        try:
            for fd in os.scandir(f"/proc/{e.name}/fd"):
                try:
                    if os.readlink(fd.path) in want:
                        return int(e.name)
                except OSError:
                    continue
        except OSError:
            continue
    return 0


def _locate_mysql(session, lock) -> tuple[ServerProcs | None, str]:
    uptime = None
    for _name, value in session.execute("SHOW GLOBAL STATUS LIKE 'Uptime'"):
        uptime = float(value)
    import time
    started = time.time() - uptime if uptime is not None else None
    own_tid = _mysql_own_tid(session)
    candidates: list[tuple[int, str]] = []
    pid_file = session.scalar("SELECT @@pid_file")
    if pid_file:
        datadir = session.scalar("SELECT @@datadir") or ""
        path = pid_file if os.path.isabs(pid_file) else os.path.join(datadir, pid_file)
        pid = _first_line(path)
        if pid:
            candidates.append((pid, f"@@pid_file {path}"))
    port = int(session.scalar("SELECT @@port") or 0)
    if port:
        owner = _port_owner(port)
        if owner:
            candidates.append((owner, f"the process listening on port {port}"))
    for pid, how in candidates:
        if not read_stat(f"/proc/{pid}/stat"):
            continue
        ours = bool(own_tid) and os.path.exists(f"/proc/{pid}/task/{own_tid}")
        if ours or _start_matches(pid, started):
            names = _ThreadNames(session, lock)
            return MysqlProcs(pid, how, names.threads, names.own_tid), ""
    return None, ("the server's process was not found on this host (@@pid_file not readable "
                  "and no local process listening on its port matches its start time); its "
                  "CPU counts under other")
