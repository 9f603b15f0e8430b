"""Run a workload on a host and record it: the one path used by the CLI and the GUI.

The run is validated before anything starts, the agent is deployed and started detached,
and its spool is followed from the last stored sequence number; when the link drops the
controller reconnects and resumes, so every event is stored exactly once.
"""
from __future__ import annotations

import os
import secrets as _random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

from app.model.config import EMBEDDED_TARGET, LOCAL_HOST, HostConfig, TargetConfig
from app.store import paths
from app.store.session import SessionError, SessionFile
from workloads.registry import get as get_workload

from .agentctl import AgentControl
from .errors import ChannelLost, RemoteError, Unreachable
from .follow import GiveUp, RunFollower, agent_python
from .hosts import open_transport, resolve_host


class TargetError(RemoteError):
    pass


@dataclass
class RunRequest:
    host: str = LOCAL_HOST
    target: str = EMBEDDED_TARGET
    workload: str = "point-query"
    params: dict[str, Any] = field(default_factory=dict)
    session_path: Path | None = None
    accept_host_key: str | None = None
    ssh_key: str | None = None
    # perf on the server's processes: {"stat": bool (default: the workload's perf_stat), "profile_s": seconds of
    # `perf record -g` at the start of each measured phase (0: none), "call_graph": dwarf|fp}
    perf: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunOutcome:
    run_id: str
    status: str             # ok | stopped | failed
    reason: str
    session_path: Path
    events: int = 0
    last_seq: int = 0
    skipped_lines: int = 0


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + _random.token_hex(3)


def resolve_target(spec: str, catalog=None) -> TargetConfig:
    """A saved target's name, `embedded-postgres`, or a postgresql:// / mysql:// URL."""
    spec = (spec or EMBEDDED_TARGET).strip()
    if spec == EMBEDDED_TARGET:
        from app.model.config import BUILTIN_TARGET
        return TargetConfig(**BUILTIN_TARGET.to_dict())
    if "://" not in spec:
        saved = catalog.target(spec) if catalog is not None else None
        if saved is None:
            raise TargetError(f"unknown target {spec!r}: use a saved target's name, "
                              f"'embedded-postgres', or a URL such as "
                              f"postgresql://user@127.0.0.1:5432/db")
        return saved
    u = urlsplit(spec)
    schemes = {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql",
               "mariadb": "mariadb"}
    if u.scheme not in schemes:
        raise TargetError(f"unknown URL scheme {u.scheme!r}: use postgresql:// or mysql://")
    if u.password:
        raise TargetError("do not put the password in the target URL (it would show in process "
                          "lists and shell history); store it in the keyring or set "
                          "VERSUS_DB_PASSWORD")
    engine = schemes[u.scheme]
    from app.model.config import DEFAULT_PORTS, address_problem, port_problem
    try:
        port = u.port
    except ValueError:
        port_text = u.netloc.rpartition("@")[2].rpartition(":")[2]
        raise TargetError(f"the port in {spec!r}: {port_problem(port_text) or 'not a number'}") \
            from None
    problem = (address_problem(u.hostname) if u.hostname else "") or \
        (port_problem(port) if port is not None else "")
    if problem:
        raise TargetError(f"target {spec!r}: {problem}")
    return TargetConfig(name=spec, engine=engine, address=u.hostname or "127.0.0.1",
                        port=port or DEFAULT_PORTS[engine], user=unquote(u.username or ""),
                        database=unquote(u.path.lstrip("/")))


def target_password(target: TargetConfig) -> str:
    env = os.environ.get("VERSUS_DB_PASSWORD")
    if env is not None:
        return env
    if target.is_embedded or "://" in target.name:
        return ""
    from .secrets import get_secret
    return get_secret("target", target.name) or ""


def _embedded_target(host: HostConfig) -> TargetConfig:
    if not host.is_local:
        raise TargetError("the embedded PostgreSQL runs on this computer; choose host 'local' "
                          "or a target on the remote host")
    from .embedded import shared
    url = shared().start()
    u = urlsplit(url)
    return TargetConfig(name=EMBEDDED_TARGET, engine="postgres", address=u.hostname,
                        port=u.port, user=u.username or "postgres",
                        database=u.path.lstrip("/") or "versus")


def check_target(catalog, host_name: str, target_name: "str | TargetConfig",
                 accept_fingerprint: str | None = None, password: str | None = None) -> str:
    """Connect from the host to the target and return the server's version string.
    A TargetConfig (for example an unsaved draft) may stand in for a saved name."""
    host = resolve_host(host_name, catalog)
    target = target_name if isinstance(target_name, TargetConfig) else \
        resolve_target(target_name, catalog)
    if target.is_embedded:
        target = _embedded_target(host)
    t = open_transport(host, accept_fingerprint)
    try:
        ctl = AgentControl(t, agent_python(host))
        ctl.deploy()
        return ctl.check_target(target.spec(),
                                password if password is not None else target_password(target))
    finally:
        t.close()


class RunController:
    """One run from validation to its end in the session file (CLI and GUI).

    run() raises only before the run is recorded and started (bad input, an unreachable host);
    from then on it returns a RunOutcome, and the run is closed in the session file whatever
    happens (a second Ctrl-C leaves it 'running' with a sentence saying how to attach)."""

    def __init__(self, request: RunRequest, catalog=None,
                 on_events: Callable[[str, list[dict]], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 reconnect_for: float = 600.0, frozen_after: float = 30.0):
        self.req = request
        self.catalog = catalog
        self.on_events = on_events or (lambda rid, evs: None)
        self.on_status = on_status or (lambda msg: None)
        self.reconnect_for = reconnect_for
        self.frozen_after = frozen_after
        self.run_id: str | None = None
        self.session_path: Path | None = None
        self._stop = threading.Event()
        self._started = threading.Event()
        self._follower: RunFollower | None = None
        self._transport = None

    # --- control from any thread ----------------------------------------------------------
    def stop(self) -> None:
        """Ask the agent to end the run; never blocks the caller. Before the agent has
        started, the stop is sent as soon as it has."""
        self._stop.set()
        f = self._follower
        if f is not None and self._started.is_set():
            f.request_stop()

    def drop_link(self) -> None:
        """Close the current connection as a network failure would (used by tests and the UI's
        'reconnect' action); the run continues on the host and the controller resumes."""
        f = self._follower
        if f is not None:
            f.drop_link()
        elif self._transport is not None:
            self._transport.close()

    # --- the run ------------------------------------------------------------------------
    def run(self) -> RunOutcome:
        """Blocking. Raises before the run is recorded (bad input, unreachable host);
        afterwards returns the outcome, with everything received stored."""
        req = self.req
        spec = get_workload(req.workload)
        params = spec.resolve(req.params)          # validates before acting
        host = resolve_host(req.host, self.catalog)
        if req.ssh_key:
            host = HostConfig(**{**host.to_dict(), "auth": "key", "key_file": req.ssh_key})
        target = resolve_target(req.target, self.catalog)
        if not host.is_local and target.is_embedded:
            raise TargetError("the embedded PostgreSQL runs on this computer; choose host "
                              "'local' or a target on the remote host")
        if target.engine == "postgres" and "postgres" not in spec.dialects or \
                target.engine != "postgres" and "mysql" not in spec.dialects:
            raise TargetError(f"workload {spec.name} does not support {target.engine}")
        session_path = Path(req.session_path) if req.session_path else \
            paths.sessions_dir() / f"{time.strftime('%Y-%m-%d_%H%M%S')}-{spec.name}.versus"
        problem = paths.new_file_problem(session_path)
        if problem:
            raise SessionError(problem)
        self.session_path = session_path
        if session_path.exists():
            SessionFile(session_path).close()        # refuses a damaged file before acting
        self.on_status(f"connecting to {host.title}")
        t = open_transport(host, req.accept_host_key, key_file=req.ssh_key)
        self._transport = t
        try:
            if target.is_embedded:
                self.on_status("starting the embedded PostgreSQL")
                target = _embedded_target(host)
            ctl = AgentControl(t, agent_python(host))
            ctl.check_python()
            needed = "psycopg" if target.engine == "postgres" else "pymysql"
            if needed in ctl.missing_drivers():
                raise TargetError(
                    f"the host's Python ({ctl.python}) has no {target.engine} driver; prepare "
                    f"the host ('versus host prepare {req.host}' or Prepare in the Hosts "
                    f"list) or install it there (Debian: python3-psycopg, python3-pymysql)")
            if ctl.deploy():
                self.on_status("uploaded the agent to the host")
            if spec.probe:              # an external tool: installed, and knows the test?
                ctl.probe(spec.name, params)
            run_id = new_run_id()
            session = SessionFile(session_path, readonly=False)
        except BaseException:
            t.close()
            raise
        follower = RunFollower(host, run_id, ctl=ctl, ssh_key=req.ssh_key,
                               on_events=self.on_events, on_status=self.on_status,
                               reconnect_for=self.reconnect_for, frozen_after=self.frozen_after,
                               session_path=session_path)
        try:
            session.add_run(run_id, spec.name, req.target or EMBEDDED_TARGET,
                            req.host or LOCAL_HOST, params,
                            info={"target_spec": target.spec(), "host": host.to_dict(),
                                  "throughput_unit": spec.throughput_unit})
            # from here on the run exists: every ending closes it in the session file
            self.run_id, self._follower = run_id, follower
            try:
                agent_spec = {"run_id": run_id, "workload": spec.name, "params": params,
                              "target": target.spec()}
                if req.perf:
                    agent_spec["perf"] = dict(req.perf)
                pid = self._start(follower, run_id, agent_spec, target_password(target))
            except _StartFailed as exc:
                session.finish_run(run_id, "failed", str(exc))
                return self._outcome(session, session_path, run_id, "failed", str(exc), 0)
            except KeyboardInterrupt:
                session.finish_run(run_id, "failed", "interrupted while starting on the host; "
                                   "it may have started there: 'versus host clean' or "
                                   f"'versus attach {session_path}'")
                raise
            self._started.set()
            self.on_status(f"run {run_id} started on {host.title}"
                           + (f" (agent pid {pid})" if pid else ""))
            if self._stop.is_set():
                follower.request_stop()
            try:
                res = follower.follow(session)
            except KeyboardInterrupt:    # a second Ctrl-C: leave the run going on the host
                session.finish_run(run_id, "running",
                                   f"left running on {host.title}; everything up to event "
                                   f"{session.last_seq(run_id)} is saved; 'versus attach "
                                   f"{session_path}' brings in the rest")
                raise
            return self._outcome(session, session_path, run_id, res.status, res.reason,
                                 res.skipped)
        finally:
            follower.close()
            t.close()
            session.close()

    def _start(self, follower: RunFollower, run_id: str, agent_spec: dict,
               password: str) -> int:
        """Start the agent; a dropped link on the way is reconnected and the start repeated
        (the agent starts at most once per run folder)."""
        lost_since = None
        while True:
            try:
                return follower.ctl.start(run_id, agent_spec, password)
            except (ChannelLost, Unreachable, EOFError) as exc:
                if follower.host.is_local:
                    raise _StartFailed(f"the agent could not start: {exc}") from None
                lost_since = lost_since or time.monotonic()
                try:
                    follower.reconnect(str(exc), lost_since)
                except GiveUp as give_up:
                    raise _StartFailed(f"{give_up} (while starting the run)") from None
            except (RemoteError, OSError) as exc:
                raise _StartFailed(f"the agent could not start on the host: {exc}") from None

    @staticmethod
    def _outcome(session: SessionFile, session_path: Path, run_id: str, status: str,
                 reason: str, skipped: int) -> RunOutcome:
        rec = {r.id: r for r in session.runs()}.get(run_id)
        return RunOutcome(run_id, status, reason, session_path,
                          events=rec.events if rec else 0, last_seq=rec.last_seq if rec else 0,
                          skipped_lines=skipped)


class _StartFailed(Exception):
    """The run was recorded but its agent could not be started; str() is the reason."""
