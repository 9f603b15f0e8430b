"""`versus show` prints a failed run's errors; `versus host clean` removes old run folders
after asking, never a running one nor one a session file still needs."""
import json
import os
import subprocess
import time

from app.store.session import SessionFile
from tests.dbs import versus


def test_show_prints_the_errors_the_reason_points_at(versus_home, tmp_path):
    path = tmp_path / "failed.versus"
    with SessionFile(path, readonly=False) as s:
        s.add_run("r1", "point-query", "pg", "local", {})
        msgs = ["virtual user 1 lost its connection: server closed the connection\nat line 3",
                "virtual user 2 lost its connection: server closed the connection\nat line 3",
                "virtual user 1 lost its connection: server closed the connection\nat line 3"]
        evs = [{"v": 1, "seq": 1, "t": 0.0, "kind": "hello"}]
        evs += [{"v": 1, "seq": 2 + i, "t": 1.0 + i, "kind": "error", "message": m}
                for i, m in enumerate(msgs)]
        reason = "every virtual user stopped; see the errors above"
        evs.append({"v": 1, "seq": 5, "t": 5.0, "kind": "end", "status": "failed",
                    "reason": reason})
        s.append_events("r1", evs)
        s.finish_run("r1", "failed", reason)
    r = versus("show", str(path))
    assert r.returncode == 0, r.stderr
    assert ("error: virtual user 1 lost its connection: server closed the connection (2 times)"
            in r.stdout)
    assert "error: virtual user 2 lost its connection" in r.stdout
    assert r.stdout.index(reason) < r.stdout.index("error: virtual user 1")


def _folder(root, kind, name, days_old, pid=None, state=None):
    d = root / kind / name
    d.mkdir(parents=True)
    (d / ("events.jsonl" if kind == "runs" else "plan.json")).write_text(
        "{}\n" if kind == "runs" else json.dumps({"plan_id": name, "runs": []}))
    if pid is not None:
        (d / "agent.pid").write_text(str(pid))
    if state is not None:
        (d / "state.json").write_text(json.dumps({"plan_id": name, "state": state,
                                                  "pid": pid, "runs": {"r-plan": {}}}))
    old = time.time() - days_old * 86400
    for p in [*d.iterdir(), d]:
        os.utime(p, (old, old))
    return d


def test_host_clean_asks_first_and_keeps_what_is_needed(versus_home, tmp_path):
    home = tmp_path / "host-home"
    root = versus_home / "host"             # the `local` host's folders under VERSUS_HOME
    alive = subprocess.Popen(["sleep", "60"])
    try:
        old = _folder(root, "runs", "r-old", 40)
        young = _folder(root, "runs", "r-young", 2)
        running = _folder(root, "runs", "r-running", 40, pid=alive.pid)
        needed = _folder(root, "runs", "r-open", 40)
        in_plan = _folder(root, "runs", "r-plan", 40)
        plan_live = _folder(root, "plans", "plan-live", 40, pid=alive.pid, state="running")
        plan_done = _folder(root, "plans", "plan-done", 40, state="done")
        with SessionFile(versus_home / "data" / "sessions" / "s.versus", readonly=False) as s:
            s.add_run("r-open", "point-query", "pg", "local", {})      # open: no end stored
        env = {"HOME": str(home)}
        r = versus("host", "clean", "local", env=env, input="")
        assert r.returncode == 2 and "--yes" in r.stderr, r.stdout + r.stderr
        assert "run r-old" in r.stdout and "plan plan-done" in r.stdout
        assert old.exists() and plan_done.exists()               # asked, nothing removed
        r = versus("host", "clean", "local", "--yes", env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "removed 2 folder(s)" in r.stdout
        assert not old.exists() and not plan_done.exists()
        for kept in (young, running, needed, in_plan, plan_live):
            assert kept.exists(), kept
        assert "keeping run r-open: open in" in r.stdout
        r = versus("host", "clean", "local", "--older-than", "1", "--yes", env=env)
        assert r.returncode == 0 and not young.exists() and running.exists()
    finally:
        alive.kill()
        alive.wait()
