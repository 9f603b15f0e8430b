"""Running an external benchmark tool (sysbench, pgbench, HammerDB's CLI) inside the agent.

The tool is a child of the agent (itself detached), in its own process group so a stop
reaches all of it. Its standard output is read line by line and handed to the workload's
parser; its error output reaches the run log verbatim. Its CPU counts as the driver's in
the host samples, and its exit resource usage goes into the phase summary. Secrets reach it
through its environment or a 0600 file, never its command line.
"""
from __future__ import annotations

import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import Any, Iterator, Sequence

from ..sql.db import DatabaseError


class ToolMissing(DatabaseError):
    """The tool is not installed on the host (found before the run starts)."""


class ToolFailed(DatabaseError):
    """The tool exited with an error; its own words are in the run log."""


def require(name: str, install: str, path: str = "") -> str:
    """The tool's executable, or ToolMissing with the sentence a user can act on."""
    exe = path if path and os.access(path, os.X_OK) else shutil.which(path or name)
    if not exe:
        raise ToolMissing(f"{name} is not installed on {socket.gethostname()}; {install}")
    return exe


def missing(name: str, install: str, path: str = "") -> str | None:
    """None when the tool is here, else the sentence that says how to get it."""
    try:
        require(name, install, path)
    except ToolMissing as exc:
        return str(exc)
    return None


class SecretFile:
    """A file only the agent's user can read (0600 in a 0700 folder), removed afterwards."""

    def __init__(self, text: str, suffix: str = ""):
        self.dir = tempfile.mkdtemp(prefix="versus-tool-")
        self.path = os.path.join(self.dir, f"options{suffix}")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "SecretFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ToolProcess:
    """One run of the tool: ``lines()`` yields its standard output as text lines while it
    runs (checking the agent's stop flag), ``rusage`` holds its CPU once it has exited."""

    def __init__(self, agent, argv: Sequence[str], env: dict[str, str] | None = None,
                 cwd: str | None = None, name: str = "", secrets: Sequence[str] = ()):
        self.agent = agent
        self.name = name or os.path.basename(argv[0])
        for s in secrets:          # never on a command line
            if s and any(s in a for a in argv):
                raise ValueError(f"a secret reached {self.name}'s command line")
        self.argv = list(argv)
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env={**os.environ, **(env or {}), "LC_ALL": "C"},
            cwd=cwd, start_new_session=True, bufsize=0)
        self.rusage: Any = None
        self.returncode: int | None = None
        self.stopped = False
        self.t_start = agent.em.now()
        self._q: queue.Queue = queue.Queue()
        self._stderr_lines: list[str] = []
        self._fatal_lines: list[str] = []     # a tool's own FATAL lines on its output
        agent.track_processes([self.proc.pid])
        agent.log(f"started {self.name} (pid {self.proc.pid}): {' '.join(self.argv)}")
        self._threads = [threading.Thread(target=self._read, args=(self.proc.stdout, "out"),
                                          daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, "err"),
                                          daemon=True)]
        for t in self._threads:
            t.start()

    def _read(self, stream, which: str) -> None:
        buf = b""
        while True:
            chunk = stream.read(65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for ln in lines:
                self._q.put((which, ln.decode("utf-8", "replace")))
        if buf:
            self._q.put((which, buf.decode("utf-8", "replace")))
        self._q.put((which, None))

    def lines(self, stderr: bool = False, idle=None) -> Iterator[str]:
        """Standard output line by line (and error output too when ``stderr``: tools such
        as pgbench print their progress there); error output not yielded goes to the run
        log verbatim as it comes. ``idle()`` is called whenever no line came for 0.1 s."""
        open_streams = 2
        while open_streams:
            if self.agent.stop_requested.is_set() and not self.stopped:
                self.stop()
            try:
                which, line = self._q.get(timeout=0.1)
            except queue.Empty:
                if idle is not None:
                    idle()
                continue
            if line is None:
                open_streams -= 1
                continue
            if which == "out" and line.startswith("FATAL"):
                self._fatal_lines = [*self._fatal_lines[-2:], line.strip()]
            if which == "err" and line.strip():
                self._stderr_lines.append(line)
                if not stderr:
                    self.agent.em.emit("log", level="warning", message=line, source=self.name)
                    continue
            yield line
        self._wait()

    def stop(self) -> None:
        """SIGINT to the tool's process group (its own clean stop), SIGKILL if it lingers."""
        self.stopped = True
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            return
        threading.Thread(target=self._kill_later, daemon=True).start()

    def _kill_later(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.proc.poll() is None and self.rusage is None:
            time.sleep(0.1)
        if self.rusage is None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _wait(self) -> None:
        if self.rusage is not None:
            return
        _, status, ru = os.wait4(self.proc.pid, 0)
        self.rusage = ru
        self.returncode = os.waitstatus_to_exitcode(status)
        self.proc.returncode = self.returncode
        self.agent.track_processes([])

    def cpu(self, ops: float | None) -> dict[str, Any]:
        """The tool's CPU for the summary (all its threads, from its exit)."""
        u, s = self.rusage.ru_utime, self.rusage.ru_stime
        return {"user_s": round(u, 4), "system_s": round(s, 4),
                "us_per_op": round((u + s) * 1e6 / ops, 2) if ops else None,
                "source": f"wait4 rusage of the {self.name} process (its whole life)"}

    def check(self) -> None:
        """StopRun after a stop; ToolFailed with the tool's own last words on an error exit."""
        if self.stopped:
            self.agent.check_stop()          # the user's stop: the agent's StopRun
        if self.returncode:
            last = "; ".join(self._stderr_lines[-3:] or self._fatal_lines) or "see the run log"
            raise ToolFailed(f"{self.name} exited with status {self.returncode}: {last}")
