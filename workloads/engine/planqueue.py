"""The host side of a plan: one detached process runs a queue of runs one after another, so a
plan goes on while the laptop sleeps or the link is down.

    python -m workloads.agent plan-start   --dir PLANDIR     # detached, prints the pid
    python -m workloads.agent plan-run     --dir PLANDIR     # in the foreground
    python -m workloads.agent plan-status  --dir PLANDIR     # state.json (+ liveness)
    python -m workloads.agent plan-control --dir PLANDIR --op skip|cancel|order [--run ID ...]
    python -m workloads.agent plan-list    --root PLANSROOT

PLANDIR holds plan.json (written by the app: plan_id, name, pause_s, stop_on_failure, and
runs: [{run_id, rundir, label, planned_s}]), state.json (written only by the plan process,
atomically: per run waiting/loading/running/done/failed/skipped), control/ (requests from
the app, one small JSON file each, consumed in order) and plan.log. Each run's own folder
(spec.json, events.jsonl …) was prepared by the app; the plan process runs
`python -m workloads.agent run --dir RUNDIR` for it, the same code as a single run.
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time

from .daemon import detach, pid_alive

STATES = ("waiting", "loading", "running", "done", "failed", "skipped")
FINAL = ("done", "failed", "skipped")
POLL = 0.2


def _write_json(path: str, data: dict) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_json(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


class PlanRunner:
    def __init__(self, plandir: str):
        self.dir = plandir
        self.plan = _read_json(os.path.join(plandir, "plan.json"))
        self.runs = {r["run_id"]: r for r in self.plan["runs"]}
        self.state_path = os.path.join(plandir, "state.json")
        self.control = os.path.join(plandir, "control")
        os.makedirs(self.control, mode=0o700, exist_ok=True)
        if os.path.exists(self.state_path):
            self.state = _read_json(self.state_path)
        else:
            self.state = {"plan_id": self.plan["plan_id"], "name": self.plan.get("name", ""),
                          "state": "running", "created": time.time(),
                          "pause_s": self.plan.get("pause_s", 0),
                          "order": [r["run_id"] for r in self.plan["runs"]],
                          "runs": {r["run_id"]: {"state": "waiting", "label": r.get("label", ""),
                                                 "planned_s": r.get("planned_s")}
                                   for r in self.plan["runs"]}}
        self.cancelled = False
        self.child: subprocess.Popen | None = None
        self.current: str | None = None
        self.skip_current = False

    # --- state --------------------------------------------------------------------------
    def save(self) -> None:
        self.state["updated"] = time.time()
        self.state["pid"] = os.getpid()
        _write_json(self.state_path, self.state)

    def set_run(self, run_id: str, **kw) -> None:
        self.state["runs"][run_id].update(kw)
        self.save()

    def log(self, msg: str) -> None:
        with open(os.path.join(self.dir, "plan.log"), "a") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {msg}\n")

    # --- control requests ---------------------------------------------------------------
    def handle_control(self) -> None:
        try:
            names = sorted(os.listdir(self.control))
        except OSError:
            return
        for name in names:
            path = os.path.join(self.control, name)
            if not name.endswith(".json"):
                continue
            try:
                req = _read_json(path)
            except (OSError, ValueError):
                req = {}
            try:
                os.unlink(path)
            except OSError:
                pass
            self.apply(req)

    def apply(self, req: dict) -> None:
        op = req.get("op")
        runs = self.state["runs"]
        if op == "skip":
            for rid in req.get("runs", []):
                st = runs.get(rid, {}).get("state")
                if st == "waiting":
                    self.set_run(rid, state="skipped", reason="skipped by the user")
                elif rid == self.current and st in ("loading", "running"):
                    self.skip_current = True
                    self.stop_child()
            self.log(f"skip {req.get('runs')}")
        elif op == "cancel":
            self.cancelled = True
            for rid in self.state["order"]:
                if runs[rid]["state"] == "waiting":
                    runs[rid].update(state="skipped", reason="the plan was cancelled")
            self.save()
            if self.current:
                self.skip_current = True
                self.stop_child()
            self.log("cancel")
        elif op == "order":
            want = [r for r in req.get("runs", []) if runs.get(r, {}).get("state") == "waiting"]
            order = self.state["order"]
            fixed = [r for r in order if runs[r]["state"] != "waiting"]
            rest = [r for r in order if runs[r]["state"] == "waiting" and r not in want]
            self.state["order"] = fixed + want + rest
            self.save()
            self.log(f"order {self.state['order']}")

    def stop_child(self) -> None:
        if self.child is not None and self.child.poll() is None:
            try:
                self.child.send_signal(signal.SIGTERM)   # a clean stop: summary, server stopped
            except ProcessLookupError:
                pass

    # --- the queue ----------------------------------------------------------------------
    def next_run(self) -> str | None:
        for rid in self.state["order"]:
            if self.state["runs"][rid]["state"] == "waiting":
                return rid
        return None

    def sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.cancelled:
            self.handle_control()
            if self.next_run() is None:
                return
            time.sleep(min(POLL, max(0.0, end - time.monotonic())))

    def run(self) -> int:
        # a signal only leaves a request; the loop applies it (state.json has one writer)
        signal.signal(signal.SIGTERM, lambda *_: control(self.dir, "cancel", []))
        signal.signal(signal.SIGINT, lambda *_: control(self.dir, "cancel", []))
        self.state["state"] = "running"
        self.save()
        self.log(f"plan {self.plan['plan_id']} started, {len(self.runs)} run(s)")
        first = True
        failed_stop = False
        while not self.cancelled:
            self.handle_control()
            rid = self.next_run()
            if rid is None:
                break
            if not first and self.plan.get("pause_s"):
                self.sleep(float(self.plan["pause_s"]))
                rid = self.next_run()
                if rid is None or self.cancelled:
                    break
            first = False
            ok = self.run_one(rid)
            if not ok and self.plan.get("stop_on_failure"):
                failed_stop = True
                for r in self.state["order"]:
                    if self.state["runs"][r]["state"] == "waiting":
                        self.state["runs"][r].update(state="skipped",
                                                     reason=f"the plan stopped after {rid} failed")
                break
        self.state["state"] = ("cancelled" if self.cancelled else
                               "failed" if failed_stop else "done")
        self.state["ended"] = time.time()
        self.save()
        self.log(f"plan ended: {self.state['state']}")
        return 0

    def run_one(self, rid: str) -> bool:
        run = self.runs[rid]
        rundir = run["rundir"]
        self.current, self.skip_current = rid, False
        self.set_run(rid, state="loading", started=time.time())
        self.log(f"run {rid} ({run.get('label', '')}) starting")
        spool = os.path.join(rundir, "events.jsonl")
        env = dict(os.environ)
        with open(os.path.join(rundir, "agent.log"), "ab") as log:
            try:
                self.child = subprocess.Popen(
                    [sys.executable, "-m", "workloads.agent", "run", "--dir", rundir],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                    cwd=rundir, env=env)
            except OSError as exc:
                self.set_run(rid, state="failed", ended=time.time(),
                             reason=f"could not start the run: {exc}")
                self.current = None
                return False
        pos, partial, end_ev, state = 0, b"", None, "loading"
        while True:
            done = self.child.poll() is not None
            self.handle_control()
            try:
                with open(spool, "rb") as f:
                    f.seek(pos)
                    data = f.read()
                    pos += len(data)
            except OSError:
                data = b""
            if data:
                lines = (partial + data).split(b"\n")
                partial = lines.pop()
                for line in lines:
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(ev, dict):
                        continue
                    if ev.get("kind") == "phase" and ev.get("state") == "start":
                        # the agent says each phase's declared role
                        new = "loading" if ev.get("role") == "load" else "running"
                        if new != state:
                            state = new
                            self.set_run(rid, state=state, phase=ev.get("name"))
                    elif ev.get("kind") == "end":
                        end_ev = ev
            if done:
                break
            time.sleep(POLL)
        status = (end_ev or {}).get("status")
        reason = (end_ev or {}).get("reason", "")
        if end_ev is None:
            final = "failed"
            reason = (f"the agent ended without finishing the run (exit code "
                      f"{self.child.returncode}); see {rundir}/agent.log")
        elif self.skip_current:
            final = "skipped"
            reason = "skipped by the user while it ran" if not self.cancelled else \
                "the plan was cancelled while it ran"
        else:
            final = "done" if status == "ok" else "failed"
        self.set_run(rid, state=final, status=status or "failed", reason=reason,
                     ended=time.time())
        self.log(f"run {rid} {final} {reason}")
        self.child, self.current = None, None
        return final != "failed"


# --- commands ---------------------------------------------------------------------------

def status(plandir: str) -> dict:
    try:
        st = _read_json(os.path.join(plandir, "state.json"))
    except FileNotFoundError:
        plan = _read_json(os.path.join(plandir, "plan.json"))
        st = {"plan_id": plan["plan_id"], "name": plan.get("name", ""), "state": "starting",
              "order": [r["run_id"] for r in plan["runs"]],
              "runs": {r["run_id"]: {"state": "waiting", "label": r.get("label", ""),
                                     "planned_s": r.get("planned_s")} for r in plan["runs"]}}
    if st.get("state") == "running" and st.get("pid") and not pid_alive(int(st["pid"])):
        # it may have written its final state and exited since the read above
        st = _read_json(os.path.join(plandir, "state.json"))
        if st.get("state") == "running":
            st["state"] = "died"
    st["now"] = time.time()
    return st


def control(plandir: str, op: str, runs: list[str]) -> None:
    d = os.path.join(plandir, "control")
    os.makedirs(d, mode=0o700, exist_ok=True)
    name = f"{time.time_ns():020d}-{secrets.token_hex(3)}"
    _write_json(os.path.join(d, name + ".tmp-json"), {"op": op, "runs": runs})
    os.replace(os.path.join(d, name + ".tmp-json"), os.path.join(d, name + ".json"))


def main(argv: list[str]) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="versus-agent")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("plan-start", "plan-run", "plan-status"):
        sp = sub.add_parser(name)
        sp.add_argument("--dir", required=True)
        if name == "plan-status":
            sp.add_argument("--full", action="store_true", help="include plan.json")
    c = sub.add_parser("plan-control")
    c.add_argument("--dir", required=True)
    c.add_argument("--op", required=True, choices=("skip", "cancel", "order"))
    c.add_argument("--run", action="append", default=[])
    sub.add_parser("plan-list").add_argument("--root", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "plan-start":
        if os.path.exists(os.path.join(a.dir, "state.json")):
            st = status(a.dir)
            if st.get("state") == "running":
                print(f"the plan in {a.dir} is already running (pid {st.get('pid')})",
                      file=sys.stderr)
                return 1
        return detach(lambda: PlanRunner(a.dir).run(), os.path.join(a.dir, "plan.log"), a.dir)
    if a.cmd == "plan-run":
        return PlanRunner(a.dir).run()
    if a.cmd == "plan-status":
        st = status(a.dir)
        if a.full:
            st["plan"] = _read_json(os.path.join(a.dir, "plan.json"))
        print(json.dumps(st))
        return 0
    if a.cmd == "plan-control":
        control(a.dir, a.op, a.run)
        return 0
    plans = []
    if os.path.isdir(a.root):
        for name in sorted(os.listdir(a.root)):
            d = os.path.join(a.root, name)
            if os.path.exists(os.path.join(d, "plan.json")):
                try:
                    st = status(d)
                except (OSError, ValueError):
                    continue
                counts: dict[str, int] = {}
                for r in st["runs"].values():
                    counts[r["state"]] = counts.get(r["state"], 0) + 1
                plans.append({"plan_id": name, "name": st.get("name", ""),
                              "state": st.get("state"), "runs": counts,
                              "created": st.get("created")})
    print(json.dumps({"plans": plans}))
    return 0
