"""The command line: the same runs as the GUI, for automation and tests.

Exit codes: 0 success, 1 the run failed (compare: the regression gate failed), 2 bad input
(nothing was started),
3 the run finished but its stream had damaged lines, 130 stopped by the user.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from app.analysis.compare import step_table_cells
from app.analysis.summary import summarize_run
from app.store.catalog import Catalog, CatalogError
from app.store.session import SessionError, SessionFile
from workloads.params import ParamError
from workloads.registry import WORKLOADS, UnknownWorkload, get as get_workload

from .console import Progress, fail as _fail
from app.remote.errors import RemoteError, UnknownHostKey
from app.remote.runner import RunController, RunRequest
from app.remote.secrets import KeyringUnavailable


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
    ctl = RunController(req, catalog, on_events=Progress(out, a.duration),
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
    if a.json:
        try:
            with SessionFile(outcome.session_path) as s:
                print(json.dumps(_run_json(s, s.run(outcome.run_id)), indent=2))
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
    att = Attacher(Catalog(), on_events=Progress(out, None),
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
    from app.remote.attach import find_open_runs, find_open_runs_in_folder, host_runs_not_in
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


def _run_json(session: SessionFile, rec) -> dict:
    summ = summarize_run(session, rec.id)
    return {"id": rec.id, "workload": rec.workload, "target": rec.target, "host": rec.host,
            "params": rec.params, "created": rec.created, "status": rec.status,
            "reason": rec.reason, "events": rec.events, "last_seq": rec.last_seq,
            "server_version": summ["server_version"],
            "phases": summ["phases"], "step_table": summ["step_table"],
            "errors": summ["errors"]}


def cmd_show(a) -> int:
    from app.remote.follow import open_runs
    try:
        with SessionFile(a.file) as s:
            runs = [_run_json(s, r) for r in s.runs()]
            unfinished = {r.id for r in open_runs(s)}
            for r in runs:
                s.check(r["id"])
            damaged = s.damaged()
    except SessionError as exc:
        return _fail(str(exc))
    _warn_damaged(damaged)
    if a.json:
        print(json.dumps({"session": str(a.file), "runs": runs, "damaged": damaged}, indent=2))
        return 3 if damaged else 0
    for r in runs:
        print(f"run {r['id']}  {r['workload']} on {r['target']} via {r['host']}  "
              f"[{r['status']}]  {r['events']} events, last seq {r['last_seq']}")
        if r.get("server_version"):
            print(f"  server: {r['server_version']}")
        if r["reason"]:
            print(f"  {r['reason']}")
        for line in _error_lines(r["errors"]):
            print(f"  {line}")
        if r["id"] in unfinished:
            print(f"  not complete in this file: 'versus attach {a.file}' brings in the rest "
                  f"from its host")
        w = max([10] + [len(p["name"]) + 1 for p in r["phases"]])   # a suite's long names
        print(f"  {'phase':<{w}}{'time s':>8}{'samples':>9}{'throughput':>14}  "
              f"{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}  {'usr%':>5}{'sys%':>5}{'iow%':>5}"
              f"{'idle%':>6}")
        for p in r["phases"]:
            lat, cpu = p["latency_ms"], p["cpu"]
            f = lambda v, w=8, d=3: f"{v:>{w}.{d}f}" if v is not None else f"{'-':>{w}}"
            tp = (f"{p['throughput_mean']:>10,.0f} {p['throughput_unit']}"
                  if p["throughput_mean"] is not None else f"{'-':>14}")
            print(f"  {p['name']:<{w}}{p['duration_s']:>8.1f}{p['samples']:>9}{tp:>14}  "
                  f"{f(lat['p50'])}{f(lat['p95'])}{f(lat['p99'])}  {f(cpu['user'], 5, 0)}"
                  f"{f(cpu['system'], 5, 0)}{f(cpu['iowait'], 5, 0)}{f(cpu['idle'], 6, 0)}")
            if p.get("server"):
                s = p["server"]
                print(f"  {'':<10}server {s['counter']}: {s['delta']:,} = {s['rate']:,.0f}/s "
                      f"({s['source']})")
            if p.get("result_text"):
                print(f"  {'':<10}result: {p['result_text']}")
            for line in _cpu_lines(p):
                print(f"  {'':<10}{line}")
            for line in p.get("outages_text") or ():
                print(f"  {'':<10}{line}")
            for fl in p.get("flags") or ():
                print(f"  {'':<10}{'FAILED' if fl['severity'] == 'fail' else 'flag'}: "
                      f"{fl['name']}" + (f" — {fl['detail']}" if fl["detail"] else ""))
        if r.get("step_table"):
            print()
            print(_step_table_text(r["step_table"]))
    return 3 if damaged else 0


def _warn_damaged(damaged: list[str]) -> None:
    """Damaged rows of a session file, skipped: one sentence each on stderr."""
    for d in damaged:
        print(f"versus: {d}", file=sys.stderr)


def _step_table_text(st: dict) -> str:
    """The per-step table a workload declares, as aligned text (one row per phase)."""
    head, rows, _ = step_table_cells(st)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = ["  per step:"]
    for cells in [head] + rows:
        lines.append("  " + "  ".join(str(c).ljust(w) if i in (0, len(cells) - 1)
                                      else str(c).rjust(w)
                                      for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
    return "\n".join(lines)


def _error_lines(errors: list[str], limit: int = 10) -> list[str]:
    """The run's error events, each distinct first line once with its count."""
    counts: dict[str, int] = {}
    for msg in errors:
        first = (msg or "").strip().splitlines()[0] if (msg or "").strip() else "(no message)"
        counts[first] = counts.get(first, 0) + 1
    lines = [f"error: {m}" + (f" ({n} times)" if n > 1 else "")
             for m, n in list(counts.items())[:limit]]
    if len(counts) > limit:
        lines.append(f"… and {len(counts) - limit} other errors ('versus show --json' lists them)")
    return lines


def _cpu_lines(p: dict) -> list[str]:
    """`show`'s lines on where a phase's CPU went (app.analysis.cpu.describe_phase)."""
    from app.analysis.cpu import group_title
    out = []
    groups = p.get("cpu_groups") or {}
    if groups:
        parts = [f"{group_title(g)} {v['pct']:.1f} %"
                 + (f" ({v['us_per_op']:,.1f} µs/op)" if v.get("us_per_op") is not None else "")
                 for g, v in groups.items() if v.get("pct")]
        out.append("CPU by process group (% of host): " + "; ".join(parts))
    perf = p.get("perf") or {}
    if perf.get("unavailable"):
        out.append(f"server perf counters: not available: {perf['unavailable']}")
    elif perf:
        from app.analysis.compare import fmt_value
        from app.analysis.cpu import PERF_ROWS
        figs = [f"{title} {fmt_value(perf[k])} {unit}" for k, title, unit, _p, _l in PERF_ROWS
                if isinstance(perf.get(k), (int, float))]
        out.append("server (perf stat): " + ", ".join(figs))
        if perf.get("hardware_unavailable"):
            out.append(f"hardware counters: not available: {perf['hardware_unavailable']}")
    if p.get("client_limit"):
        out.append(p["client_limit"])
    return out


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


def cmd_host(a) -> int:
    from app.model.config import HostConfig
    from app.remote.facts import format_facts, gather_facts
    from app.remote.hosts import open_transport, resolve_host
    from app.remote.runner import agent_python
    catalog = Catalog()
    try:
        if a.action == "list":
            for h in catalog.hosts():
                print(f"{h.name:<20} {h.title}  auth={h.auth} python={h.python}")
            return 0
        if a.action == "remove":
            from app.remote.hosts import remove_host
            if catalog.host(a.name) is None:
                return _fail(f"there is no saved host {a.name!r} (see 'versus host list')")
            remove_host(catalog, a.name)
            print(f"removed host {a.name} and its password")
            return 0
        if a.action == "add":
            from app.model.config import address_problem
            problem = address_problem(a.address)
            if problem:
                return _fail(problem)
            auth = "key" if a.key else "password" if a.password_stdin else "agent"
            if a.password_stdin:           # into the keyring first: refused, nothing is saved
                from app.remote.secrets import set_secret
                set_secret("host", a.name, sys.stdin.readline().rstrip("\n"))
            catalog.save_host(HostConfig(name=a.name, address=a.address, port=a.port,
                                         user=a.user or "", auth=auth, key_file=a.key or "",
                                         python=a.python))
            print(f"saved host {a.name}")
            return 0
        host = resolve_host(a.name, catalog)
        t = open_transport(host, a.accept_host_key)
        try:
            from app.remote.agentctl import AgentControl
            if a.action == "facts":
                facts = gather_facts(t, python=AgentControl(t, agent_python(host)).python)
                if a.json:
                    print(json.dumps(facts, indent=2))
                else:
                    for k, v in format_facts(facts):
                        print(f"{k:<24} {v}")
                return 0
            ctl = AgentControl(t, agent_python(host))
            if a.action == "clean":
                return _clean_host(ctl, host, a)
            missing = ctl.missing_drivers()
            if not missing:
                print(f"{host.title} is ready: {ctl.python} has the database drivers")
                return 0
            if not a.yes:
                return _fail(f"{host.title} lacks {', '.join(missing)}; run again with --yes to "
                             f"create a virtual environment in ~/.versus/venv on the host and "
                             f"install the drivers from the package index")
            py = ctl.prepare(log=lambda m: print(f"  {m}", flush=True))
            print(f"{host.title} is ready: the agent will use {py}")
            return 0
        finally:
            t.close()
    except (CatalogError, RemoteError, KeyringUnavailable) as exc:
        return _fail(str(exc))


def _clean_host(ctl, host, a) -> int:
    if a.older_than < 0:
        return _fail("--older-than takes a number of days, 0 or more")
    from app.remote.attach import find_open_runs_in_folder
    ctl.deploy()
    open_here, _ = find_open_runs_in_folder(a.name)
    keep = [o.run.id for o in open_here]
    for o in open_here:
        print(f"  keeping run {o.run.id}: open in {o.session_path} ('versus attach "
              f"{o.session_path}' brings in the rest)")
    found = ctl.clean(a.older_than, dry_run=True, keep=keep)
    old = found["would_remove"]
    for k in found["kept"]:
        if k["id"] not in keep:
            print(f"  keeping {k['kind']} {k['id']} ({k['why']})")
    if not old:
        print(f"{host.title}: no run folder is older than {a.older_than:g} days")
        return 0
    size = sum(c["bytes"] for c in old) / 1e6
    for c in old:
        print(f"  {c['kind']} {c['id']}  {c['age_days']:g} days old, {c['bytes'] / 1e6:,.1f} MB")
    print(f"{len(old)} folder(s), {size:,.1f} MB in {ctl.root} on {host.title}")
    if not a.yes:
        if not sys.stdin.isatty():
            return _fail("nothing was removed; run again with --yes to remove them")
        if input("Remove them? [y/N] ").strip().lower() not in ("y", "yes"):
            print("nothing was removed")
            return 0
    done = ctl.clean(a.older_than, dry_run=False, keep=keep)["removed"]
    left = [c for c in done if not c.get("removed")]
    print(f"removed {len(done) - len(left)} folder(s) from {host.title}")
    if left:
        return _fail(f"could not remove {', '.join(c['id'] for c in left)} (check their "
                     f"permissions on the host)", 1)
    return 0


def cmd_target(a) -> int:
    from app.remote.runner import check_target, resolve_target
    catalog = Catalog()
    try:
        if a.action == "list":
            for t in catalog.targets():
                print(f"{t.name:<20} {t.title} on host {t.host}")
            return 0
        if a.action == "remove":
            from app.remote.hosts import remove_target
            if catalog.target(a.name) is None:
                return _fail(f"there is no saved target {a.name!r} (see 'versus target list')")
            remove_target(catalog, a.name)
            print(f"removed target {a.name} and its password")
            return 0
        if a.action == "add":
            t = resolve_target(a.url, catalog)
            t.name, t.host = a.name, a.host
            if a.password_stdin:           # into the keyring first: refused, nothing is saved
                from app.remote.secrets import set_secret
                set_secret("target", a.name, sys.stdin.readline().rstrip("\n"))
            catalog.save_target(t)
            print(f"saved target {a.name}")
            return 0
        host = a.host or (catalog.target(a.name).host if catalog.target(a.name) else "local")
        print(check_target(catalog, host, a.name, a.accept_host_key))
        return 0
    except (CatalogError, RemoteError, KeyringUnavailable) as exc:
        return _fail(str(exc))


def cmd_compare(a) -> int:
    """Per-phase tables of several runs with ratios to a base run (see app.analysis.compare);
    for a suite, its matrices (app.analysis.matrix); the regression gate with --fail-below.
    Exit 1 when the gate fails."""
    from app.analysis.compare import CompareError, load_comparison, parse_ref
    from app.analysis.matrix import gate, has_groups, load_sides, suite_matrix
    from app.store.export import ExportError, tables_text, to_json, write_text
    gate_result = None
    try:
        refs = [parse_ref(x) for x in a.runs]
        names = a.names.split(",") if a.names else None
        if a.fail_below is not None:
            comp, sides = load_sides(refs, names)
            comp.align(a.align)
            gate_result = gate(comp, sides, a.fail_below)
        else:
            comp = load_comparison(refs, align=a.align, names=names)
        base = a.base - 1
        phases = [a.phase] if a.phase else (comp.common_phases() if len(comp) > 1
                                            else comp.phase_order())
        if not phases:
            _warn_damaged(comp.damaged())
            return _fail("the runs have no phase in common; compare runs of the same workload, "
                         "or name a phase with --phase to see what each run has of it")
        keys = [k.strip() for k in (a.matrix or "").split(",") if k.strip()]
        if a.json:
            out = comp.to_json(base, phases)
            if keys:
                out["matrices"] = {k: [{"phase": r.phase, "group": r.group,
                                        "values": list(r.values),
                                        "ratios": [x.value for x in r.ratios],
                                        "classes": [x.cls for x in r.ratios]}
                                       for r in suite_matrix(comp, k, base).rows]
                                   for k in keys}
            if gate_result is not None:
                out["gate"] = gate_result.to_json()
            text = to_json(out)
        else:
            if keys and has_groups(comp) and not a.phase:
                # a suite: its matrices are the comparison (per-test tables: --phase)
                tables = [t for k in keys for t in suite_matrix(comp, k, base).tables()]
            else:
                tables = comp.tables(base, phases)
                for k in keys:
                    if len(phases) > 1:
                        tables.append(comp.matrix(k, base))
            fmt = "csv" if a.csv else "html" if a.html else "markdown"
            text = tables_text(tables, fmt)
            if gate_result is not None and fmt == "markdown":
                text += "\n" + gate_result.text()
        if a.out:
            write_text(a.out, text)
        else:
            sys.stdout.write(text)
        if gate_result is not None and (a.out or a.csv or a.html):
            sys.stderr.write(gate_result.text())
    except (CompareError, ExportError, KeyError) as exc:
        return _fail(str(exc).strip('"'))
    _warn_damaged(comp.damaged())
    if gate_result is not None and gate_result.failed:
        return 1
    return 3 if comp.damaged() else 0


def cmd_import(a) -> int:
    """versus import FILE… --out SESSION: HammerDB, sysbench and pgbench logs as runs."""
    from app.store.importer import describe, import_logs
    try:
        outcome = import_logs([Path(f) for f in a.files], Path(a.out))
    except SessionError as exc:
        return _fail(str(exc))
    if a.json:
        print(json.dumps({"session": str(outcome.session_path),
                          "runs": [{"id": r.run_id, "workload": r.workload, "files": r.files,
                                    "target": r.target} for r in outcome.runs],
                          "problems": outcome.problems}, indent=2))
    else:
        for r in outcome.runs:
            print(f"imported {describe(r)}")
        if outcome.runs:
            print(f"session saved: {outcome.session_path} ({len(outcome.runs)} run"
                  f"{'s' if len(outcome.runs) != 1 else ''})")
    for p in outcome.problems:
        print(f"versus: {p}", file=sys.stderr)
    return 2 if outcome.problems else 0


def cmd_check(a) -> int:
    """versus check WORKLOAD TARGET: the workload's consistency check, run on the host."""
    from app.remote.agentctl import AgentControl
    from app.remote.hosts import open_transport, resolve_host
    from app.remote.runner import _embedded_target, agent_python, resolve_target, target_password
    try:
        catalog = Catalog()
        host = resolve_host(a.host, catalog)
        target = resolve_target(a.target, catalog)
        if target.engine not in ("postgres", "mysql", "mariadb"):
            return _fail(f"cannot check a {target.engine} target")
        if target.is_embedded:
            target = _embedded_target(host)
        t = open_transport(host, a.accept_host_key)
        try:
            ctl = AgentControl(t, agent_python(host))
            ctl.check_python()
            ctl.deploy()
            result = ctl.check_workload(a.workload, target.spec(), target_password(target))
        finally:
            t.close()
    except UnknownHostKey as exc:
        return _fail(str(exc))
    except (CatalogError, RemoteError) as exc:
        return _fail(str(exc))
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        for line in result.get("lines") or []:
            print(line)
    return 0 if result.get("ok") else 1


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="versus", description="Database benchmarks you can defend.")
    sub = ap.add_subparsers(dest="cmd", required=True)
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
    s = sub.add_parser("show", help="summary per run and phase of a session file")
    s.add_argument("file")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)
    at = sub.add_parser("attach", help="bring in the rest of runs a session file does not have "
                                       "to the end (after the app was closed or killed)")
    at.add_argument("session", nargs="?", metavar="SESSION",
                    help="a session file (default: every session file in the sessions folder)")
    at.add_argument("--host", help="only runs on this host; without SESSION, also list runs "
                                   "running there that no session file has")
    at.add_argument("--ssh-key", metavar="FILE")
    at.add_argument("--accept-host-key", metavar="SHA256:...")
    at.set_defaults(func=cmd_attach)
    h = sub.add_parser("host", help="saved hosts: list, add, facts, prepare, clean")
    hs = h.add_subparsers(dest="action", required=True)
    hs.add_parser("list")
    hs.add_parser("remove").add_argument("name")
    ha = hs.add_parser("add")
    ha.add_argument("name"); ha.add_argument("--address", required=True)
    ha.add_argument("--port", type=int, default=22); ha.add_argument("--user")
    ha.add_argument("--key", metavar="FILE"); ha.add_argument("--python", default="python3")
    ha.add_argument("--password-stdin", action="store_true",
                    help="read the SSH password from standard input into the keyring")
    for name in ("facts", "prepare", "clean"):
        hp = hs.add_parser(name, help={
            "clean": "remove the host's run folders older than --older-than days (asks "
                     "first; never a running one)"}.get(name))
        hp.add_argument("name", help="a saved host, local, or [user@]address[:port]")
        hp.add_argument("--accept-host-key", metavar="SHA256:...")
        hp.add_argument("--json", action="store_true")
        hp.add_argument("--yes", action="store_true",
                        help="consent to removing the folders" if name == "clean" else
                        "consent to installing drivers")
        if name == "clean":
            hp.add_argument("--older-than", type=float, default=30, metavar="DAYS",
                            help="age of the newest file in a run's folder (default 30)")
    h.set_defaults(func=cmd_host)
    tg = sub.add_parser("target", help="saved targets: list, add, check")
    ts = tg.add_subparsers(dest="action", required=True)
    ts.add_parser("list")
    ts.add_parser("remove").add_argument("name")
    ta = ts.add_parser("add")
    ta.add_argument("name"); ta.add_argument("--url", required=True)
    ta.add_argument("--host", default="local")
    ta.add_argument("--password-stdin", action="store_true",
                    help="read the database password from standard input into the keyring")
    tc = ts.add_parser("check")
    tc.add_argument("name"); tc.add_argument("--host")
    tc.add_argument("--accept-host-key", metavar="SHA256:...")
    tg.set_defaults(func=cmd_target)
    c = sub.add_parser("compare", help="compare runs: a table per phase with ratios to a base run")
    c.add_argument("runs", nargs="+", metavar="FILE[:RUN]",
                   help="session files; RUN picks one run (its id, or 1, 2 … in the file)")
    c.add_argument("--base", type=int, default=1, metavar="N", help="the base run (1 = first)")
    c.add_argument("--align", metavar="PHASE", help="align runs on the start of this phase")
    c.add_argument("--phase", help="only this phase (default: the phases all runs have)")
    c.add_argument("--names", metavar="A,B,…", help="names for the runs, in order")
    c.add_argument("--matrix", metavar="METRIC[,METRIC…]", nargs="?", const="throughput",
                   help="ratios to the base run as a matrix, runs × phases, one per METRIC "
                        "(default throughput; e.g. throughput,eff.cpu_us,eff.cs); for a "
                        "suite such as micro: its tests grouped as the workload groups them, "
                        "instead of the per-phase tables")
    c.add_argument("--fail-below", type=float, metavar="RATIO",
                   help="regression gate: exit 1 and name the tests whose throughput "
                        "relative to BASE fell below RATIO (e.g. 0.95); runs are BASE then "
                        "NEW, each a FILE (all its runs: repeats of one side) or FILE:RUN")
    cf = c.add_mutually_exclusive_group()
    cf.add_argument("--markdown", action="store_true", help="Markdown tables (the default)")
    cf.add_argument("--csv", action="store_true")
    cf.add_argument("--html", action="store_true")
    cf.add_argument("--json", action="store_true", help="values and ratios of every metric")
    c.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    c.set_defaults(func=cmd_compare)
    im = sub.add_parser("import", help="import HammerDB, sysbench and pgbench logs as runs")
    im.add_argument("files", nargs="+", metavar="FILE",
                    help="logs: hammerdb.log / hdbtcount / xtprof, sysbench text or JSON output, "
                         "pgbench output or its -l logs (a HammerDB counter log or profile "
                         "joins the run it belongs to)")
    im.add_argument("--out", required=True, metavar="SESSION",
                    help="session file (appended to if it exists)")
    im.add_argument("--json", action="store_true")
    im.set_defaults(func=cmd_import)
    # `versus export` is parsed by app.ui.export_cmd (it draws charts with Qt); listed here
    # so `versus --help` shows it.
    sub.add_parser("export", help="export charts (PNG, SVG, PDF), series (CSV, JSON), tables "
                                  "and slide decks; see versus export --help", add_help=False)
    c = sub.add_parser("check", help="consistency check of a workload's schema on a target")
    checked = [w.name for w in WORKLOADS.values() if w.checker]
    c.add_argument("workload", choices=checked,
                   help="the workload whose data to check: " + ", ".join(checked))
    c.add_argument("target", help="a saved target, or a postgresql:// or mysql:// URL")
    c.add_argument("--host", default="local", help="where the check runs (default: local)")
    c.add_argument("--accept-host-key", metavar="SHA256:...")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)
    w = sub.add_parser("workloads", help="workloads and their parameters")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=cmd_workloads)
    from .plan import add_parsers as add_plan_parsers   # plan, profile, settings
    add_plan_parsers(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    return a.func(a)

