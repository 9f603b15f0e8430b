"""The command line: the same runs as the GUI, for automation and tests.

Exit codes: 0 success, 1 the run failed, 2 bad input (nothing was started),
3 the run finished but its stream had damaged lines, 130 stopped by the user.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from app.analysis.summary import summarize_run
from app.model.results import result_text
from app.store.catalog import Catalog, CatalogError
from app.store.session import SessionError, SessionFile
from workloads.params import ParamError
from workloads.registry import WORKLOADS, UnknownWorkload, get as get_workload

from .remote.errors import RemoteError, UnknownHostKey
from .remote.runner import RunController, RunRequest


def _fail(msg: str, code: int = 2) -> int:
    print(f"versus: {msg}", file=sys.stderr)
    return code


class _Progress:
    """One line per second from the live events."""

    def __init__(self, stream, duration: float | None):
        self.out = stream
        self.last_progress = 0.0
        self.phase = ""
        self.cpu: dict = {}

    def __call__(self, run_id: str, evs: list[dict]) -> None:
        for e in evs:
            k = e["kind"]
            if k == "phase" and e.get("state") == "start":
                self.phase = e["name"]
                self._line(f"{e['t']:7.1f}s  phase {e['name']} started")
            elif k == "progress":
                now = time.monotonic()
                if now - self.last_progress >= 1.0 or e["done"] >= e["total"]:
                    self.last_progress = now
                    pct = 100.0 * e["done"] / e["total"] if e["total"] else 100.0
                    self._line(f"{e['t']:7.1f}s  {e['phase']:<8} {e['done']:>12,} / "
                               f"{e['total']:,} {e.get('unit', '')} ({pct:.0f} %)")
            elif k == "host":
                self.cpu = e.get("cpu", {})
            elif k == "sample":
                lat = e.get("lat_ms", {}).get("all", {})
                c = self.cpu
                p95 = lat.get("p95")
                p95s = f"{p95:.3f}" if p95 is not None else "-"
                self._line(f"{e['t']:7.1f}s  {e['phase']:<8} {e['rate']:>12,.0f} {e['unit']}  "
                           f"p95 {p95s} ms  clients {e.get('clients')}  "
                           f"cpu usr {c.get('user', 0):.0f}% sys {c.get('system', 0):.0f}% "
                           f"idle {c.get('idle', 0):.0f}%")
            elif k == "log":
                self._line(f"{e['t']:7.1f}s  {e['message']}")
            elif k == "error":
                self._line(f"{e['t']:7.1f}s  error: {e['message'].splitlines()[0]}")
            elif k == "summary" and e.get("result"):
                self._line(f"{e['t']:7.1f}s  {e['phase']} done: {result_text(e['result'])}")
            elif k == "summary" and e.get("check"):
                self._line(f"{e['t']:7.1f}s  consistency check: "
                           f"{'PASS' if e['check'].get('ok') else 'FAIL'}")
            elif k == "summary":
                srv = e.get("server") or {}
                extra = (f"; server {srv['counter']} {srv['delta']:,} "
                         f"({srv['source']})") if srv else ""
                self._line(f"{e['t']:7.1f}s  {e['phase']} done: {e['ops_total']:,} ops in "
                           f"{e['duration_s']:.1f} s = {e['rate']:,.0f} {e['unit']} (client count)"
                           f"{extra}")

    def _line(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def cmd_run(a) -> int:
    catalog = Catalog()
    params: dict = {}
    for item in a.set or []:
        key, eq, value = item.partition("=")
        if not eq:
            return _fail(f"--set takes KEY=VALUE, not {item!r}")
        params[key.strip()] = value
    if a.duration is not None:
        params["duration"] = a.duration
    if a.warmup is not None:
        try:
            names = {p.name for p in get_workload(a.workload).params}
        except UnknownWorkload:
            names = set()
        # workloads that call their warm-up period "rampup" (TPROC-C, as HammerDB does)
        params["rampup" if "rampup" in names and "warmup" not in names else "warmup"] = a.warmup
    req = RunRequest(host=a.host, target=a.target, workload=a.workload, params=params,
                     session_path=Path(a.out) if a.out else None,
                     accept_host_key=a.accept_host_key, ssh_key=a.ssh_key)
    out = sys.stderr if a.json else sys.stdout
    ctl = RunController(req, catalog, on_events=_Progress(out, a.duration),
                        on_status=lambda m: print(f"         {m}", file=out, flush=True))
    stopping = threading.Event()

    def on_sigint(*_):
        if stopping.is_set():
            raise KeyboardInterrupt
        stopping.set()
        print("         stopping the run (Ctrl-C again to leave it running on the host)",
              file=out, flush=True)
        ctl.stop()

    signal.signal(signal.SIGINT, on_sigint)
    signal.signal(signal.SIGTERM, on_sigint)
    try:
        outcome = ctl.run()
    except UnknownHostKey as exc:
        return _fail(str(exc))
    except (UnknownWorkload, ParamError, CatalogError, SessionError, RemoteError) as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _fail("left the run going on the host", 130)
    if a.json:
        with SessionFile(outcome.session_path) as s:
            print(json.dumps(_run_json(s, s.run(outcome.run_id)), indent=2))
    print(f"         session saved: {outcome.session_path} (run {outcome.run_id}, "
          f"{outcome.events} events)", file=out)
    if outcome.status == "failed":
        return _fail(f"the run failed: {outcome.reason}", 1)
    if outcome.status == "stopped":
        return _fail("the run was stopped before it finished", 130)
    if outcome.skipped_lines:
        return _fail(outcome.reason, 3)
    return 0


def _run_json(session: SessionFile, rec) -> dict:
    evs = session.events(rec.id)
    summ = summarize_run(evs)
    return {"id": rec.id, "workload": rec.workload, "target": rec.target, "host": rec.host,
            "params": rec.params, "created": rec.created, "status": rec.status,
            "reason": rec.reason, "events": rec.events, "last_seq": rec.last_seq,
            "server_version": next((e.get("server_version") for e in evs
                                    if e["kind"] == "setting"), None),
            "phases": summ["phases"], "errors": summ["errors"]}


def cmd_show(a) -> int:
    try:
        with SessionFile(a.file) as s:
            runs = [_run_json(s, r) for r in s.runs()]
    except SessionError as exc:
        return _fail(str(exc))
    if a.json:
        print(json.dumps({"session": str(a.file), "runs": runs}, indent=2))
        return 0
    for r in runs:
        print(f"run {r['id']}  {r['workload']} on {r['target']} via {r['host']}  "
              f"[{r['status']}]  {r['events']} events, last seq {r['last_seq']}")
        if r.get("server_version"):
            print(f"  server: {r['server_version']}")
        if r["reason"]:
            print(f"  {r['reason']}")
        print(f"  {'phase':<10}{'time s':>8}{'samples':>9}{'throughput':>14}  "
              f"{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}  {'usr%':>5}{'sys%':>5}{'iow%':>5}"
              f"{'idle%':>6}")
        for p in r["phases"]:
            lat, cpu = p["latency_ms"], p["cpu"]
            f = lambda v, w=8, d=3: f"{v:>{w}.{d}f}" if v is not None else f"{'-':>{w}}"
            tp = (f"{p['throughput_mean']:>10,.0f} {p['throughput_unit']}"
                  if p["throughput_mean"] is not None else f"{'-':>14}")
            print(f"  {p['name']:<10}{p['duration_s']:>8.1f}{p['samples']:>9}{tp:>14}  "
                  f"{f(lat['p50'])}{f(lat['p95'])}{f(lat['p99'])}  {f(cpu['user'], 5, 0)}"
                  f"{f(cpu['system'], 5, 0)}{f(cpu['iowait'], 5, 0)}{f(cpu['idle'], 6, 0)}")
            if p.get("server"):
                s = p["server"]
                print(f"  {'':<10}server {s['counter']}: {s['delta']:,} = {s['rate']:,.0f}/s "
                      f"({s['source']})")
    return 0


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
    return 0


def cmd_host(a) -> int:
    from app.model.config import HostConfig
    from .remote.facts import format_facts, gather_facts
    from .remote.hosts import open_transport, resolve_host
    from .remote.runner import agent_python
    catalog = Catalog()
    try:
        if a.action == "list":
            for h in catalog.hosts():
                print(f"{h.name:<20} {h.title}  auth={h.auth} python={h.python}")
            return 0
        if a.action == "add":
            auth = "key" if a.key else "password" if a.password_stdin else "agent"
            catalog.save_host(HostConfig(name=a.name, address=a.address, port=a.port,
                                         user=a.user or "", auth=auth, key_file=a.key or "",
                                         python=a.python))
            if a.password_stdin:
                from .remote.secrets import set_secret
                set_secret("host", a.name, sys.stdin.readline().rstrip("\n"))
            print(f"saved host {a.name}")
            return 0
        host = resolve_host(a.name, catalog)
        t = open_transport(host, a.accept_host_key)
        try:
            from .remote.agentctl import AgentControl
            if a.action == "facts":
                facts = gather_facts(t, python=AgentControl(t, agent_python(host)).python)
                if a.json:
                    print(json.dumps(facts, indent=2))
                else:
                    for k, v in format_facts(facts):
                        print(f"{k:<24} {v}")
                return 0
            ctl = AgentControl(t, agent_python(host))
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
    except (CatalogError, RemoteError) as exc:
        return _fail(str(exc))


def cmd_target(a) -> int:
    from .remote.runner import check_target, resolve_target
    catalog = Catalog()
    try:
        if a.action == "list":
            for t in catalog.targets():
                print(f"{t.name:<20} {t.title} on host {t.host}")
            return 0
        if a.action == "add":
            t = resolve_target(a.url, catalog)
            t.name, t.host = a.name, a.host
            catalog.save_target(t)
            if a.password_stdin:
                from .remote.secrets import set_secret
                set_secret("target", a.name, sys.stdin.readline().rstrip("\n"))
            print(f"saved target {a.name}")
            return 0
        host = a.host or (catalog.target(a.name).host if catalog.target(a.name) else "local")
        print(check_target(catalog, host, a.name, a.accept_host_key))
        return 0
    except (CatalogError, RemoteError) as exc:
        return _fail(str(exc))
    except Exception as exc:
        from .remote.secrets import KeyringUnavailable
        if isinstance(exc, KeyringUnavailable):
            return _fail(str(exc))
        raise


def cmd_compare(a) -> int:
    """Per-phase tables of several runs with ratios to a base run (see app.analysis.compare)."""
    from app.analysis.compare import CompareError, load_comparison, parse_ref
    from app.store.export import ExportError, tables_text, to_json, write_text
    try:
        comp = load_comparison([parse_ref(x) for x in a.runs], align=a.align,
                               names=a.names.split(",") if a.names else None)
        base = a.base - 1
        phases = [a.phase] if a.phase else (comp.common_phases() if len(comp) > 1
                                            else comp.phase_order())
        if not phases:
            return _fail("the runs have no phase in common; compare runs of the same workload, "
                         "or name a phase with --phase to see what each run has of it")
        if a.json:
            text = to_json(comp.to_json(base, phases))
        else:
            tables = comp.tables(base, phases)
            if a.matrix and len(phases) > 1:
                tables.append(comp.matrix(a.matrix, base))
            fmt = "csv" if a.csv else "html" if a.html else "markdown"
            text = tables_text(tables, fmt)
        if a.out:
            write_text(a.out, text)
        else:
            sys.stdout.write(text)
    except (CompareError, ExportError, KeyError) as exc:
        return _fail(str(exc).strip('"'))
    return 0


def cmd_check(a) -> int:
    """versus check tpcc TARGET: the TPC-C consistency conditions, run on the host."""
    from .remote.agentctl import AgentControl
    from .remote.hosts import open_transport, resolve_host
    from .remote.runner import _embedded_target, agent_python, resolve_target, target_password
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
            result = ctl.check_tpcc(target.spec(), target_password(target))
        finally:
            t.close()
    except UnknownHostKey as exc:
        return _fail(str(exc))
    except (CatalogError, RemoteError) as exc:
        return _fail(str(exc))
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        from workloads.tpcc.check import describe
        for line in describe(result):
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
    r.set_defaults(func=cmd_run)
    s = sub.add_parser("show", help="summary per run and phase of a session file")
    s.add_argument("file")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)
    h = sub.add_parser("host", help="saved hosts: list, add, facts, prepare")
    hs = h.add_subparsers(dest="action", required=True)
    hs.add_parser("list")
    ha = hs.add_parser("add")
    ha.add_argument("name"); ha.add_argument("--address", required=True)
    ha.add_argument("--port", type=int, default=22); ha.add_argument("--user")
    ha.add_argument("--key", metavar="FILE"); ha.add_argument("--python", default="python3")
    ha.add_argument("--password-stdin", action="store_true",
                    help="read the SSH password from standard input into the keyring")
    for name in ("facts", "prepare"):
        hp = hs.add_parser(name)
        hp.add_argument("name", help="a saved host, local, or [user@]address[:port]")
        hp.add_argument("--accept-host-key", metavar="SHA256:...")
        hp.add_argument("--json", action="store_true")
        hp.add_argument("--yes", action="store_true", help="consent to installing drivers")
    h.set_defaults(func=cmd_host)
    tg = sub.add_parser("target", help="saved targets: list, add, check")
    ts = tg.add_subparsers(dest="action", required=True)
    ts.add_parser("list")
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
    c.add_argument("--matrix", metavar="METRIC", nargs="?", const="throughput",
                   help="add a phases × runs matrix of METRIC ratios (default throughput)")
    cf = c.add_mutually_exclusive_group()
    cf.add_argument("--markdown", action="store_true", help="Markdown tables (the default)")
    cf.add_argument("--csv", action="store_true")
    cf.add_argument("--html", action="store_true")
    cf.add_argument("--json", action="store_true", help="values and ratios of every metric")
    c.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    c.set_defaults(func=cmd_compare)
    # `versus export` is parsed by app.ui.export_cmd (it draws charts with Qt); listed here
    # so `versus --help` shows it.
    sub.add_parser("export", help="export charts (PNG, SVG, PDF), series (CSV, JSON), tables "
                                  "and slide decks; see versus export --help", add_help=False)
    c = sub.add_parser("check", help="consistency check of a workload's schema on a target")
    c.add_argument("workload", choices=["tpcc"], help="tpcc: the TPC-C consistency conditions")
    c.add_argument("target", help="a saved target, or a postgresql:// or mysql:// URL")
    c.add_argument("--host", default="local", help="where the check runs (default: local)")
    c.add_argument("--accept-host-key", metavar="SHA256:...")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)
    w = sub.add_parser("workloads", help="workloads and their parameters")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=cmd_workloads)
    from .plan_cli import add_parsers as add_plan_parsers   # plan, profile, settings
    add_plan_parsers(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())
