"""Replay at 100×: time per redraw of 3 charts × 4 runs of 2 h while the cursor moves.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.replay_fps [--dir /tmp/versus-bench]

Builds the charts as the Compare view does (pyqtgraph, clip to view, peak downsampling, one
colour per run, linked time axes) in a shown 1600×900 window, then plays: each frame moves
the one clock by speed / 30 s, moves the cursor on every chart, reads the values panel
(Comparison.values_at) and lets the event loop paint. Three cases: the whole run in view
with the cursor drawn over a frozen picture of the charts (app.ui.render.CursorOverlay),
the same with the cursor as InfiniteLine items inside the plots (Qt then re-strokes every
curve under the line), and a 10-minute window that follows the cursor (every frame
re-clips and re-samples the curves). Target: above 30 frames per second at 100×.
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
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--antialias", action="store_true", help="antialiased curves (slower)")
    ap.add_argument("--solid", action="store_true", help="solid lines only (no dashes)")
    a = ap.parse_args()

    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from app.analysis.compare import load_comparison
    from app.model.runset import CHARTS, METRICS, RunRef
    from app.ui.render import CursorOverlay, ElapsedSlideAxis

    paths = sorted(Path(a.dir).glob("run*.versus"))
    if len(paths) < 4:
        raise SystemExit(f"no sessions in {a.dir}: run python -m bench.compare_open first")
    app = QApplication.instance() or QApplication([])
    pg.setConfigOptions(background="w", foreground="#333333", antialias=a.antialias)
    comp = load_comparison([RunRef(str(p)) for p in paths[:4]], align="measure")

    w = pg.GraphicsLayoutWidget()
    w.resize(1600, 900)
    plots, cursors = [], []
    for row, name in enumerate(("throughput", "latency", "cpu")):
        p = w.addPlot(row=row, col=0, axisItems={"bottom": ElapsedSlideAxis("bottom")})
        p.setClipToView(True)
        p.setDownsampling(auto=True, mode="peak")
        p.showGrid(x=True, y=True, alpha=0.15)
        for i, r in enumerate(comp.runs):
            for k in CHARTS[name].metrics:
                t, v = comp.series(i, k)
                style = 1 if a.solid else {"solid": 1, "dash": 2, "dot": 3}[METRICS[k].style]
                item = p.plot(np.frombuffer(t), np.frombuffer(v),
                              pen=pg.mkPen(r.colour, width=1.5,
                                           style=pg.QtCore.Qt.PenStyle(style)))
                del item
        if plots:
            p.setXLink(plots[0])
        line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#222222", width=1.5))
        p.addItem(line, ignoreBounds=True)
        plots.append(p)
        cursors.append(line)
    w.show()
    app.processEvents()
    lo, hi = comp.time_range()
    step = a.speed / 30.0
    keys = [k for n in ("throughput", "latency", "cpu") for k in CHARTS[n].metrics]

    overlay = CursorOverlay(w, plots)

    def play(mode: str) -> list[float]:
        """mode: "overlay" (frozen charts, cursor on top), "items" (cursor lines in the
        plots: Qt repaints the curves under them), "follow" (10-minute window that moves)."""
        times = []
        t = lo
        if mode != "follow":
            plots[0].setXRange(lo, hi, padding=0)
            for p in plots:
                p.enableAutoRange(axis="y", enable=False)
            app.processEvents()
        if mode == "overlay":
            overlay.freeze()
        else:
            overlay.thaw()
        for _ in range(a.frames):
            t0 = time.perf_counter()
            t = t + step if t + step <= hi else lo            # loop
            if mode == "overlay":
                overlay.set_time(t)
            else:
                for c in cursors:
                    c.setValue(t)
            if mode == "follow":
                plots[0].setXRange(t - 300, t + 300, padding=0)
            comp.values_at(t, keys)                          # the values panel
            # the moved items post an update of the region they cover, and the event loop
            # paints it (processEvents paints synchronously offscreen)
            app.processEvents()
            times.append(time.perf_counter() - t0)
        return times

    print(f"{len(comp)} runs × {(hi - lo) / 3600:.1f} h, 3 charts, "
          f"{sum(len(comp.series(i, k)[0]) for i in range(len(comp)) for k in keys):,} points, "
          f"speed {a.speed:.0f}× ({step:.2f} s of run per frame); load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for label, mode in (("cursor over frozen charts", "overlay"),
                        ("cursor items in the plots", "items"),
                        ("10-min window follows", "follow")):
        play(mode)                                           # warm-up
        painted = overlay.painted
        ts = play(mode)
        if mode == "overlay":
            assert overlay.painted - painted >= a.frames, "the overlay did not paint each frame"
            overlay.widget.grab().save(f"{a.dir}/replay-overlay.png")
        med = statistics.median(ts) * 1000
        p95 = sorted(ts)[int(len(ts) * 0.95)] * 1000
        print(f"  {label:<26} median {med:6.1f} ms/frame  p95 {p95:6.1f} ms  "
              f"→ {1000 / med:5.0f} fps (median)")


if __name__ == "__main__":
    main()
