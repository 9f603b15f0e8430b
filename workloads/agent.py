"""The Versus agent: runs a workload on the benchmark host and keeps its event spool.

    python -m workloads.agent start  --dir RUNDIR        # detached (setsid), prints the pid
    python -m workloads.agent run    --dir RUNDIR        # in the foreground, events on stdout
    python -m workloads.agent follow --dir RUNDIR [--from-seq N]
    python -m workloads.agent stop   --dir RUNDIR
    python -m workloads.agent status --root RUNSROOT
    python -m workloads.agent check                      # target spec as JSON on stdin
    python -m workloads.agent check-tpcc                 # TPC-C consistency, same input
    python -m workloads.agent apply-profile              # apply a profile: see profile_apply.py
    python -m workloads.agent workloads
    python -m workloads.agent plan-start|plan-run|plan-status|plan-control|plan-list …
                                                         # plans: see workloads/plan.py

RUNDIR holds spec.json (workload, params, target; no secret), an optional `secret` file
(mode 0600, read and removed at start), events.jsonl (the spool, the source of truth),
agent.pid and agent.log.
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
from .daemon import detach
from .db import DatabaseError, SqlSession, TargetInfo
from .driver import AGENT_VERSION, Agent, Emitter, StopRun
from .params import ParamError
from .registry import UnknownWorkload, get
from .sampler import host_facts

SPOOL = "events.jsonl"
PIDFILE = "agent.pid"


def _read_secret(rundir: str) -> str:
    path = os.path.join(rundir, "secret")
    try:
        with open(path) as f:
            secret = f.read()
    except FileNotFoundError:
        return os.environ.get("VERSUS_DB_PASSWORD", "")
    os.unlink(path)
    return secret.rstrip("\n")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not alive
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True


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
                python=sys.version.split()[0], started_epoch=time.time())
        if spec["target"].get("managed"):      # a private server started for this run
            from .managed import start_for_run
            managed = start_for_run(spec, rundir, em)
            target = TargetInfo.from_spec(spec["target"], password)
        agent = Agent(spec["run_id"], spec, target, em, wl.throughput_unit)
        signal.signal(signal.SIGTERM, lambda *_: agent.stop_requested.set())
        signal.signal(signal.SIGINT, lambda *_: agent.stop_requested.set())
        db = SqlSession(target)
        try:
            em.emit("setting", server_version=db.version(), source="server")
            from .settings import emit_settings
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
            from .managed import stop_for_run
            stop_for_run(managed, em)
        em.emit("end", status=status, reason=reason)
        em.close()
        try:
            os.unlink(os.path.join(rundir, PIDFILE))
        except OSError:
            pass
    return 0 if status in ("ok", "stopped") else 1


def cmd_start(rundir: str) -> int:
    """Detached (double fork, setsid), so the run outlives the SSH connection."""
    return detach(lambda: cmd_run(rundir, echo=False), os.path.join(rundir, "agent.log"), rundir)

def cmd_follow(rundir: str, from_seq: int, poll: float = 0.1) -> int:
    """Print spool events with seq >= from_seq as they arrive; exit after `end`.

    Exit 0 after the end event, 3 when the agent died without writing one.
    """
    path = os.path.join(rundir, SPOOL)
    out = sys.stdout.buffer
    deadline = time.monotonic() + 30
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            print(f"no event spool in {rundir}", file=sys.stderr)
            return 2
        time.sleep(poll)
    with open(path, "rb") as f:
        partial = b""
        idle = 0.0
        while True:
            chunk = f.read(1 << 16)
            if not chunk:
                out.flush()
                pidfile = os.path.join(rundir, PIDFILE)
                if idle > 2.0:
                    idle = 0.0
                    try:
                        with open(pidfile) as pf:
                            alive = _pid_alive(int(pf.read().strip() or 0))
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
                if not line.strip():
                    continue
                try:
                    ev = json.loads(line)
                    seq = ev.get("seq", 0) if isinstance(ev, dict) else 0
                except ValueError:
                    ev, seq = {}, from_seq      # not an event: pass it on, the app reports it
                if not isinstance(ev, dict):
                    ev = {}
                if seq >= from_seq:
                    out.write(line + b"\n")
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
    while time.monotonic() < deadline and _pid_alive(pid):
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
                    state = "running" if _pid_alive(pid) else (
                        # it may have ended cleanly (and removed the file) since the read
                        "died" if os.path.exists(pidfile) else "finished")
                except (OSError, ValueError):
                    state = "unknown"
            runs.append({"run_id": name, "state": state, "pid": pid})
    print(json.dumps({"runs": runs}))
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


def cmd_check_tpcc() -> int:
    """TPC-C consistency conditions on the target; JSON on stdout. Exit 0 pass, 1 fail,
    2 could not check."""
    spec = json.loads(sys.stdin.readline() or "{}")
    password = sys.stdin.readline().rstrip("\n")
    from .tpcc import check
    try:
        result = check.check(TargetInfo.from_spec(spec, password))
    except DatabaseError as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 2
    except Exception as exc:  # a sentence, never a traceback, for the app
        print(json.dumps({"ok": False, "error": f"the check failed: {exc}"}))
        return 2
    print(json.dumps(result))
    return 0 if result["ok"] else 1


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0].startswith("plan-"):         # the host-side plan queue
        from .plan import main as plan_main
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
    sub.add_parser("check")
    sub.add_parser("check-tpcc")
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
    if a.cmd == "check":
        return cmd_check()
    if a.cmd == "check-tpcc":
        return cmd_check_tpcc()
    if a.cmd == "apply-profile":         # JSON spec, then the password, on stdin
        from .profile_apply import main as apply_main
        return apply_main()
    if a.cmd == "version":
        print(json.dumps({"agent_version": AGENT_VERSION, "format": events.FORMAT_VERSION}))
        return 0
    from .registry import WORKLOADS
    print(json.dumps([w.to_json() for w in WORKLOADS.values()]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
