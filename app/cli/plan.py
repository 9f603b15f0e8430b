"""The command line for plans, profiles and settings (hooked into app.cli's parser):

    versus plan run FILE [--host HOST] [--out SESSION] [--detach]
    versus plan show FILE [--host HOST]          # the runs it would make, checked, nothing run
    versus plan status [PLAN_ID] [--host HOST] [--json]
    versus plan attach PLAN_ID [--host HOST] --out SESSION
    versus plan skip PLAN_ID RUN_ID ... | cancel PLAN_ID | order PLAN_ID RUN_ID ...
    versus profile list [--engine E] | show REF [--engine E] [--render --clients N]
    versus profile apply REF --target TARGET [--host HOST] [--restart-command CMD [--restart]]
                                                 # ALTER SYSTEM / SET PERSIST / SET GLOBAL
    versus settings SESSION [RUN_ID ...] [--all] [--json]   # differences in effective settings

Exit codes as app.cli: 0 success, 1 a run of the plan failed, 2 bad input, 130 interrupted.
"""
from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path

from app.model.plan import PlanError, PlanState, parse_plan
from app.model.profile import ProfileError
from app.store.catalog import Catalog, CatalogError
from app.store.session import SessionError, SessionFile

from app.remote.errors import RemoteError


def _fail(msg: str, code: int = 2) -> int:
    print(f"versus: {msg}", file=sys.stderr)
    return code


def _load_plan(path: str):
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(f"cannot read the plan {p}: {exc.strerror or exc}") from None
    return parse_plan(text, str(p))


def _when(epoch: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch)) if epoch else "-"


def print_state(st: PlanState, out=sys.stdout) -> None:
    eta = st.estimated_finish(st.now or time.time())
    print(f"plan {st.plan_id} {st.name!r}: {st.state}"
          + (f", estimated finish {_when(eta)}" if eta else ""), file=out)
    for i, r in enumerate(st.runs, 1):
        dur = f"{r.ended - r.started:6.1f}s" if r.started and r.ended else " " * 7
        extra = f"  {r.reason.splitlines()[0][:160]}" if r.reason else ""
        print(f"  {i:>3}. {r.state:<8} {dur} {r.run_id}  {r.label}{extra}", file=out)


class _StatePrinter:
    def __init__(self, out):
        self.out, self.seen = out, {}

    def __call__(self, st: PlanState) -> None:
        for r in st.runs:
            before = self.seen.get(r.run_id)
            if before != r.state:
                self.seen[r.run_id] = r.state
                if before is not None or r.state != "waiting":
                    extra = f" ({r.reason.splitlines()[0][:200]})" if r.reason and \
                        r.state in ("failed", "skipped") else ""
                    print(f"         [{r.state}] {r.label}{extra}", file=self.out, flush=True)


def cmd_plan(a) -> int:
    from .console import Progress
    from app.remote.plans import PlanController, list_plans
    catalog = Catalog()
    out = sys.stderr if getattr(a, "json", False) else sys.stdout

    def controller(plan, host: str) -> PlanController:
        return PlanController(plan, catalog, host,
                              session_path=Path(a.out) if getattr(a, "out", None) else None,
                              on_events=Progress(out, None),
                              on_status=lambda m: print(f"         {m}", file=out, flush=True),
                              on_state=_StatePrinter(out), accept_host_key=a.accept_host_key,
                              ssh_key=a.ssh_key)

    try:
        if a.action in ("run", "show"):
            plan = _load_plan(a.file)
            ctl = controller(plan, a.host or plan.host or "local")
            try:
                prepared = ctl.prepare()
                if a.action == "show":
                    for r in prepared:
                        print(f"{r.index + 1:>3}. {r.label:<50} {r.engine} {r.version}  "
                              f"{r.planned_s:.0f} s", file=out)
                    return 0
                ctl.start()
                if a.detach:
                    print(ctl.plan_id)
                    return 0
                return _follow(ctl, out, a)
            finally:
                ctl.close()
        if a.action == "status":
            if not a.plan_id:
                plans = list_plans(a.host or "local", catalog, a.accept_host_key, a.ssh_key)
                if a.json:
                    print(json.dumps(plans, indent=2))
                else:
                    for p in plans:
                        counts = ", ".join(f"{v} {k}" for k, v in p["runs"].items())
                        print(f"{p['plan_id']}  {p['state']:<9} {p['name']}  ({counts})")
                return 0
            ctl = PlanController(None, catalog, a.host or "local",
                                 accept_host_key=a.accept_host_key, ssh_key=a.ssh_key,
                                 reconnect_for=0)
            try:
                st = ctl.status(a.plan_id)
            finally:
                ctl.close()
            if a.json:
                print(json.dumps(st, indent=2))
            else:
                print_state(PlanState.from_json(st))
            return 0
        ctl = controller(None, a.host or "local")
        try:
            ctl.plan_id = a.plan_id
            if a.action == "attach":
                return _follow(ctl, out, a)
            if a.action == "skip":
                ctl.skip(a.run_ids)
            elif a.action == "cancel":
                ctl.cancel()
            elif a.action == "order":
                ctl.reorder(a.run_ids)
            return 0
        finally:
            ctl.close()
    except (PlanError, ProfileError, CatalogError, SessionError, RemoteError) as exc:
        return _fail(str(exc))


def _follow(ctl, out, a) -> int:
    stopping = threading.Event()

    def on_sigint(*_):
        if stopping.is_set():
            raise KeyboardInterrupt
        stopping.set()
        print("         leaving the plan running on the host (attach again with "
              f"'versus plan attach {ctl.plan_id}'; Ctrl-C again to quit now)",
              file=out, flush=True)
        ctl.stop_following()

    signal.signal(signal.SIGINT, on_sigint)
    try:
        outcome = ctl.follow()
        st = PlanState.from_json(ctl.status())
    except KeyboardInterrupt:
        return _fail("left the plan going on the host", 130)
    except (PlanError, SessionError, RemoteError) as exc:
        if a.action == "attach" and not ctl.following:
            raise                        # nothing was followed: bad input, said by the caller
        # the plan started (or was followed): it goes on on the host; not bad input
        return _fail(f"{exc} (the plan goes on on the host: 'versus plan attach "
                     f"{ctl.plan_id}')", 1)
    print_state(st, out)
    print(f"         session saved: {outcome.session_path} (plan {outcome.plan_id})", file=out)
    if getattr(a, "json", False):
        print(json.dumps({"plan_id": outcome.plan_id, "state": outcome.state,
                          "session": str(outcome.session_path), "runs": outcome.runs,
                          "reasons": outcome.reasons}, indent=2))
    if outcome.state == "detached":
        return 130
    if any(v == "failed" for v in outcome.runs.values()) or outcome.state in ("failed", "died"):
        return 1
    return 0


def cmd_profile(a) -> int:
    from app.store.profiles import broken_profiles, list_profiles, load_profile
    from workloads.profiles import ProfileError as RenderError, host_context, render
    try:
        if a.action == "list":
            for p in list_profiles(a.engine):
                durable = "" if p.durable is None else ("durable" if p.durable else "no fsync")
                print(f"{p.id:<32} {p.versions or 'all':<10} {durable:<9} {p.description}")
            for path, why in broken_profiles():
                print(f"versus: skipped {why}", file=sys.stderr)
            return 0
        p = load_profile(a.ref, a.engine)
        if a.action == "apply":
            return _apply_profile(p, a)
        if a.render:
            ctx = host_context(a.clients)
            print(render(p.config, ctx), end="")
        else:
            print(f"# {p.id} ({p.path})\n# versions {p.versions or 'all'}: {p.description}")
            print(p.config, end="")
        return 0
    except (ProfileError, RenderError, CatalogError, RemoteError) as exc:
        return _fail(str(exc))


def _apply_profile(p, a) -> int:
    from app.remote.profile_check import apply_profile_on_target
    if a.restart and not a.restart_command:
        return _fail("--restart runs the command given with --restart-command; give one")
    out = apply_profile_on_target(p, a.target, Catalog(), a.host, a.clients or 16,
                                  a.restart_command, a.restart, a.accept_host_key)
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{p.id} on {a.target} ({out.get('version', '')})")
        if out["applied"]:
            print("applied:       " + ", ".join(out["applied"]))
        if out["needs_restart"]:
            print("needs restart: " + ", ".join(out["needs_restart"]))
        for r in out["rejected"]:
            print(f"rejected:      {r['name']} = {r.get('value')}: {r['error']}")
        for note in out.get("notes", []):
            print(f"note: {note}")
        if a.restart:
            print("restarted" if out["restarted"] else
                  f"restart failed: {out.get('restart_output', '')}")
    if a.restart and not out["restarted"]:
        return 1
    return 1 if out["rejected"] else 0


def cmd_settings(a) -> int:
    from app.analysis.settings_diff import diff_settings, format_diff, session_reports
    try:
        with SessionFile(a.file) as s:
            runs = s.runs()
            ids = a.run_ids or [r.id for r in runs]
            known = {r.id: r for r in runs}
            for rid in ids:
                if rid not in known:
                    return _fail(f"{a.file} has no run {rid!r}")
            reports = session_reports(s, ids)
    except SessionError as exc:
        return _fail(str(exc))
    missing = [rid for rid, r in reports.items() if r is None]
    diffs = diff_settings(reports, include_instance=a.all)
    if a.json:
        print(json.dumps({"runs": ids, "without_settings": missing,
                          "differences": [{"name": d.name, "values": d.values,
                                           "origins": d.origins} for d in diffs]}, indent=2))
        return 0
    if missing:
        print(f"(no settings recorded for {', '.join(missing)})")
    labels = {rid: f"{known[rid].target} {rid[-6:]}" for rid in ids}
    print(format_diff(diffs, labels))
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("plan", help="plans: many runs one after another on one host")
    ps = p.add_subparsers(dest="action", required=True)

    def common(sp):
        sp.add_argument("--host", help="local, [user@]address[:port] or a saved host "
                                       "(default: the plan's host, else local)")
        sp.add_argument("--ssh-key", metavar="FILE")
        sp.add_argument("--accept-host-key", metavar="SHA256:...")
        return sp

    r = common(ps.add_parser("run", help="start a plan on its host and follow it into a session"))
    r.add_argument("file")
    r.add_argument("--out", metavar="SESSION", help="session file (appended to if it exists)")
    r.add_argument("--detach", action="store_true",
                   help="start it and return (attach later with 'versus plan attach')")
    r.add_argument("--json", action="store_true")
    common(ps.add_parser("show", help="check a plan and list its runs; runs nothing")
           ).add_argument("file")
    st = common(ps.add_parser("status", help="plans on a host, or one plan's runs"))
    st.add_argument("plan_id", nargs="?")
    st.add_argument("--json", action="store_true")
    at = common(ps.add_parser("attach", help="follow a running plan into a session again"))
    at.add_argument("plan_id")
    at.add_argument("--out", metavar="SESSION")
    at.add_argument("--json", action="store_true")
    for name, help_ in (("skip", "skip runs (a running one is stopped cleanly)"),
                        ("order", "new order for the waiting runs")):
        sp = common(ps.add_parser(name, help=help_))
        sp.add_argument("plan_id")
        sp.add_argument("run_ids", nargs="+")
    common(ps.add_parser("cancel", help="stop the plan: the running run, and skip the rest")
           ).add_argument("plan_id")
    p.set_defaults(func=cmd_plan)

    pr = sub.add_parser("profile", help="server profiles: list, show, render")
    prs = pr.add_subparsers(dest="action", required=True)
    pl = prs.add_parser("list")
    pl.add_argument("--engine", choices=("postgres", "mysql", "mariadb"))
    sh = prs.add_parser("show")
    sh.add_argument("ref", help="engine/name, a name with --engine, or a .toml path")
    sh.add_argument("--engine", choices=("postgres", "mysql", "mariadb"))
    sh.add_argument("--render", action="store_true", help="render for this computer")
    sh.add_argument("--clients", type=int, default=None)
    ap = prs.add_parser("apply", help="apply a profile to a running server (ALTER SYSTEM, SET "
                                      "PERSIST or SET GLOBAL); lists what needs a restart")
    ap.add_argument("ref", help="engine/name, a name with --engine, or a .toml path")
    ap.add_argument("--engine", choices=("postgres", "mysql", "mariadb"))
    ap.add_argument("--target", required=True, help="a saved target")
    ap.add_argument("--host", help="the target's host (default: the target's own, else local)")
    ap.add_argument("--clients", type=int, default=None, help="for {{ clients }} in the profile")
    ap.add_argument("--restart-command", metavar="CMD",
                    help="your command that restarts the server, run by the host's shell")
    ap.add_argument("--restart", action="store_true",
                    help="run the restart command after applying")
    ap.add_argument("--accept-host-key", metavar="SHA256:...")
    ap.add_argument("--json", action="store_true")
    pr.set_defaults(func=cmd_profile)

    se = sub.add_parser("settings", help="differences in the effective server settings of runs")
    se.add_argument("file")
    se.add_argument("run_ids", nargs="*")
    se.add_argument("--all", action="store_true",
                    help="include per-instance settings (port, data directory, socket …)")
    se.add_argument("--json", action="store_true")
    se.set_defaults(func=cmd_settings)
