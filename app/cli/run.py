"""`versus run`, `versus attach` and `versus workloads`: runs started, followed and brought in."""
from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

from app.remote.errors import RemoteError
from app.remote.runner import RunController, RunRequest
from app.store.catalog import Catalog, CatalogError
from app.store.session import SessionError, SessionFile
from workloads.params import ParamError
from workloads.registry import WORKLOADS, UnknownWorkload
from workloads.registry import get as get_workload

from .console import Progress
from .console import fail as _fail
from .sessions import run_json


def _exit_code(status: str, skipped: int = 0) -> int:
    """The README's exit codes for a run that started: 1 failed, 130 stopped (or left going
    on the host), 3 damaged stream lines were skipped, 0 done."""
    if status == "failed":
        return 1
    if status in ("stopped", "running"):
        return 130
    return 3 if skipped else 0


def _on_signals(first, out, message: str) -> None:
    """Ctrl-C (or SIGTERM) once: first(); twice: KeyboardInterrupt (leave it on the host)."""
    pressed = threading.Event()

    def handler(*_):
        if pressed.is_set():
            raise KeyboardInterrupt
        pressed.set()
        print(f"         {message}", file=out, flush=True)
        first()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def _offer_attach(path: Path, out) -> int | None:
    """Before a run goes into an existing session file: its open runs, and on a terminal the
    offer to bring them in first. Returns an exit code when the user's answer ends here."""
    from app.remote.attach import find_open_runs
    try:
        runs = find_open_runs([path])
    except SessionError:
        return None                       # the run refuses the damaged file with a sentence
    if not runs:
        return None
    for o in runs:
        print(f"         {path.name} has an open run: {o.describe()}", file=out)
    if not sys.stdin.isatty():
        print(f"         'versus attach {path}' brings in the rest", file=out, flush=True)
        return None
    answer = input("Bring in the rest of it first? [Y/n] ").strip().lower()
    if answer in ("", "y", "yes"):
        code = _attach([(path, runs)], out, None)
        if code not in (0, 3):
            return code
    return None


def cmd_run(a) -> int:
    catalog = Catalog()
    params: dict = {}
    for item in a.set or []:
        key, eq, value = item.partition("=")
        if not eq:
            return _fail(f"--set takes KEY=VALUE, not {item!r}")
        params[key.strip()] = value
    for value, role, flag in ((a.duration, "measured", "--duration"),
                              (a.warmup, "warmup", "--warmup")):
        if value is None:
            continue
        try:
            name = get_workload(a.workload).seconds_param(role)
        except UnknownWorkload as exc:
            return _fail(str(exc))
        if name is None:
            return _fail(f"{a.workload} has no single {role} period for {flag}; "
                         f"set its parameters with --set (see 'versus workloads')")
        params[name] = value
    out = sys.stderr if a.json else sys.stdout
    if a.out:
        from app.store.paths import new_file_problem
        problem = new_file_problem(Path(a.out))
        if problem:
            return _fail(problem)
        if Path(a.out).exists():
            code = _offer_attach(Path(a.out), out)
            if code is not None:
                return code
    perf = {}
    if a.no_perf or a.perf:
        perf["stat"] = bool(a.perf)
    if a.profile:
        perf["profile_s"] = a.profile
    req = RunRequest(host=a.host, target=a.target, workload=a.workload, params=params,
                     session_path=Path(a.out) if a.out else None,
                     accept_host_key=a.accept_host_key, ssh_key=a.ssh_key, perf=perf)
    on_events = Progress(out, a.duration)
    metrics = None
    if a.metrics_port is not None:
        from app.remote.openmetrics import MetricsEndpoint
        try:
            metrics = MetricsEndpoint(a.metrics_port, a.metrics_address)
        except OSError as exc:
            return _fail(str(exc))
        print(f"         metrics: http://{a.metrics_address}:{a.metrics_port}/metrics",
              file=out, flush=True)
        progress = on_events

        def on_events(run_id, evs):
            progress(run_id, evs)
            metrics(run_id, evs)
    ctl = RunController(req, catalog, on_events=on_events,
                        on_status=lambda m: print(f"         {m}", file=out, flush=True))
    _on_signals(ctl.stop, out, "stopping the run (Ctrl-C again to leave it running on the host)")
    try:
        outcome = ctl.run()
    except (UnknownWorkload, ParamError, CatalogError, SessionError, RemoteError) as exc:
        return _fail(str(exc))            # raised only before anything started
    except KeyboardInterrupt:
        return _fail("left the run going on the host" + (
            f"; 'versus attach {ctl.session_path}' brings in the rest" if ctl.run_id else ""),
            130)
    finally:
        if metrics is not None:
            metrics.close()
    if a.json:
        try:
            with SessionFile(outcome.session_path) as s:
                print(json.dumps(run_json(s, s.run(outcome.run_id)), indent=2))
        except SessionError as exc:       # e.g. the session's disk filled up mid-run
            _fail(str(exc))
    if outcome.status == "running":             # left going on the host: not all is saved
        print(f"         session so far: {outcome.session_path} (run {outcome.run_id}, "
              f"{outcome.events} events)", file=out)
    else:
        print(f"         session saved: {outcome.session_path} (run {outcome.run_id}, "
              f"{outcome.events} events)", file=out)
    code = _exit_code(outcome.status, outcome.skipped_lines)
    if outcome.status == "failed":
        _fail(f"the run failed: {outcome.reason}")
    elif outcome.status == "stopped":
        _fail("the run was stopped before it finished")
    elif outcome.status == "running":           # left going on the host (a full disk)
        _fail(outcome.reason)
    elif code == 3:
        _fail(outcome.reason)
    return code


def _attach(groups, out, a) -> int:
    """Bring in the open runs; the exit code of the worst outcome."""
    from app.remote.attach import Attacher
    workloads = {o.run.id: o.run.workload for _, runs in groups for o in runs}
    att = Attacher(Catalog(), on_events=Progress(out, None, workloads),
                   on_status=lambda m: print(f"         {m}", file=out, flush=True),
                   accept_host_key=getattr(a, "accept_host_key", None),
                   ssh_key=getattr(a, "ssh_key", None))
    _on_signals(att.leave, out, "leaving the runs going on their hosts (attach again later; "
                                "Ctrl-C again to quit now)")
    codes = []
    try:
        for path, runs in groups:
            for done in att.attach(runs):
                rid = done.open.run.id
                if done.error:
                    print(f"versus: run {rid}: {done.error}", file=sys.stderr)
                    codes.append(1)
                    continue
                res = done.result
                print(f"run {rid}: {res.status}, {done.events_after} events in {path} "
                      f"({done.events_after - done.events_before} brought in)"
                      + (f" — {res.reason}" if res.reason else ""), file=sys.stdout,
                      flush=True)
                codes.append(_exit_code(res.status, res.skipped))
    except KeyboardInterrupt:
        return _fail("left the runs going on their hosts", 130)
    for c in (1, 130, 3):
        if c in codes:
            return c
    return 0


def cmd_attach(a) -> int:
    """versus attach [SESSION] [--host H]: bring in the rest of open runs."""
    from app.remote.attach import (
        find_open_runs,
        find_open_runs_in_folder,
        host_runs_not_in,
    )
    try:
        if a.session:
            path = Path(a.session)
            runs = find_open_runs([path], a.host)
            problems: list[str] = []
        else:
            runs, problems = find_open_runs_in_folder(a.host)
    except SessionError as exc:
        return _fail(str(exc))
    for p in problems:
        print(f"versus: skipped {p}", file=sys.stderr)
    orphans: list[dict] = []
    if a.host and not a.session:
        from app.store.paths import list_sessions
        known: set[str] = set()
        for p in list_sessions():
            try:
                with SessionFile(p) as s:
                    known.update(r.id for r in s.runs())
            except SessionError:
                pass
        try:
            orphans = [r for r in host_runs_not_in(a.host, known, Catalog(),
                                                  a.accept_host_key, a.ssh_key)
                       if r["state"] == "running"]
        except (CatalogError, RemoteError) as exc:
            return _fail(str(exc))
    where = a.session or "the session files"
    if not runs:
        print(("every run in " if orphans else "nothing to attach: every run in ")
              + f"{where} is complete" + (f" (on {a.host})" if a.host else ""))
    for o in runs:
        print(o.describe())
    for r in orphans:
        print(f"run {r['run_id']} is running on {a.host} and is in no session file in the "
              f"sessions folder; it is not brought in (its session file is elsewhere: "
              f"'versus attach FILE')")
    if not runs:
        return 0
    groups: dict[Path, list] = {}
    for o in runs:
        groups.setdefault(o.session_path, []).append(o)
    return _attach(list(groups.items()), sys.stdout, a)


def cmd_workloads(a) -> int:
    if a.json:
        print(json.dumps([w.to_json() for w in WORKLOADS.values()], indent=2))
        return 0
    for w in WORKLOADS.values():
        print(f"{w.name}: {w.description}")
        for p in w.params:
            rng = ""
            if p.min is not None or p.max is not None:
                rng = f" [{p.min if p.min is not None else ''}..{p.max if p.max is not None else ''}]"
            print(f"  --set {p.name}=<{p.type}>  default {p.default}{rng}  {p.help}")
        seen: set[str] = set()
        for ph in w.phase_specs():
            if ph.help and ph.role != "warmup" and ph.help not in seen:
                seen.add(ph.help)
                print(f"  phase {ph.name}{f' ({ph.group})' if ph.group else ''}: {ph.help}")
    return 0


def add_run(sub) -> None:
    r = sub.add_parser("run", help="run a workload and save it in a session file")
    r.add_argument("--host", default="local",
                   help="local (default), [user@]address[:port], or a saved host's name")
    r.add_argument("--target", default="embedded-postgres",
                   help="embedded-postgres (default), a saved target, or a postgresql:// or "
                        "mysql:// URL (no password: use the keyring or VERSUS_DB_PASSWORD)")
    r.add_argument("--workload", required=True)
    r.add_argument("--set", action="append", metavar="KEY=VALUE")
    r.add_argument("--duration", type=int, metavar="S")
    r.add_argument("--warmup", type=int, metavar="S")
    r.add_argument("--out", metavar="FILE", help="session file (appended to if it exists)")
    r.add_argument("--ssh-key", metavar="FILE")
    r.add_argument("--accept-host-key", metavar="SHA256:...")
    r.add_argument("--json", action="store_true", help="print the run's summary as JSON")
    r.add_argument("--metrics-port", type=int, metavar="PORT",
                   help="serve the live run's figures for Prometheus (OpenMetrics) on PORT "
                        "while it runs, with its start and end as annotations")
    r.add_argument("--metrics-address", default="127.0.0.1", metavar="ADDR",
                   help="the address the metrics endpoint listens on (default 127.0.0.1)")
    r.add_argument("--profile", type=float, metavar="S",
                   help="a CPU profile of the server for S seconds at the start of each "
                        "measured phase (perf record -g; a flame graph in the app)")
    counting = r.add_mutually_exclusive_group()
    counting.add_argument("--perf", action="store_true",
                          help="count the server's perf events per phase (perf stat: "
                               "context switches, task clock, IPC where the host has "
                               "hardware counters); it costs throughput, up to 10 %% at "
                               "30,000 queries per second")
    counting.add_argument("--no-perf", action="store_true",
                          help="do not count the server's perf events, even for a workload "
                               "that does by default (perf-trace)")
    r.set_defaults(func=cmd_run)


def add_attach(sub) -> None:
    at = sub.add_parser("attach", help="bring in the rest of runs a session file does not have "
                                       "to the end (after the app was closed or killed)")
    at.add_argument("session", nargs="?", metavar="SESSION",
                    help="a session file (default: every session file in the sessions folder)")
    at.add_argument("--host", help="only runs on this host; without SESSION, also list runs "
                                   "running there that no session file has")
    at.add_argument("--ssh-key", metavar="FILE")
    at.add_argument("--accept-host-key", metavar="SHA256:...")
    at.set_defaults(func=cmd_attach)


def add_workloads(sub) -> None:
    w = sub.add_parser("workloads", help="workloads and their parameters")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=cmd_workloads)
