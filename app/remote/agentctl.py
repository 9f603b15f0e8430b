"""Deploy the agent to a host (content-addressed, re-uploaded only when it changed) and
drive it: start a run, follow its event stream from a sequence number, stop, status."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import posixpath
from functools import lru_cache
from pathlib import Path

from .errors import CommandFailed, RemoteError
from .transport import LocalTransport, Stream, Transport

# the files shipped to the host, found without importing them
_PKG_ROOT = Path(importlib.util.find_spec("workloads").submodule_search_locations[0]).resolve()


@lru_cache(maxsize=1)
def agent_files() -> tuple[tuple[str, bytes], ...]:
    files = []
    for p in sorted(_PKG_ROOT.rglob("*")):
        # .c: the micro suite's compiled loop, built on the host (workloads/engine/loop/fastloop.c)
        if p.is_file() and p.suffix in (".py", ".sql", ".c") and "__pycache__" not in p.parts:
            files.append((f"workloads/{p.relative_to(_PKG_ROOT).as_posix()}", p.read_bytes()))
    return tuple(files)


def agent_digest() -> str:
    h = hashlib.sha256()
    for name, data in agent_files():
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:20]


def agent_root(transport: Transport) -> str:
    """Where Versus keeps its agent, runs, plans and managed servers on a host: ~/.versus; on
    this computer under VERSUS_HOME when that is set (nothing of a portable or test setup
    leaks into ~/.versus)."""
    home = os.environ.get("VERSUS_HOME")
    if home and isinstance(transport, LocalTransport):
        return str(Path(home).resolve() / "host")
    return posixpath.join(transport.home(), ".versus")


class AgentControl:
    """The agent on one host, reached through a Transport."""

    def __init__(self, transport: Transport, python: str = "python3"):
        self.t = transport
        self.root = agent_root(transport)
        self.agent_dir = posixpath.join(self.root, "agent", agent_digest())
        self.runs_root = posixpath.join(self.root, "runs")
        self.venv_python = posixpath.join(self.root, "venv", "bin", "python")
        # a host prepared by Versus runs the agent in its own virtual environment
        if python == "python3" and transport.exists(self.venv_python):
            python = self.venv_python
        self.python = python

    DRIVERS = {"psycopg": "psycopg[binary]>=3.2", "MySQLdb": "mysqlclient>=2.2",
               "pymysql": "PyMySQL>=1.1", "mariadb": "mariadb>=1.1"}

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
        log("trying MariaDB Connector/Python (server-side prepared statements, as sysbench "
            "uses them; needs a compiler and libmariadb-dev)")
        c = self.t.run(pip + [self.DRIVERS["mariadb"]], check=False, timeout=900)
        if c.rc != 0:
            log("MariaDB Connector/Python could not be built there; the micro suite uses "
                "MariaDB Connector/C (libmariadb3) where the host has it, else sends MySQL "
                "and MariaDB statements as text")
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

    def argv(self, *args: str, module: str = "workloads.agent") -> list[str]:
        """The command line that runs one of the agent's modules on the host."""
        # VERSUS_ROOT: where its folders are (under VERSUS_HOME on this computer)
        return ["env", f"PYTHONPATH={self.agent_dir}", f"VERSUS_ROOT={self.root}",
                self.python, "-m", module, *args]

    def request(self, *args: str, what: str, payload: dict | None = None,
                password: str | None = None, module: str = "workloads.agent",
                timeout: float = 60, ok_key: str | None = None) -> dict | list:
        """Run an agent command that answers with JSON on its last line of output.

        ``payload`` (and then ``password``) go on its standard input, one line each, never
        on its command line. Raises RemoteError saying ``what`` failed when there is no JSON
        answer, when the answer holds an ``error``, or when ``ok_key`` is given and false."""
        stdin = None
        if payload is not None:
            stdin = (json.dumps(payload) + "\n" + (password or "") + "\n").encode()
        c = self.t.run(self.argv(*args, module=module), stdin=stdin, timeout=timeout,
                       check=False)
        try:
            out = json.loads(c.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RemoteError(f"{what}: "
                              + c.stderr.decode("utf-8", "replace").strip()[-300:]) from None
        if isinstance(out, dict) and (out.get("error") or (ok_key and not out.get(ok_key))):
            raise RemoteError(out.get("error") or f"{what}: the agent said no")
        return out

    def run_dir(self, run_id: str) -> str:
        return posixpath.join(self.runs_root, run_id)

    def check_python(self) -> None:
        c = self.t.run([self.python, "-c", "import sys; print(sys.version_info >= (3, 9))"],
                       check=False, timeout=30)
        if c.rc != 0 or c.stdout.strip() != b"True":
            raise RemoteError(f"the host has no usable Python 3.9+ at {self.python!r}; install "
                              f"python3 there or set the host's Python in its settings")

    def start(self, run_id: str, spec: dict, password: str) -> int:
        """Start the run detached; safe to repeat after a dropped link: the agent starts at
        most once per run folder, and the password is not written again once it has."""
        rundir = self.run_dir(run_id)
        self.t.mkdir_p(self.runs_root, 0o700)
        self.t.mkdir_p(rundir, 0o700)
        if not self.t.exists(posixpath.join(rundir, "started")):
            self.t.put_bytes(json.dumps(spec).encode(), posixpath.join(rundir, "spec.json"),
                             0o600)
            if password:
                # only the agent's user can read it; the agent removes it as it starts
                self.t.put_bytes(password.encode(), posixpath.join(rundir, "secret"), 0o600)
        c = self.t.run(self.argv("start", "--dir", rundir), timeout=60, check=False)
        if c.rc != 0:
            err = c.stderr.decode("utf-8", "replace").strip()
            if "No module named" in err:
                raise RemoteError(f"the agent could not start on the host: {err.splitlines()[-1]}"
                                  f" (prepare the host so its Python has the database drivers)")
            raise CommandFailed(["versus-agent start"], c.rc, err)
        return int(c.stdout.strip() or 0)

    def follow(self, run_id: str, from_seq: int, idle_timeout: float | None = None) -> Stream:
        """The run's events from from_seq on; see workloads.agent.cmd_follow. The agent sends
        an empty line every few seconds, so idle_timeout can tell a frozen link."""
        return self.t.stream(self.argv("follow", "--dir", self.run_dir(run_id),
                                        "--from-seq", str(from_seq)), idle_timeout=idle_timeout)

    def clean(self, older_than_days: float, dry_run: bool, keep: list[str] = ()) -> dict:
        """Remove (or with dry_run, list) run and plan folders older than the given days;
        never a running one, nor those in `keep`. See workloads.agent.cmd_clean."""
        args = ["clean", "--root", self.root, "--older-than", str(older_than_days)]
        for run_id in keep:
            args += ["--keep", run_id]
        return self.request(*args, *(["--dry-run"] if dry_run else []), timeout=600,
                            what="could not clean the host's run folders")

    def stop(self, run_id: str, wait: float = 0.0) -> None:
        self.t.run(self.argv("stop", "--dir", self.run_dir(run_id), "--wait", str(wait)),
                   timeout=wait + 30, check=False)

    def status(self) -> list[dict]:
        return self.request("status", "--root", self.runs_root, timeout=30,
                            what="could not read the runs on the host").get("runs", [])

    def check_target(self, target_spec: dict, password: str) -> str:
        return self.request("check", payload=target_spec, password=password, ok_key="ok",
                            what="the agent could not check the target")["version"]

    def probe(self, workload: str, params: dict) -> None:
        """RemoteError with the host's sentence when it cannot run the workload with these
        parameters (an external tool missing, a test name the tool does not know)."""
        self.request("probe", "--workload", workload, payload=params, ok_key="ok",
                     what="the host could not be asked whether it can run " + workload)

    def check_workload(self, workload: str, target_spec: dict, password: str) -> dict:
        """A workload's consistency check on a target, run by the agent on the host:
        {'ok', 'lines': [...], …}; RemoteError when it could not check."""
        return self.request("check-workload", "--workload", workload, payload=target_spec,
                            password=password, timeout=3600,
                            what="the agent could not run the consistency check")

    def apply_profile(self, target_spec: dict, password: str, config: str,
                      clients: int | None = None, restart_command: str | None = None,
                      restart: bool = False) -> dict:
        """Apply a profile to a running server through the agent
        (workloads.engine.servers.profile_apply):
        {'applied', 'needs_restart', 'rejected', 'restarted', 'persisted', 'notes', …}.
        The restart command is the user's own and runs on the host only with restart=True;
        the password goes on stdin, never into the command."""
        req = {"target": target_spec, "config": config, "clients": clients,
               "restart_command": restart_command or "", "restart": bool(restart)}
        return self.request("apply-profile", payload=req, password=password, timeout=900,
                            ok_key="ok", what="the agent could not apply the profile")
