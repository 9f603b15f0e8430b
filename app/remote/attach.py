"""Reattach: bring into a session file the rest of runs it does not have to the end.

After the app was killed, the laptop slept past the reconnect window or the user left a run
going (a second Ctrl-C), the session holds the run up to some event while the host's spool
has it all. Attaching follows each such run from the last stored event with the same
RunFollower as a live run, so the rest arrives exactly once.
"""
from __future__ import annotations

import posixpath
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.model.config import LOCAL_HOST, HostConfig
from app.store import paths
from app.store.session import RunRecord, SessionError, SessionFile

from .agentctl import AgentControl
from .errors import RemoteError
from .follow import PERMANENT, FollowResult, RunFollower, agent_python, open_runs
from .hosts import resolve_host


@dataclass
class OpenRun:
    """A run a session file does not have to its end."""
    session_path: Path
    run: RunRecord

    @property
    def plan_id(self) -> str:
        return (self.run.info.get("plan") or {}).get("id", "")

    def describe(self) -> str:
        r = self.run
        where = "this computer" if r.host == LOCAL_HOST else r.host
        return (f"run {r.id}  {r.workload} on {r.target} via {where}: {r.events} events "
                f"stored in {self.session_path.name} [{r.status}]")


@dataclass
class Attached:
    open: OpenRun
    result: FollowResult | None = None
    error: str = ""                  # why it could not be attached; the run is left as it was
    events_before: int = 0
    events_after: int = 0

    @property
    def status(self) -> str:
        return self.result.status if self.result else "failed"

    @property
    def reason(self) -> str:
        return self.error or (self.result.reason if self.result else "")


def find_open_runs(session_paths: list[Path], host: str | None = None) -> list[OpenRun]:
    """Open runs of these session files (on `host` only, when given). A file that cannot be
    read raises SessionError."""
    out = []
    for p in session_paths:
        with SessionFile(p) as s:
            out += [OpenRun(Path(p), r) for r in open_runs(s) if host in (None, r.host)]
    return out


def find_open_runs_in_folder(host: str | None = None) -> tuple[list[OpenRun], list[str]]:
    """Open runs in the session files of the sessions folder, and sentences for the files
    that could not be read (they are skipped)."""
    runs, problems = [], []
    for p in paths.list_sessions():
        try:
            runs += find_open_runs([p], host)
        except SessionError as exc:
            problems.append(str(exc))
    return runs, problems


def host_of(rec: RunRecord, catalog=None) -> HostConfig:
    """The host a run was started on: the saved host of that name (its current settings),
    else the settings recorded with the run, else the name as an address."""
    if rec.host != LOCAL_HOST and catalog is not None:
        saved = catalog.host(rec.host)
        if saved is not None:
            return saved
    recorded = rec.info.get("host")
    if isinstance(recorded, dict) and recorded.get("name"):
        return HostConfig.from_dict(recorded)
    return resolve_host(rec.host, catalog)


class Attacher:
    """Brings the rest of open runs into their session files, one run after another."""

    def __init__(self, catalog=None, on_events: Callable[[str, list[dict]], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 accept_host_key: str | None = None, ssh_key: str | None = None,
                 reconnect_for: float = 600.0, frozen_after: float = 30.0):
        self.catalog = catalog
        self.on_events = on_events or (lambda rid, evs: None)
        self.on_status = on_status or (lambda msg: None)
        self.accept_host_key, self.ssh_key = accept_host_key, ssh_key
        self.reconnect_for, self.frozen_after = reconnect_for, frozen_after
        self._leave = threading.Event()
        self._follower: RunFollower | None = None

    def leave(self) -> None:
        """Stop bringing runs in; they go on on their hosts (attach again later)."""
        self._leave.set()
        f = self._follower
        if f is not None:
            f.leave()

    def attach(self, runs: list[OpenRun]) -> list[Attached]:
        out = []
        for o in runs:
            if self._leave.is_set():
                break
            out.append(self._attach_one(o))
        return out

    def _attach_one(self, o: OpenRun) -> Attached:
        a = Attached(o, events_before=o.run.events)
        if o.plan_id:
            a.error = (f"run {o.run.id} belongs to plan {o.plan_id}: 'versus plan attach "
                       f"{o.plan_id} --host {o.run.host} --out {o.session_path}' brings it in "
                       f"with the rest of the plan")
            return a
        try:
            host = host_of(o.run, self.catalog)
        except RemoteError as exc:
            a.error = str(exc)
            return a
        follower = RunFollower(host, o.run.id, python=agent_python(host), ssh_key=self.ssh_key,
                               accept_host_key=self.accept_host_key, on_events=self.on_events,
                               on_status=self.on_status, reconnect_for=self.reconnect_for,
                               frozen_after=self.frozen_after, session_path=o.session_path)
        try:
            self.on_status(f"connecting to {host.title}")
            try:
                ctl = follower.connect()
                ctl.deploy()           # this Versus's agent (its follow) may not be there yet
                spool = posixpath.join(ctl.run_dir(o.run.id), "events.jsonl")
                if not ctl.t.exists(spool):
                    a.error = (f"{host.title} has no events of run {o.run.id} (no "
                               f"{spool}); its folder was removed or this is not the host it "
                               f"ran on. The run stays as it is in {o.session_path.name}")
                    return a
            except PERMANENT as exc:
                a.error = str(exc)
                return a
            except (RemoteError, OSError, EOFError) as exc:
                a.error = f"could not reach the run's host: {exc}"
                return a
            self._follower = follower
            session = SessionFile(o.session_path, readonly=False)
            try:
                self.on_status(f"bringing in run {o.run.id} from event {o.run.last_seq + 1}")
                a.result = follower.follow(session)
                a.events_after = session.run(o.run.id).events
            finally:
                session.close()
        finally:
            self._follower = None
            follower.close()
        return a


def host_runs_not_in(host: str, known_ids: set[str], catalog=None,
                     accept_host_key: str | None = None, ssh_key: str | None = None
                     ) -> list[dict]:
    """Runs on a host (agent status: run_id, state) that none of `known_ids` names."""
    from .hosts import open_transport
    h = resolve_host(host, catalog)
    t = open_transport(h, accept_host_key, key_file=ssh_key)
    try:
        ctl = AgentControl(t, agent_python(h))
        ctl.deploy()
        return [r for r in ctl.status() if r["run_id"] not in known_ids]
    finally:
        t.close()


__all__ = ["Attached", "Attacher", "OpenRun", "find_open_runs", "find_open_runs_in_folder",
           "host_of", "host_runs_not_in"]
