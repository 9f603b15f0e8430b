"""The Versus agent: runs a workload on the benchmark host and keeps its event spool.

    python -m workloads.agent start  --dir RUNDIR        # detached (setsid), prints the pid
    python -m workloads.agent run    --dir RUNDIR        # in the foreground, events on stdout
    python -m workloads.agent follow --dir RUNDIR [--from-seq N]
    python -m workloads.agent stop   --dir RUNDIR
    python -m workloads.agent status --root RUNSROOT
    python -m workloads.agent clean  --root ROOT --older-than DAYS [--dry-run] [--keep RUN_ID …]
    python -m workloads.agent check                      # target spec as JSON on stdin
    python -m workloads.agent check-workload --workload NAME   # the workload's own data
                                                         # check (spec.checker), same input
    python -m workloads.agent apply-profile              # apply a profile: see profile_apply.py
    python -m workloads.agent workloads
    python -m workloads.agent plan-start|plan-run|plan-status|plan-control|plan-list …
                                                         # plans: see engine/planqueue.py

RUNDIR holds spec.json (workload, params, target; no secret), an optional `secret` file
(mode 0600, read and removed at start), events.jsonl (the spool, the source of truth),
agent.pid, agent.log and `started` (made by the first start, so a repeated one is a no-op).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
import time

from . import events
from .engine.daemon import detach, pid_alive
from .engine.sql.db import DatabaseError, SqlSession, TargetInfo
from .engine.driver import AGENT_VERSION, Agent, Emitter, StopRun
from .params import ParamError
from .registry import UnknownWorkload, get
from .engine.measure.sampler import host_facts

SPOOL = "events.jsonl"
PIDFILE = "agent.pid"
STARTED = "started"             # created once, by the first `start` of a run folder


def _read_secret(rundir: str) -> str:
    path = os.path.join(rundir, "secret")
    try:
        with open(path) as f:
            secret = f.read()
    except FileNotFoundError:
        # popped, so the virtual users and tools this agent starts do not inherit it
        return os.environ.pop("VERSUS_DB_PASSWORD", "")
    os.environ.pop("VERSUS_DB_PASSWORD", None)
    os.unlink(path)
    return secret.rstrip("\n")


def cmd_run(rundir: str, echo: bool) -> int:
    with open(os.path.join(rundir, "spec.json")) as f:
        spec = json.load(f)
    password = _read_secret(rundir)
    with open(os.path.join(rundir, PIDFILE), "w") as f:
        f.write(str(os.getpid()))
    em = Emitter(os.path.join(rundir, SPOOL), echo, time.monotonic())
    status, reason = "failed", ""
    agent = managed = None
    try:
        wl = get(spec["workload"])
        spec["params"] = wl.resolve(spec.get("params", {}))
        target = TargetInfo.from_spec(spec["target"], password)
        em.emit("hello", agent_version=AGENT_VERSION, run_id=spec["run_id"],
                workload=wl.name, params=spec["params"],
                target={k: spec["target"].get(k) for k in ("engine", "address", "port",
                                                           "database", "user")},
                host=host_facts(), throughput_unit=wl.throughput_unit, pid=os.getpid(),
                phases=[vars(p) for p in wl.planned_phases(spec["params"])],
                python=sys.version.split()[0], started_epoch=time.time())
        if wl.probe:        # an external tool must be on this host before anything starts
            mod, _, fn = wl.probe.partition(":")
            why = getattr(importlib.import_module(mod), fn)(spec["params"])
            if why:
                raise DatabaseError(why)
        if spec["target"].get("managed"):      # a private server started for this run
            from .engine.servers.managed import start_for_run
            managed = start_for_run(spec, rundir, em)
            target = TargetInfo.from_spec(spec["target"], password)
        agent = Agent(spec["run_id"], spec, target, em, wl)
        signal.signal(signal.SIGTERM, lambda *_: agent.stop_requested.set())
        signal.signal(signal.SIGINT, lambda *_: agent.stop_requested.set())
        db = SqlSession(target)
        try:
            em.emit("setting", server_version=db.version(), source="server")
            from .engine.servers.settings import emit_settings
            emit_settings(em, db)
        finally:
            db.close()
        agent.start_sampling()
        mod, _, fn = wl.runner.partition(":")
        getattr(importlib.import_module(mod), fn)(agent)
        status = "ok"
    except StopRun:
        status, reason = "stopped", "stopped by the user"
    except (DatabaseError, ParamError, UnknownWorkload) as exc:
        reason = str(exc)
        em.emit("error", message=reason, fatal=True)
    except Exception as exc:  # report, never vanish: the app shows this sentence
        reason = f"the agent failed: {exc!r}"
        import traceback
        em.emit("error", message=reason, fatal=True, traceback=traceback.format_exc())
    finally:
        if agent is not None:
            agent.stop_sampling()
        if managed is not None:
            from .engine.servers.managed import stop_for_run
            stop_for_run(managed, em)
        em.emit("end", status=status, reason=reason)
        em.close()
        try:
            os.unlink(os.path.join(rundir, PIDFILE))
        except OSError:
            pass
    return 0 if status in ("ok", "stopped") else 1


def cmd_start(rundir: str) -> int:
    """Detached (double fork, setsid), so the run outlives the SSH connection.

    At most once per run folder: the app retries a start whose link dropped, and must not
    get a second agent beside the first. A repeated start prints the first one's pid
    (0 while it is not known yet).
    """
    try:
        os.close(os.open(os.path.join(rundir, STARTED), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o600))
    except FileExistsError:
        try:
            with open(os.path.join(rundir, PIDFILE)) as f:
                print(int(f.read().strip() or 0))
        except (OSError, ValueError):
            print(0)
        return 0
    return detach(lambda: cmd_run(rundir, echo=False), os.path.join(rundir, "agent.log"), rundir)


HEARTBEAT_S = 5.0      # an empty line after this long without output: a silent stream is a
                       # frozen link to the app, never an idle run


def cmd_follow(rundir: str, from_seq: int, poll: float = 0.1) -> int:
    """Print spool events with seq >= from_seq as they arrive; exit after `end`.

    A spool line that is not an event goes out as b"#OFFSET LINE" (OFFSET: where it starts
    in the spool), and only when it lies after event from_seq - 1, so the app counts each such
    line once however often it reconnects. While nothing is written, an empty line goes out
    every HEARTBEAT_S. Ends quietly when its reader is gone (the connection dropped).
    Exit 0 after the end event, 2 without a spool, 3 when the agent died without an end.
    """
    try:
        return _follow(rundir, from_seq, poll)
    except BrokenPipeError:
        # the app's side of the pipe is gone (a dropped link); nothing to say to anyone
        os._exit(0)


def _follow(rundir: str, from_seq: int, poll: float) -> int:
    path = os.path.join(rundir, SPOOL)
    out = sys.stdout.buffer
    started = last_out = time.monotonic()
    while not os.path.exists(path):
        if time.monotonic() - started > 30:
            print(f"no event spool in {rundir}", file=sys.stderr)
            return 2
        if time.monotonic() - last_out >= HEARTBEAT_S:
            out.write(b"\n")
            out.flush()
            last_out = time.monotonic()
        time.sleep(poll)
    parent = os.getppid()
    with open(path, "rb") as f:
        partial = b""
        pos = 0                 # spool offset of the first byte of `partial`
        prev_seq = 0            # seq of the last event line read
        idle = 0.0
        while True:
            chunk = f.read(1 << 16)
            if not chunk:
                out.flush()
                if os.getppid() != parent:      # the session that started us is gone
                    return 0
                if time.monotonic() - last_out >= HEARTBEAT_S:
                    out.write(b"\n")
                    out.flush()
                    last_out = time.monotonic()
                pidfile = os.path.join(rundir, PIDFILE)
                if idle > 2.0:
                    idle = 0.0
                    try:
                        with open(pidfile) as pf:
                            alive = pid_alive(int(pf.read().strip() or 0))
                    except (OSError, ValueError):
                        alive = False
                    if not alive:
                        rest = f.read()
                        if not rest:
                            return 3
                        partial += rest
                        continue
                time.sleep(poll)
                idle += poll
                continue
            idle = 0.0
            data = partial + chunk
            lines = data.split(b"\n")
            partial = lines.pop()
            for line in lines:
                start, pos = pos, pos + len(line) + 1
                if not line.strip():
                    continue
                try:
                    ev = json.loads(line)
                except ValueError:
                    ev = None
                seq = ev.get("seq") if isinstance(ev, dict) else None
                if not isinstance(seq, int):       # not an event: the app reports it, once
                    if prev_seq >= from_seq - 1:
                        out.write(b"#%d " % start + line + b"\n")
                        last_out = time.monotonic()
                    continue
                prev_seq = seq
                if seq >= from_seq:
                    out.write(line + b"\n")
                    last_out = time.monotonic()
                if ev.get("kind") == "end":
                    out.flush()
                    return 0
            out.flush()


def cmd_stop(rundir: str, wait: float) -> int:
    try:
        with open(os.path.join(rundir, PIDFILE)) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        print("no running agent in that run directory", file=sys.stderr)
        return 1
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return 0
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.05)
    return 0


def cmd_status(root: str) -> int:
    runs = []
    if os.path.isdir(root):
        for name in sorted(os.listdir(root)):
            rundir = os.path.join(root, name)
            pidfile = os.path.join(rundir, PIDFILE)
            state = "finished"
            pid = None
            if os.path.exists(pidfile):
                try:
                    with open(pidfile) as f:
                        pid = int(f.read().strip())
                    state = "running" if pid_alive(pid) else (
                        # it may have ended cleanly (and removed the file) since the read
                        "died" if os.path.exists(pidfile) else "finished")
                except (OSError, ValueError):
                    state = "unknown"
            runs.append({"run_id": name, "state": state, "pid": pid})
    print(json.dumps({"runs": runs}))
    return 0


def _newest_mtime(folder: str) -> float:
    newest = os.stat(folder).st_mtime
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            try:
                newest = max(newest, os.lstat(os.path.join(dirpath, name)).st_mtime)
            except OSError:
                pass
    return newest


def _size(folder: str) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def cmd_clean(root: str, older_than_days: float, dry_run: bool, keep: list[str]) -> int:
    """Remove run and plan folders under ROOT (~/.versus) untouched for longer than the given
    days; never one whose agent runs, nor a run of a plan that is running or starting, nor
    the runs named in `keep` (the app still needs their events).
    Prints {"removed" | "would_remove": [...], "kept": [...]} as JSON."""
    import shutil
    from .engine.planqueue import status as plan_status
    runs_root, plans_root = os.path.join(root, "runs"), os.path.join(root, "plans")
    now = time.time()
    busy: set[str] = set()          # run ids a live plan still needs
    candidates: list[dict] = []
    kept: list[dict] = []
    if os.path.isdir(plans_root):
        for name in sorted(os.listdir(plans_root)):
            plandir = os.path.join(plans_root, name)
            try:
                st = plan_status(plandir)
            except (OSError, ValueError):
                st = {"state": "unknown", "runs": {}}
            age = (now - _newest_mtime(plandir)) / 86400
            if st.get("state") in ("running", "starting"):
                busy.update(st.get("runs", {}))
                kept.append({"kind": "plan", "id": name, "why": st["state"]})
            elif age > older_than_days:
                candidates.append({"kind": "plan", "id": name, "path": plandir,
                                   "age_days": round(age, 1), "bytes": _size(plandir)})
    if os.path.isdir(runs_root):
        for name in sorted(os.listdir(runs_root)):
            rundir = os.path.join(runs_root, name)
            if not os.path.isdir(rundir):
                continue
            try:
                with open(os.path.join(rundir, PIDFILE)) as f:
                    running = pid_alive(int(f.read().strip() or 0))
            except (OSError, ValueError):
                running = False
            age = (now - _newest_mtime(rundir)) / 86400
            if running or name in busy or name in keep:
                kept.append({"kind": "run", "id": name,
                             "why": "running" if running else "its plan is running"
                             if name in busy else "a session file still needs its events"})
            elif age > older_than_days:
                candidates.append({"kind": "run", "id": name, "path": rundir,
                                   "age_days": round(age, 1), "bytes": _size(rundir)})
    if not dry_run:
        for c in candidates:
            shutil.rmtree(c["path"], ignore_errors=True)
            c["removed"] = not os.path.exists(c["path"])
    for c in candidates:
        del c["path"]
    print(json.dumps({"would_remove" if dry_run else "removed": candidates, "kept": kept}))
    return 0


def cmd_check() -> int:
    spec = json.loads(sys.stdin.readline() or "{}")
    password = sys.stdin.readline().rstrip("\n")
    try:
        db = SqlSession(TargetInfo.from_spec(spec, password))
        try:
            print(json.dumps({"ok": True, "version": db.version()}))
        finally:
            db.close()
    except DatabaseError as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 1
    return 0


def cmd_check_workload(name: str) -> int:
    """A workload's consistency check (its spec's `checker`) on the target; JSON with `ok`
    and `lines` on stdout. Exit 0 pass, 1 fail, 2 could not check."""
    spec = json.loads(sys.stdin.readline() or "{}")
    password = sys.stdin.readline().rstrip("\n")
    try:
        wl = get(name)
        if not wl.checker:
            raise UnknownWorkload(name)
        mod, _, fn = wl.checker.partition(":")
        checker = getattr(importlib.import_module(mod), fn)
    except UnknownWorkload:
        print(json.dumps({"ok": False, "error": f"workload {name!r} has no consistency check"}))
        return 2
    try:
        result = checker(TargetInfo.from_spec(spec, password))
    except DatabaseError as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 2
    except Exception as exc:  # a sentence, never a traceback, for the app
        print(json.dumps({"ok": False, "error": f"the check failed: {exc}"}))
        return 2
    print(json.dumps(result))
    return 0 if result["ok"] else 1


def cmd_probe(name: str) -> int:
    """Whether this host can run the workload with these parameters (its spec's `probe`: an
    external tool installed, a test name it knows), asked before the run is recorded; the
    resolved parameters come as JSON on stdin. Prints {"ok": true} or {"ok": false,
    "error": sentence}."""
    try:
        wl = get(name)
        values = wl.resolve(json.loads(sys.stdin.readline() or "{}"))
        why = None
        if wl.probe:
            mod, _, fn = wl.probe.partition(":")
            why = getattr(importlib.import_module(mod), fn)(values)
    except (ParamError, UnknownWorkload) as exc:
        why = str(exc)
    print(json.dumps({"ok": not why, "error": why}))
    return 0 if not why else 1


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0].startswith("plan-"):         # the host-side plan queue
        from .engine.planqueue import main as plan_main
        return plan_main(args)
    ap = argparse.ArgumentParser(prog="versus-agent")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("start", "run", "follow", "stop"):
        s = sub.add_parser(name)
        s.add_argument("--dir", required=True)
        if name == "follow":
            s.add_argument("--from-seq", type=int, default=1)
        if name == "stop":
            s.add_argument("--wait", type=float, default=10.0)
    sub.add_parser("status").add_argument("--root", required=True)
    cl = sub.add_parser("clean")
    cl.add_argument("--root", required=True)
    cl.add_argument("--older-than", type=float, required=True, metavar="DAYS")
    cl.add_argument("--dry-run", action="store_true")
    cl.add_argument("--keep", action="append", default=[], metavar="RUN_ID")
    sub.add_parser("check")
    sub.add_parser("check-workload").add_argument("--workload", required=True)
    sub.add_parser("probe").add_argument("--workload", required=True)
    sub.add_parser("apply-profile")
    sub.add_parser("workloads")
    sub.add_parser("version")
    a = ap.parse_args(argv)
    if a.cmd == "start":
        return cmd_start(a.dir)
    if a.cmd == "run":
        return cmd_run(a.dir, echo=True)
    if a.cmd == "follow":
        return cmd_follow(a.dir, a.from_seq)
    if a.cmd == "stop":
        return cmd_stop(a.dir, a.wait)
    if a.cmd == "status":
        return cmd_status(a.root)
    if a.cmd == "clean":
        return cmd_clean(a.root, a.older_than, a.dry_run, a.keep)
    if a.cmd == "check":
        return cmd_check()
    if a.cmd == "check-workload":
        return cmd_check_workload(a.workload)
    if a.cmd == "probe":
        return cmd_probe(a.workload)
    if a.cmd == "apply-profile":         # JSON spec, then the password, on stdin
        from .engine.servers.profile_apply import main as apply_main
        return apply_main()
    if a.cmd == "version":
        print(json.dumps({"agent_version": AGENT_VERSION, "format": events.FORMAT_VERSION}))
        return 0
    from .registry import WORKLOADS
    print(json.dumps([w.to_json() for w in WORKLOADS.values()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
