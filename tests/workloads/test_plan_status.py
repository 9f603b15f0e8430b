"""The host-side plan status: a plan whose process is gone is 'died' only if it never wrote
its final state."""
import json
import subprocess
import sys

from workloads.engine import planqueue as plan


def _write(d, state, pid):
    (d / "state.json").write_text(json.dumps({"plan_id": "p", "state": state, "pid": pid,
                                              "runs": {}, "order": []}))


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_plan_process_gone_while_running_has_died(tmp_path):
    _write(tmp_path, "running", _dead_pid())
    assert plan.status(str(tmp_path))["state"] == "died"


def test_a_plan_that_wrote_done_just_before_exiting_is_done(tmp_path, monkeypatch):
    # The race: status reads 'running', then the plan writes 'done' and exits before the
    # liveness check. No real timing can hit that window reliably, so the liveness check is
    # replaced by one that lets the plan finish first (the only stand-in in this file).
    pid = _dead_pid()
    _write(tmp_path, "running", pid)

    def finishes_then_gone(p: int) -> bool:
        _write(tmp_path, "done", pid)
        return False

    monkeypatch.setattr(plan, "pid_alive", finishes_then_gone)
    assert plan.status(str(tmp_path))["state"] == "done"
