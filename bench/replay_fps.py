"""Replay of 4 runs × 2 h at 100×: frames per second as the Compare view draws them.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.replay_fps [--dir /tmp/versus-bench]

Opens the comparison as the Compare view does and builds its charts with the view's own
panes (app.ui.compare.panes: throughput, latency p50/p95/p99 and host CPU, one colour per
run, linked time axes, peak downsampling) in a shown 1600×900 window, then plays: each frame
moves the time by speed / 30 s, hands it to the panes, reads the values panel
(Comparison.values_at) and lets the event loop paint. Cases:

- "as if live": the lines grow up to the cursor (app.ui.compare.replay.ReplayOverlay: a still
  picture of the charts without their lines, a layer the new segments are added to, and
  the cursors), looping back to the start at the end (the layer is redrawn from there);
- "scrub over a still picture": paused, the scrubber dragged: every line whole in a picture
  taken once, the cursors drawn over it;
- "cursor items, no picture": the cursor lines moved inside the plots (Qt re-strokes the
  curves under them: what scrubbing would cost without the picture);
- "10-min window follows": a zoomed time axis that moves with the cursor (every frame
  re-clips and re-samples the curves).

Target: above 30 frames per second for "as if live" and for scrubbing at 100×. The session files are made
once by bench/sessions.py (about 50 MB each) and reused.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/versus-bench")
    ap.add_argument("--speed", type=float, default=100.0)
    ap.add_argument("--frames", type=int, default=150)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--hours", type=float, default=2.0)
    a = ap.parse_args()

    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from app.analysis.compare import load_comparison
    from app.analysis.metrics import CHARTS
    from app.model.runset import RunRef
    from app.ui.compare.panes import ComparePanes
    from bench.sessions import make_sessions

    paths = sorted(Path(a.dir).glob("run*.versus"))[:a.runs]
    if len(paths) < a.runs:
        paths = make_sessions(Path(a.dir), a.runs, a.hours)
    app = QApplication.instance() or QApplication([])
    pg.setConfigOptions(background="w", foreground="#333333", antialias=True)
    comp = load_comparison([RunRef(str(p)) for p in paths], align="measure")
    names = ["throughput", "latency", "cpu"]
    panes = ComparePanes()
    panes.view.resize(1600, 900)
    panes.view.show()
    lo, hi = comp.time_range()
    panes.build(comp, names, "overlay", lo)
    app.processEvents()
    step = a.speed / 30.0
    keys = [k for n in names for k in CHARTS[n].metrics]

    def play(mode: str) -> list[float]:
        times = []
        t = lo
        if mode != "follow":
            panes.set_x_view(lo, hi, padding=0)
        app.processEvents()
        if mode == "live":
            panes.freeze(t)
        elif mode == "scrub":
            panes.freeze(t, grow=False)
        else:
            panes.thaw()
        for _ in range(a.frames):
            t0 = time.perf_counter()
            t = t + step if t + step <= hi else lo            # loop
            if mode == "follow":
                panes.set_x_view(t - 300, t + 300, padding=0)
            panes.set_time(t)
            comp.values_at(t, keys)                          # the values panel
            # the moved items and the overlay post updates, and the event loop paints them
            # (processEvents paints synchronously offscreen)
            app.processEvents()
            times.append(time.perf_counter() - t0)
        return times

    points = sum(len(comp.series(i, k)[0]) for i in range(len(comp)) for k in keys)
    print(f"{len(comp)} runs × {(hi - lo) / 3600:.1f} h, {len(names)} charts, {points:,} "
          f"points, speed {a.speed:.0f}× ({step:.2f} s of run per frame), 1600×900; load "
          f"average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for label, mode in (("as if live (lines grow)", "live"),
                        ("scrub over a still picture", "scrub"),
                        ("cursor items, no picture", "items"),
                        ("10-min window follows", "follow")):
        play(mode)                                           # warm-up
        painted = panes.overlay.painted
        ts = play(mode)
        if mode in ("live", "scrub"):
            assert panes.overlay.painted - painted >= a.frames, "the overlay skipped frames"
            panes.overlay.widget.grab().save(f"{a.dir}/replay-{mode}.png")
        med = statistics.median(ts) * 1000
        p95 = sorted(ts)[int(len(ts) * 0.95)] * 1000
        print(f"  {label:<26} median {med:6.1f} ms/frame  p95 {p95:6.1f} ms  "
              f"→ {1000 / med:5.0f} fps (median), {len(ts) / sum(ts):5.0f} fps (mean)")
    panes.thaw()


if __name__ == "__main__":
    main()
