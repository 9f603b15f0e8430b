"""How the app reaches a host: one interface for `local` (subprocess) and SSH (paramiko).

Commands are argument lists; the SSH side quotes every word before it reaches the remote
shell. Streams yield raw bytes; decoding and line splitting belong to the reader.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .errors import ChannelLost, CommandFailed


@dataclass
class Completed:
    rc: int
    stdout: bytes
    stderr: bytes

    def check(self, argv) -> "Completed":
        if self.rc != 0:
            raise CommandFailed(argv, self.rc, self.stderr.decode("utf-8", "replace"))
        return self


class Stream(ABC):
    """A running command whose stdout is read chunk by chunk."""

    @abstractmethod
    def chunks(self) -> Iterator[bytes]:
        """Yield stdout chunks until the command ends; raise ChannelLost if the link drops."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def exit_status(self) -> int | None: ...

    @abstractmethod
    def stderr_text(self) -> str: ...


class Transport(ABC):
    name: str = "?"

    @abstractmethod
    def run(self, argv: list[str], stdin: bytes | None = None, timeout: float = 120,
            check: bool = True) -> Completed: ...

    @abstractmethod
    def stream(self, argv: list[str], idle_timeout: float | None = None) -> Stream:
        """Start a command and read its output. With idle_timeout, a stream that yields
        nothing for that many seconds raises ChannelLost (a frozen link)."""

    @abstractmethod
    def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o600) -> None:
        """Write a file atomically (temp name, then rename) with the given mode."""

    @abstractmethod
    def mkdir_p(self, path: str, mode: int = 0o700) -> None: ...

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def home(self) -> str: ...

    def close(self) -> None:
        pass

    def is_alive(self) -> bool:
        return True


class _LocalStream(Stream):
    def __init__(self, proc: subprocess.Popen):
        self._proc = proc
        self._err = b""
        self._t = threading.Thread(target=self._drain_err, daemon=True)
        self._t.start()

    def _drain_err(self) -> None:
        self._err = self._proc.stderr.read() or b""

    def chunks(self) -> Iterator[bytes]:
        fd = self._proc.stdout.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError as exc:
                raise ChannelLost(f"lost the local agent stream: {exc}") from None
            if not data:
                self._proc.wait()
                return
            yield data

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for f in (self._proc.stdout, self._proc.stderr):
            if f:
                f.close()

    def exit_status(self) -> int | None:
        return self._proc.poll()

    def stderr_text(self) -> str:
        self._t.join(1)
        return self._err.decode("utf-8", "replace")


def _child_env() -> dict[str, str]:
    """The environment for the agent and its helpers: the password reaches the agent through
    its 0600 secret file, so it is not handed down in the environment."""
    return {k: v for k, v in os.environ.items() if k != "VERSUS_DB_PASSWORD"}


class LocalTransport(Transport):
    """This computer, as a host: subprocesses and plain files."""

    name = "local"

    def run(self, argv, stdin=None, timeout=120, check=True) -> Completed:
        try:
            p = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout,
                               env=_child_env())
        except FileNotFoundError as exc:
            c = Completed(127, b"", str(exc).encode())
        else:
            c = Completed(p.returncode, p.stdout, p.stderr)
        return c.check(argv) if check else c

    def stream(self, argv, idle_timeout=None) -> Stream:
        # a local pipe cannot freeze; a follower that hangs is seen by its exit status
        return _LocalStream(subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=_child_env(),
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE))

    def put_bytes(self, data, remote_path, mode=0o600) -> None:
        path = Path(remote_path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)

    def mkdir_p(self, path, mode=0o700) -> None:
        os.makedirs(path, mode=mode, exist_ok=True)

    def exists(self, path) -> bool:
        return os.path.exists(path)

    def home(self) -> str:
        return str(Path.home())

    @staticmethod
    def which(cmd: str) -> str | None:
        return shutil.which(cmd)
