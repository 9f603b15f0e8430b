"""Faults on a schedule for the fault suite: sshd connections killed or frozen, processes
found by their command line and killed by PID, and the host-side facts a test checks
afterwards (the spool's last sequence number, what of a run is still running).

`ConnectionCutter` watches the loopback sshd (tests/sshd.py): every connection is one
process forked by the listener (OpenSSH's privileged monitor, with its unprivileged child
below it). Killing that subtree drops the TCP connection the way a dead link does, without
a goodbye; SIGSTOP on it freezes the link (the socket stays open, no packet moves).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest


def _stat(pid: int) -> tuple[int, str] | None:
    """(ppid, comm) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    comm = data[data.index("(") + 1:data.rindex(")")]
    return int(data[data.rindex(")") + 2:].split()[1]), comm


def _processes() -> dict[int, tuple[int, str]]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                out[int(name)] = st
    return out


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def pids_matching(pattern: str) -> list[int]:
    """PIDs whose command line matches the regular expression (not this test process)."""
    rx = re.compile(pattern)
    return [p for p in _processes() if p != os.getpid() and rx.search(cmdline(p))]


def wait_until(cond, timeout: float, poll: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(poll)


@dataclass
class Cut:
    """One scheduled fault on a new connection: `when` is 'appear' (as soon as the process
    exists: during the key exchange), 'login' (while the server checks the login: its
    AuthorizedKeysCommand runs, see fault_sshd), or a regular expression for a new line of
    the sshd log (e.g. 'Accepted publickey' just after login, "subsystem 'sftp'" while SFTP
    opens) at which the newest connection is hit."""
    when: str = "appear"
    action: str = "kill"            # kill | freeze
    nth: int = 1                    # for a log pattern: at its nth new occurrence


class ConnectionCutter:
    """Kills or freezes sshd's per-connection processes now or on a schedule."""

    def __init__(self, sshd):
        self.sshd = sshd
        self.listener = sshd.proc.pid
        self.log: list[str] = []            # what was done, for failure messages
        self.killed = 0
        self._plan: list[Cut] = []
        self._frozen: list[int] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- the processes ----------------------------------------------------------------
    def connections(self) -> list[int]:
        """Per-connection processes (children of the listener), oldest first."""
        return sorted(p for p, (ppid, _) in _processes().items() if ppid == self.listener)

    def _subtree(self, root: int) -> list[int]:
        procs = _processes()
        out, todo = [], [root]
        while todo:
            p = todo.pop()
            if p in procs and procs[p][1].startswith("sshd"):
                out.append(p)
                todo.extend(c for c, (pp, _) in procs.items() if pp == p)
        return out

    @staticmethod
    def _runs_command(conn: int, procs: dict) -> bool:
        """Whether a non-sshd process runs below this connection's monitor."""
        todo = [conn]
        while todo:
            p = todo.pop()
            for c, (pp, comm) in procs.items():
                if pp == p:
                    if not comm.startswith("sshd"):
                        return True
                    todo.append(c)
        return False

    def _hit(self, conn: int, action: str, why: str) -> None:
        sig = signal.SIGKILL if action == "kill" else signal.SIGSTOP
        for p in self._subtree(conn):
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
            if action == "freeze":
                self._frozen.append(p)
        if action == "kill":
            self.killed += 1
        self.log.append(f"{time.strftime('%H:%M:%S')} {action} connection {conn} ({why})")

    def cut_all(self, action: str = "kill") -> int:
        """Kill (or freeze) every current connection now; returns how many."""
        conns = self.connections()
        for c in conns:
            self._hit(c, action, "now")
        return len(conns)

    # --- the schedule -----------------------------------------------------------------
    def schedule(self, *cuts: Cut) -> None:
        """Apply these faults, in order, to the connections that appear from now on."""
        with self._lock:
            self._plan.extend(cuts)
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, daemon=True, name="cutter")
            self._thread.start()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._plan)

    def _watch(self) -> None:
        seen = set(self.connections())
        log_pos = self.sshd.log_file.stat().st_size
        matches = 0
        while not self._stop.is_set():
            with self._lock:
                cut = self._plan[0] if self._plan else None
            new = [c for c in self.connections() if c not in seen]
            if cut is None:
                seen.update(new)
                time.sleep(0.01)
                continue
            if cut.when == "login":
                procs = _processes()
                for conn in self.connections():
                    if conn not in seen and self._runs_command(conn, procs):
                        seen.add(conn)
                        self._hit(conn, cut.action, "during the login")
                        with self._lock:
                            self._plan.pop(0)
                        break
                time.sleep(0.002)
                continue
            if cut.when == "appear":
                if new:
                    seen.update(new)
                    self._hit(new[0], cut.action, "as it appeared")
                    with self._lock:
                        self._plan.pop(0)
                time.sleep(0.002)
                continue
            with open(self.sshd.log_file, "rb") as f:
                f.seek(log_pos)
                text = f.read()
            if b"\n" in text:
                text = text[:text.rindex(b"\n") + 1]
                log_pos += len(text)
                matches += len(re.findall(cut.when, text.decode("utf-8", "replace")))
                if matches >= cut.nth:
                    conns = self.connections()
                    if conns:
                        self._hit(conns[-1], cut.action, f"at {cut.when!r} #{cut.nth}")
                        matches = 0
                        with self._lock:
                            self._plan.pop(0)
            seen.update(new)
            time.sleep(0.002)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        for p in self._frozen:            # a frozen connection ends like a killed one
            for sig in (signal.SIGKILL, signal.SIGCONT):
                try:
                    os.kill(p, sig)
                except ProcessLookupError:
                    pass


# The login runs a short command (sshd's AuthorizedKeysCommand, slowed down a little), so
# a fault can land exactly while the server checks the login: Cut("login").
_SLOW_LOGIN = """
AuthorizedKeysCommand /bin/sh -c "sleep 0.3; exec cat {d}/authorized_keys"
AuthorizedKeysCommandUser root
"""


@pytest.fixture(scope="session")
def fault_sshd(tmp_path_factory):
    """A private sshd for the fault suite (its connections get killed and frozen)."""
    from tests.sshd import start_sshd, stop_sshd
    server = start_sshd(tmp_path_factory.mktemp("fault-sshd"), _SLOW_LOGIN, keys_file=False)
    try:
        yield server
    finally:
        stop_sshd(server)


@pytest.fixture
def cutter(fault_sshd):
    c = ConnectionCutter(fault_sshd)
    yield c
    c.close()


# --- the host side of a run (the loopback host is this machine) ---------------------------
def host_runs_root() -> Path:
    """The local host's run folders (under VERSUS_HOME when the test sets it)."""
    from app.remote.agentctl import agent_root
    from app.remote.transport import LocalTransport
    return Path(agent_root(LocalTransport())) / "runs"


def run_dir(run_id: str) -> Path:
    """The run's folder on this machine, whichever way it was started: the local host keeps
    runs under VERSUS_HOME, a run over SSH (the loopback sshd logs in as this user, whose
    login does not carry VERSUS_HOME) under ~/.versus."""
    for root in (host_runs_root(), Path.home() / ".versus" / "runs"):
        if (root / run_id).is_dir():
            return root / run_id
    raise FileNotFoundError(f"no run folder for {run_id}")


def spool_last_seq(run_id: str) -> int:
    """The last sequence number in the run's spool on the host (the source of truth)."""
    last = 0
    with open(run_dir(run_id) / "events.jsonl", "rb") as f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and isinstance(ev.get("seq"), int):
                last = max(last, ev["seq"])
    return last


def run_processes(run_id: str) -> list[str]:
    """Command lines of anything on the host still running for this run (agent, followers,
    virtual users)."""
    return [cmdline(p) for p in pids_matching(re.escape(f"runs/{run_id}"))]


def assert_nothing_left(run_id: str, timeout: float = 10) -> None:
    try:
        wait_until(lambda: not run_processes(run_id), timeout, 0.1,
                   "the run's processes ending")
    except AssertionError:
        raise AssertionError(f"still running on the host: {run_processes(run_id)}") from None


def assert_stored_exactly_once(session_path: Path, run_id: str) -> list[dict]:
    """Every event of the host spool is in the session, once; returns the events."""
    from app.store.session import SessionFile
    with SessionFile(session_path) as s:
        rec = s.run(run_id)
        evs = s.events(run_id)
    seqs = [e["seq"] for e in evs]
    last = spool_last_seq(run_id)
    assert seqs == list(range(1, last + 1)), (
        f"stored {len(seqs)} events (last {seqs[-1] if seqs else 0}), "
        f"spool ends at {last}")
    assert rec.events == last == rec.last_seq
    return evs


class CLIProcess:
    """The CLI as a real process whose output can be waited on while it runs."""

    def __init__(self, *args: str, env: dict | None = None):
        import sys
        root = Path(__file__).resolve().parents[1]
        self.proc = subprocess.Popen([sys.executable, "-m", "app.main", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=str(root), env={**os.environ, **(env or {})})
        self.out: list[str] = []
        self.err: list[str] = []
        self._threads = [threading.Thread(target=self._read, args=(f, buf), daemon=True)
                         for f, buf in ((self.proc.stdout, self.out),
                                        (self.proc.stderr, self.err))]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(f, buf: list[str]) -> None:
        for line in f:
            buf.append(line)

    def wait_for(self, pattern: str, timeout: float = 60) -> re.Match:
        """The first output line (either stream) matching the regular expression."""
        rx = re.compile(pattern)

        def found():
            for line in self.out + self.err:
                m = rx.search(line)
                if m:
                    return m
            if self.proc.poll() is not None:
                raise AssertionError(f"the CLI ended (exit {self.proc.returncode}) before "
                                     f"{pattern!r}:\n{''.join(self.err)[-2000:]}")
            return None
        return wait_until(found, timeout, 0.05, repr(pattern))

    def run_id(self, timeout: float = 60) -> str:
        return self.wait_for(r"run (\S+) started on", timeout).group(1)

    def finish(self, timeout: float = 180) -> subprocess.CompletedProcess:
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        for t in self._threads:
            t.join(5)
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode,
                                           "".join(self.out), "".join(self.err))


def wait_for_seq(run_id: str, seq: int, timeout: float = 60) -> None:
    """Until the run's spool on the host holds event `seq`."""
    def ready():
        try:
            return spool_last_seq(run_id) >= seq
        except FileNotFoundError:
            return False
    wait_until(ready, timeout, 0.05, f"event {seq} in the spool of {run_id}")


@contextlib.contextmanager
def small_tmpfs(mnt: Path, size: str = "400k"):
    """A real tmpfs of `size` at `mnt` (root only; the test skips elsewhere): a disk that
    fills up within a run's first seconds."""
    mnt.mkdir(exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                        str(mnt)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
