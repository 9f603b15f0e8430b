"""Deploy the agent to a host (content-addressed, re-uploaded only when it changed) and
drive it: start a run, follow its event stream from a sequence number, stop, status."""
from __future__ import annotations

import hashlib
import json
import posixpath
from functools import lru_cache
from pathlib import Path

import workloads

from .errors import CommandFailed, RemoteError
from .transport import Stream, Transport

_PKG_ROOT = Path(workloads.__file__).resolve().parent


@lru_cache(maxsize=1)
def agent_files() -> tuple[tuple[str, bytes], ...]:
    files = []
    for p in sorted(_PKG_ROOT.rglob("*")):
        if p.is_file() and p.suffix in (".py", ".sql") and "__pycache__" not in p.parts:
            files.append((f"workloads/{p.relative_to(_PKG_ROOT).as_posix()}", p.read_bytes()))
    return tuple(files)


def agent_digest() -> str:
    h = hashlib.sha256()
    for name, data in agent_files():
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:20]


class AgentControl:
    """The agent on one host, reached through a Transport."""

    def __init__(self, transport: Transport, python: str = "python3"):
        self.t = transport
        self.root = posixpath.join(transport.home(), ".versus")
        self.agent_dir = posixpath.join(self.root, "agent", agent_digest())
        self.runs_root = posixpath.join(self.root, "runs")
        self.venv_python = posixpath.join(self.root, "venv", "bin", "python")
        # a host prepared by Versus runs the agent in its own virtual environment
        if python == "python3" and transport.exists(self.venv_python):
            python = self.venv_python
        self.python = python

    DRIVERS = {"psycopg": "psycopg[binary]>=3.2", "MySQLdb": "mysqlclient>=2.2",
               "pymysql": "PyMySQL>=1.1"}

    def missing_drivers(self) -> list[str]:
        """Database driver modules the host's Python lacks (mysqlclient or PyMySQL suffices)."""
        code = ("import importlib.util as u, json; print(json.dumps({m: bool(u.find_spec(m)) "
                "for m in ('psycopg', 'MySQLdb', 'pymysql')}))")
        c = self.t.run([self.python, "-c", code], check=False, timeout=30)
        try:
            have = json.loads(c.stdout)
        except ValueError:
            return ["python3"]
        missing = [] if have.get("psycopg") else ["psycopg"]
        if not (have.get("MySQLdb") or have.get("pymysql")):
            missing.append("pymysql")
        return missing

    def prepare(self, log=lambda line: None) -> str:
        """Create a virtual environment in the agent's folder with the database drivers from
        the package index (only when the user asked for it). Returns its Python."""
        self.t.mkdir_p(self.root, 0o700)
        venv = posixpath.dirname(posixpath.dirname(self.venv_python))
        log(f"creating a virtual environment in {venv}")
        c = self.t.run([self.python, "-m", "venv", venv], check=False, timeout=300)
        if c.rc != 0:
            raise RemoteError("could not create a virtual environment on the host ("
                              + c.stderr.decode("utf-8", "replace").strip()[-200:]
                              + "); install python3-venv there, or install python3-psycopg "
                              "and python3-pymysql from the distribution")
        pip = [self.venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        log("installing psycopg and PyMySQL")
        c = self.t.run(pip + [self.DRIVERS["psycopg"], self.DRIVERS["pymysql"]], check=False,
                       timeout=900)
        if c.rc != 0:
            raise RemoteError("pip could not install the drivers on the host: "
                              + c.stderr.decode("utf-8", "replace").strip()[-300:])
        log("trying mysqlclient (faster; needs a compiler and MySQL client headers)")
        c = self.t.run(pip + [self.DRIVERS["MySQLdb"]], check=False, timeout=900)
        if c.rc != 0:
            log("mysqlclient could not be built there; PyMySQL will be used")
        self.python = self.venv_python
        return self.venv_python

    def deploy(self) -> bool:
        """Upload the agent unless this exact version is already there; True if uploaded."""
        marker = posixpath.join(self.agent_dir, ".complete")
        if self.t.exists(marker):
            return False
        for d in (self.root, posixpath.dirname(self.agent_dir), self.agent_dir, self.runs_root):
            self.t.mkdir_p(d, 0o700)
        for name, data in agent_files():
            path = posixpath.join(self.agent_dir, name)
            self.t.mkdir_p(posixpath.dirname(path), 0o700)
            self.t.put_bytes(data, path, 0o600)
        self.t.put_bytes(agent_digest().encode(), marker, 0o600)
        return True

    def _argv(self, *args: str) -> list[str]:
        return ["env", f"PYTHONPATH={self.agent_dir}", self.python, "-m", "workloads.agent", *args]

    def run_dir(self, run_id: str) -> str:
        return posixpath.join(self.runs_root, run_id)

    def check_python(self) -> None:
        c = self.t.run([self.python, "-c", "import sys; print(sys.version_info >= (3, 9))"],
                       check=False, timeout=30)
        if c.rc != 0 or c.stdout.strip() != b"True":
            raise RemoteError(f"the host has no usable Python 3.9+ at {self.python!r}; install "
                              f"python3 there or set the host's Python in its settings")

    def start(self, run_id: str, spec: dict, password: str) -> int:
        rundir = self.run_dir(run_id)
        self.t.mkdir_p(self.runs_root, 0o700)
        self.t.mkdir_p(rundir, 0o700)
        self.t.put_bytes(json.dumps(spec).encode(), posixpath.join(rundir, "spec.json"), 0o600)
        if password:
            # only the agent's user can read it; the agent removes it as it starts
            self.t.put_bytes(password.encode(), posixpath.join(rundir, "secret"), 0o600)
        c = self.t.run(self._argv("start", "--dir", rundir), timeout=60, check=False)
        if c.rc != 0:
            err = c.stderr.decode("utf-8", "replace").strip()
            if "No module named" in err:
                raise RemoteError(f"the agent could not start on the host: {err.splitlines()[-1]}"
                                  f" (prepare the host so its Python has the database drivers)")
            raise CommandFailed(["versus-agent start"], c.rc, err)
        return int(c.stdout.strip() or 0)

    def follow(self, run_id: str, from_seq: int) -> Stream:
        return self.t.stream(self._argv("follow", "--dir", self.run_dir(run_id),
                                        "--from-seq", str(from_seq)))

    def stop(self, run_id: str, wait: float = 0.0) -> None:
        self.t.run(self._argv("stop", "--dir", self.run_dir(run_id), "--wait", str(wait)),
                   timeout=wait + 30, check=False)

    def status(self) -> list[dict]:
        c = self.t.run(self._argv("status", "--root", self.runs_root), timeout=30)
        return json.loads(c.stdout or b"{}").get("runs", [])

    def check_target(self, target_spec: dict, password: str) -> str:
        payload = (json.dumps(target_spec) + "\n" + (password or "") + "\n").encode()
        c = self.t.run(self._argv("check"), stdin=payload, timeout=60, check=False)
        try:
            out = json.loads(c.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RemoteError("the agent could not check the target: "
                              + c.stderr.decode("utf-8", "replace").strip()[-300:]) from None
        if not out.get("ok"):
            raise RemoteError(out.get("error", "the target check failed"))
        return out["version"]

    def check_tpcc(self, target_spec: dict, password: str) -> dict:
        """The TPC-C consistency conditions on a target, run by the agent on the host:
        {'ok', 'schema', 'conditions': [...]}; RemoteError when it could not check."""
        payload = (json.dumps(target_spec) + "\n" + (password or "") + "\n").encode()
        c = self.t.run(self._argv("check-tpcc"), stdin=payload, timeout=3600, check=False)
        try:
            out = json.loads(c.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RemoteError("the agent could not run the consistency check: "
                              + c.stderr.decode("utf-8", "replace").strip()[-300:]) from None
        if "error" in out:
            raise RemoteError(out["error"])
        return out

    def apply_profile(self, target_spec: dict, password: str, config: str,
                      clients: int | None = None, restart_command: str | None = None,
                      restart: bool = False) -> dict:
        """Apply a profile to a running server through the agent (workloads.profile_apply):
        {'applied', 'needs_restart', 'rejected', 'restarted', 'persisted', 'notes', …}.
        The restart command is the user's own and runs on the host only with restart=True;
        the password goes on stdin, never into the command."""
        req = {"target": target_spec, "config": config, "clients": clients,
               "restart_command": restart_command or "", "restart": bool(restart)}
        payload = (json.dumps(req) + "\n" + (password or "") + "\n").encode()
        c = self.t.run(self._argv("apply-profile"), stdin=payload, timeout=900, check=False)
        try:
            out = json.loads(c.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RemoteError("the agent could not apply the profile: "
                              + c.stderr.decode("utf-8", "replace").strip()[-300:]) from None
        if not out.get("ok"):
            raise RemoteError(out.get("error", "applying the profile failed"))
        return out
