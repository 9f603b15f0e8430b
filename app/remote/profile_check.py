"""Check a profile against a running server: the host renders the profile for itself and asks
the server which names it lacks and which values it would refuse
(workloads.engine.servers.settings_check).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from app.model.profile import Profile, ProfileError
from app.store.profiles import check_config

from .agentctl import AgentControl
from .hosts import open_transport, resolve_host
from .runner import _embedded_target, agent_python, resolve_target, target_password


@dataclass
class SettingProblem:
    line: int                     # 1-based line of the profile's config text
    name: str
    value: str | None
    kind: str                     # unknown | rejected
    message: str


@dataclass
class ProfileCheck:
    target: str
    version: str
    checked: int                  # how many settings were looked at
    problems: list[SettingProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _family(engine: str) -> str:
    return "postgres" if engine == "postgres" else "mysql"


def _resolve(profile: Profile, target_name: str, catalog, host_name: str | None):
    """(target, host) for a profile that is valid and for the target's engine family."""
    check_config(profile)
    target = resolve_target(target_name, catalog)
    host = resolve_host(host_name or target.host or "local", catalog)
    if _family(profile.engine) != _family(target.engine):
        raise ProfileError(f"{profile.id} is a {profile.engine} profile and {target_name} is a "
                           f"{target.engine} server")
    return target, host


@contextmanager
def _agent(host, accept_fingerprint: str | None):
    """(transport, agent control) with the agent deployed on the host; closed after."""
    t = open_transport(host, accept_fingerprint)
    try:
        ctl = AgentControl(t, agent_python(host))
        ctl.deploy()
        yield t, ctl
    finally:
        t.close()


def check_profile_on_target(profile: Profile, target_name: str, catalog=None,
                            host_name: str | None = None, clients: int = 16,
                            accept_fingerprint: str | None = None) -> ProfileCheck:
    """Raises ProfileError (the profile itself is wrong, or is for another engine) or
    RemoteError (the host or the server cannot be reached), each with a sentence."""
    target, host = _resolve(profile, target_name, catalog, host_name)
    if target.is_embedded:
        target = _embedded_target(host)
    with _agent(host, accept_fingerprint) as (t, ctl):
        out = ctl.request(payload={"target": target.spec(), "engine": profile.engine,
                                   "config": profile.config, "clients": clients},
                          password=target_password(target),
                          module="workloads.engine.servers.settings_check",
                          timeout=120, ok_key="ok",
                          what="the host could not check the profile")
    return ProfileCheck(target_name, out.get("version", ""), int(out.get("checked", 0)),
                        [SettingProblem(int(p["line"]), p["name"], p.get("value"), p["kind"],
                                        p["message"]) for p in out.get("problems", [])])


def apply_profile_on_target(profile: Profile, target_name: str, catalog=None,
                            host_name: str | None = None, clients: int = 16,
                            restart_command: str | None = None, restart: bool = False,
                            accept_fingerprint: str | None = None) -> dict:
    """Apply the profile to a running server through the agent on its host (ALTER SYSTEM /
    SET PERSIST / SET GLOBAL, see workloads.engine.servers.profile_apply): the agent's report as
    a dict.
    Raises ProfileError or RemoteError, each with a sentence."""
    target, host = _resolve(profile, target_name, catalog, host_name)
    if target.is_embedded:
        raise ProfileError(f"{target_name} is a server Versus starts for each run: its profile "
                           f"is chosen in the run, not applied to it")
    with _agent(host, accept_fingerprint) as (_t, ctl):
        return ctl.apply_profile(target.spec(), target_password(target), profile.config,
                                 clients, restart_command, restart)
