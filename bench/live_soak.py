"""The live view over a long run: the GUI's own CPU and memory as the run grows.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.live_soak [--hours 10] [--speed 60]
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.live_soak --real 30 [--warehouses 2]

Replay (default): the real main window (1366×768, offscreen) follows a TPROC-C stream built
from a recorded one (tests/fixtures/streams/tpcc-pg.jsonl: its measure phase's sample, host
and db events, repeated second after second with their times moved on), fed through the run
worker as the agent's lines would be, at ``--speed`` times real time. Every simulated hour
it prints the process's CPU per minute of run time over the last hour of the run (utime +
stime from /proc; in brackets the same as % of one core of wall time) and its RSS. The feeder runs in the same
process (as the run worker does) at a cost per event that does not grow with the run.

``--real N``: a real N-minute TPROC-C run on this machine's PostgreSQL (127.0.0.1:5432,
user postgres, a scratch database dropped at the end), followed by the same window; prints
the same figures every minute of wall time.

Target: CPU in hour 10 within 1.2× of hour 1; RSS growing by less than 10 MB per hour.
Run it against another checkout (the same sitting, for a before/after ratio) with
``PYTHONPATH=/path/to/checkout`` in front.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

FIXTURE = Path(__file__).resolve().parent.parent / "tests/fixtures/streams/tpcc-pg.jsonl"
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_s() -> float:
    """This process's user + system CPU seconds (every thread)."""
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def tpcc_stream(seconds: int):
    """A TPROC-C stream of ``seconds`` measured seconds, made from the recorded one: its
    hello, the measure phase's start, then its measure samples, host and db events for
    every second in turn (times moved on), the summary and the end."""
    evs = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    hello = next(e for e in evs if e["kind"] == "hello")
    start = next(e for e in evs if e["kind"] == "phase" and e.get("name") == "measure"
                 and e.get("state") == "start")
    t_start = start["t"]
    # one second's events of each kind, from the recorded measure phase
    seconds_of: dict[int, list[dict]] = {}
    for e in evs:
        if e["kind"] in ("sample", "host", "db") and e["t"] > t_start:
            seconds_of.setdefault(int(e["t"] - t_start), []).append(e)
    cycle = [seconds_of[k] for k in sorted(seconds_of)]
    seq = 0

    def out(e: dict, t: float) -> dict:
        nonlocal seq
        seq += 1
        e = dict(e, seq=seq, t=round(t, 4))
        iv = e.get("interval")
        if isinstance(iv, list) and len(iv) == 2:
            e["interval"] = [round(t - (iv[1] - iv[0]), 4), round(t, 4)]
        return e

    yield out(dict(hello, params={**hello["params"], "duration": seconds, "rampup": 0}), 0.0)
    yield out(dict(start, phase=None), 0.5)
    for s in range(1, seconds + 1):
        for e in cycle[s % len(cycle)]:
            yield out(dict(e, phase="measure") if e["kind"] == "sample" else e,
                      0.5 + s + (e["t"] - t_start) % 1.0)
    yield out({"kind": "phase", "name": "measure", "state": "end", "v": 1}, seconds + 1.0)
    yield out({"kind": "end", "status": "ok", "reason": "", "v": 1}, seconds + 1.1)


class PacedController:
    """Stands in for the run controller: hands the stream to the worker's callback in
    batches of one simulated second's worth of events at ``speed`` times real time."""

    def __init__(self, request, catalog=None, on_events=None, on_status=None,
                 seconds: int = 3600, speed: float = 60.0):
        self.request, self.on_events = request, on_events
        self.seconds, self.speed = seconds, speed
        self.run_id = "soak"
        self._stop = threading.Event()

    def run(self):
        from app.remote.runner import RunOutcome
        t0 = time.monotonic()
        batch: list[dict] = []
        sent_t = 0.0
        for ev in tpcc_stream(self.seconds):
            batch.append(ev)
            if ev["t"] - sent_t >= self.speed * 0.05:      # a batch every 50 ms of wall time
                due = t0 + ev["t"] / self.speed
                wait = due - time.monotonic()
                if wait > 0 and self._stop.wait(wait):
                    break
                self.on_events(self.run_id, batch)
                batch, sent_t = [], ev["t"]
        if batch:
            self.on_events(self.run_id, batch)
        return RunOutcome(self.run_id, "stopped" if self._stop.is_set() else "ok", "",
                          self.request.session_path)

    def stop(self):
        self._stop.set()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hours", type=float, default=10.0)
    ap.add_argument("--speed", type=float, default=60.0)
    ap.add_argument("--real", type=int, default=0, metavar="MINUTES",
                    help="a real TPROC-C run of this many measured minutes instead")
    ap.add_argument("--warehouses", type=int, default=2)
    ap.add_argument("--vus", type=int, default=2)
    a = ap.parse_args()

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.remote.runner import RunRequest
    from app.store.catalog import Catalog
    from app.ui.main_window import MainWindow
    try:
        from app.ui.common.settings import Settings
    except ImportError:                       # a checkout from before app/ui's folders
        from app.ui.settings import Settings

    home = tempfile.mkdtemp(prefix="versus-soak-")
    os.environ["VERSUS_HOME"] = home
    app = QApplication.instance() or QApplication(sys.argv[:1])
    import app.ui.main_window as mw
    print(f"code from {Path(mw.__file__).resolve().parent.parent.parent}", flush=True)
    sessions = Path(home) / "sessions"
    sessions.mkdir()
    seconds = int(a.hours * 3600)
    scratch = None
    if a.real:
        from bench._common import parse_engines
        eng = parse_engines("pg")[0]
        scratch = eng.scratch_database("versus_soak")
        db = scratch.__enter__()
        request = RunRequest(host="local", target=eng.versus_target(db), workload="tpcc",
                             params={"warehouses": a.warehouses, "vus": a.vus,
                                     "rampup": 60, "duration": a.real * 60,
                                     "use-all-warehouses": True},
                             session_path=sessions / "soak.versus")
        factory = None
        mark_s, label = 60.0, "minute"
    else:
        request = RunRequest(host="local", target="embedded-postgres", workload="tpcc",
                             params={}, session_path=None)

        def factory(req, **kw):
            return PacedController(req, seconds=seconds, speed=a.speed, **kw)
        mark_s, label = 3600.0, "hour"
    w = MainWindow(Catalog(Path(home) / "config"), sessions,
                   settings=Settings(Path(home) / "ui.ini"), controller_factory=factory)
    w.resize(1366, 768)
    w.show()
    rows: list[tuple[int, float, float, float]] = []
    last = [time.monotonic(), cpu_s(), 0.0]
    t_begin = time.monotonic()

    def tick() -> None:
        """At each mark of the run's clock: CPU since the previous mark, RSS now."""
        run_t = w.store.state().last_t
        if run_t < (len(rows) + 1) * mark_s:
            return
        now, c = time.monotonic(), cpu_s()
        k = len(rows) + 1
        per_run_min = (c - last[1]) / max(run_t - last[2], 1e-9) * 60.0
        share = 100.0 * (c - last[1]) / (now - last[0])
        rows.append((k, per_run_min, rss_mb(), share))
        last[:] = [now, c, run_t]
        print(f"{label} {k:3d}: GUI CPU {per_run_min:6.2f} s per minute of run "
              f"({share:5.1f} % of one core)   RSS {rss_mb():6.1f} MB   store "
              f"{getattr(w.store, 'nbytes', lambda: 0)() / 1e6:5.1f} MB", flush=True)

    timer = QTimer()
    timer.setInterval(100)
    timer.timeout.connect(tick)
    w.run_ended.connect(lambda _o: QTimer.singleShot(500, app.quit))
    w.start_run(request)
    timer.start()
    limit_s = (a.real * 60 + 600) if a.real else seconds / a.speed + 120
    QTimer.singleShot(int(limit_s * 1000), app.quit)
    app.exec()
    timer.stop()
    if w.is_running():
        w._worker.stop()
    if scratch is not None:
        w.tasks.wait(10_000)
        time.sleep(2)
        scratch.__exit__(None, None, None)
    print(f"wall {time.monotonic() - t_begin:.0f} s")
    if len(rows) >= 2:
        first, final = rows[0], rows[-1]
        per = (final[2] - first[2]) / max(1, len(rows) - 1)
        print(f"CPU {label} {final[0]} / {label} 1: {final[1] / max(first[1], 1e-9):.2f}x "
              f"per minute of run   "
              f"RSS growth {per:+.1f} MB per {label} ({first[2]:.1f} -> {final[2]:.1f} MB)")
    os._exit(0)


if __name__ == "__main__":
    main()
