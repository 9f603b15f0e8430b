"""The command line for plans:

    versus plan run FILE [--host HOST] [--out SESSION] [--detach]
    versus plan show FILE [--host HOST]          # the runs it would make, checked, nothing run
    versus plan status [PLAN_ID] [--host HOST] [--json]
    versus plan attach PLAN_ID [--host HOST] --out SESSION
    versus plan skip PLAN_ID RUN_ID ... | cancel PLAN_ID | order PLAN_ID RUN_ID ...

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
from app.remote.errors import RemoteError
from app.store.catalog import Catalog, CatalogError
from app.store.session import SessionError

from .console import fail as _fail


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
    from app.remote.plans import PlanController, list_plans

    from .console import Progress
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
