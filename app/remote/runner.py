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
from app.store.session import SessionFile
from workloads import events as ev_format
from workloads.registry import get as get_workload

from .agentctl import AgentControl
from .errors import ChannelLost, RemoteError, UnknownHostKey, HostKeyMismatch, AuthFailed
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
    try:
        port = u.port
    except ValueError:
        raise TargetError(f"the port in {spec!r} is not a number") from None
    from app.model.config import DEFAULT_PORTS
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


def agent_python(host: HostConfig) -> str:
    import sys
    return sys.executable if host.is_local else (host.python or "python3")


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
    def __init__(self, request: RunRequest, catalog=None,
                 on_events: Callable[[str, list[dict]], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 reconnect_for: float = 600.0):
        self.req = request
        self.catalog = catalog
        self.on_events = on_events or (lambda rid, evs: None)
        self.on_status = on_status or (lambda msg: None)
        self.reconnect_for = reconnect_for
        self.run_id: str | None = None
        self._stop = threading.Event()
        self._stop_sent = threading.Event()
        self._ctl: AgentControl | None = None
        self._transport = None
        self._lock = threading.Lock()

    # --- control from any thread ----------------------------------------------------------
    def stop(self) -> None:
        """Ask the agent to end the run; never blocks the caller."""
        self._stop.set()
        threading.Thread(target=self._send_stop, daemon=True, name="versus-stop").start()

    def _send_stop(self) -> None:
        with self._lock:
            ctl, rid = self._ctl, self.run_id
        if ctl is None or rid is None or self._stop_sent.is_set():
            return
        try:
            ctl.stop(rid)
            self._stop_sent.set()
        except (RemoteError, OSError):
            pass  # the follow loop resends after it reconnects

    def drop_link(self) -> None:
        """Close the current connection as a network failure would (used by tests and the UI's
        'reconnect' action); the run continues on the host and the controller resumes."""
        t = self._transport
        if t is not None:
            t.close()

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
            run_id = new_run_id()
            with self._lock:
                self._ctl, self.run_id = ctl, run_id
            session = SessionFile(session_path, readonly=False)
            try:
                session.add_run(run_id, spec.name, req.target or EMBEDDED_TARGET,
                                req.host or LOCAL_HOST, params,
                                info={"target_spec": target.spec(), "host": host.to_dict(),
                                      "throughput_unit": spec.throughput_unit})
                agent_spec = {"run_id": run_id, "workload": spec.name, "params": params,
                              "target": target.spec()}
                try:
                    pid = ctl.start(run_id, agent_spec, target_password(target))
                except (RemoteError, OSError) as exc:
                    session.finish_run(run_id, "failed", str(exc))
                    raise
                self.on_status(f"run {run_id} started on {host.title} (agent pid {pid})")
                if self._stop.is_set():
                    self._send_stop()
                return self._follow(session, session_path, host, run_id)
            finally:
                session.close()
        finally:
            if self._transport is not None:
                self._transport.close()

    def _follow(self, session: SessionFile, session_path: Path, host: HostConfig,
                run_id: str) -> RunOutcome:
        last_seq = session.last_seq(run_id)
        status, reason = "failed", ""
        skipped: list[str] = []
        lost_since: float | None = None
        attempt = 0
        while True:
            try:
                stream = self._ctl.follow(run_id, last_seq + 1)
                if lost_since is not None:
                    self.on_status(f"reconnected; resuming from event {last_seq + 1}")
                    lost_since, attempt = None, 0
                    if self._stop.is_set() and not self._stop_sent.is_set():
                        self._send_stop()
                splitter = ev_format.LineSplitter()
                ended = None
                try:
                    for chunk in stream.chunks():
                        batch = []
                        for line in splitter.feed(chunk):
                            try:
                                e = ev_format.decode(line)
                            except ev_format.EventFormatError as exc:
                                if "newer" in str(exc) or "understands up to" in str(exc):
                                    raise RemoteError(str(exc)) from None
                                skipped.append(str(exc))
                                self.on_status(f"skipped a line that is not an event: {exc}")
                                continue
                            if e["seq"] <= last_seq:
                                continue
                            batch.append(e)
                            last_seq = e["seq"]
                            if e["kind"] == "end":
                                ended = e
                        if batch:
                            session.append_events(run_id, batch)
                            self.on_events(run_id, batch)
                        if ended:
                            break
                finally:
                    stream.close()
                if ended:
                    status, reason = ended.get("status", "failed"), ended.get("reason", "")
                    break
                rc = stream.exit_status()
                if rc == 3:
                    reason = ("the agent on the host ended without finishing the run; "
                              f"see {self._ctl.run_dir(run_id)}/agent.log on the host")
                    break
                if rc not in (None, -1) and self._transport.is_alive():
                    reason = f"following the run failed: {stream.stderr_text().strip()[-300:]}"
                    break
                raise ChannelLost("the event stream ended early")
            except (ChannelLost, OSError, EOFError) as exc:
                if host.is_local and not isinstance(exc, ChannelLost):
                    raise
                now = time.monotonic()
                lost_since = lost_since or now
                if now - lost_since > self.reconnect_for:
                    reason = (f"lost the connection to {host.title} and could not reconnect "
                              f"for {int(self.reconnect_for)} s; the run may still be going on the "
                              f"host; everything up to event {last_seq} is saved")
                    break
                attempt += 1
                delay = min(10.0, 0.5 * 2 ** min(attempt, 5))
                self.on_status(f"connection lost ({exc}); reconnecting in {delay:.0f} s "
                               f"(attempt {attempt})")
                time.sleep(delay)
                try:
                    t = open_transport(host, None, key_file=self.req.ssh_key)
                except (UnknownHostKey, HostKeyMismatch, AuthFailed) as exc2:
                    reason = f"cannot reconnect: {exc2}"
                    break
                except RemoteError:
                    continue
                old = self._transport
                self._transport = t
                if old is not None:
                    old.close()
                with self._lock:
                    self._ctl = AgentControl(t, self._ctl.python)
        if skipped and status == "ok":
            reason = (f"{len(skipped)} line(s) of the event stream were not events and were "
                      f"skipped (first: {skipped[0]})")
        session.finish_run(run_id, status, reason)
        recs = {r.id: r for r in session.runs()}
        rec = recs.get(run_id)
        return RunOutcome(run_id, status, reason, session_path,
                          events=rec.events if rec else 0, last_seq=rec.last_seq if rec else 0,
                          skipped_lines=len(skipped))
