"""A 10-hour run against a 10-minute one in the views that open saved runs: Compare and the
saved-run view, each opened and panned as a user would.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.long_views [--dir /tmp/versus-long]

Session files of one TPROC-C-like run (bench/sessions.py) of 10 minutes and of 10 hours are
made once and reused. For each: the time to open (Compare: load_comparison, the panes built
and painted; saved view: load_run, the view shown and painted) and to pan (a 10-minute
window moved across the run in 20 steps, each painted; then the whole run once more), in a
shown 1366×768 window, offscreen. Target: the 10-hour run pans as fast as the 10-minute one.
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
    ap.add_argument("--dir", default="/tmp/versus-long")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--hours", type=float, default=10.0, help="the long run's length")
    a = ap.parse_args()

    from PySide6.QtWidgets import QApplication

    from app.analysis.compare import load_comparison
    from app.analysis.metrics import CHARTS
    from app.model.runset import RunRef
    from app.store.session import SessionFile
    from app.ui.compare.panes import ComparePanes
    from app.ui.charts.dashboard import configure_pyqtgraph
    from app.ui.saved.session_view import SessionViewWidget, load_run
    from bench.sessions import make_sessions

    app = QApplication.instance() or QApplication([])
    configure_pyqtgraph()
    cases = []
    for label, hours in (("10 min", 10 / 60), (f"{a.hours:g} h", a.hours)):
        d = Path(a.dir) / label.replace(" ", "")
        path = d / "run1.versus"
        if not path.exists():
            t = time.perf_counter()
            make_sessions(d, 1, hours)
            print(f"made {path} ({path.stat().st_size / 1e6:.0f} MB) in "
                  f"{time.perf_counter() - t:.0f} s", flush=True)
        cases.append((label, path))

    def pan(set_view, lo: float, hi: float) -> list[float]:
        times = []
        width = min(600.0, hi - lo)
        for k in range(a.steps):
            x = lo + (hi - lo - width) * k / max(1, a.steps - 1)
            t0 = time.perf_counter()
            set_view(x, x + width)
            app.processEvents()
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        set_view(lo, hi)
        app.processEvents()
        times.append(time.perf_counter() - t0)
        return times

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    for label, path in cases:
        # Compare: the run alone, throughput, latency and CPU panes
        t0 = time.perf_counter()
        comp = load_comparison([RunRef(str(path))], align="measure")
        panes = ComparePanes()
        panes.view.resize(1366, 768)
        panes.view.show()
        lo, hi = comp.time_range()
        panes.build(comp, [n for n in ("throughput", "latency", "cpu") if n in CHARTS],
                    "overlay", lo)
        app.processEvents()
        opened = time.perf_counter() - t0
        times = pan(lambda x0, x1: panes.set_x_view(x0, x1, padding=0), lo, hi)
        print(f"{label:>6} Compare:    open {opened * 1000:7.0f} ms   pan median "
              f"{statistics.median(times) * 1000:6.1f} ms, worst {max(times) * 1000:6.1f} ms "
              f"per painted step", flush=True)
        panes.view.close()
        # the saved-run view
        with SessionFile(path) as sf:
            run_id = sf.runs()[0].id
        t0 = time.perf_counter()
        loaded = load_run(path, run_id)
        view = SessionViewWidget()
        view.resize(1366, 768)
        view.show()
        view.show_run(loaded)
        app.processEvents()
        opened = time.perf_counter() - t0
        dash = view.dashboard
        vb = dash.plots["cpu"].getViewBox()

        def set_view(x0: float, x1: float) -> None:
            dash._follow = False
            vb.setXRange(x0, x1, padding=0)
            dash.refresh(force=True)          # what the re-read timer does after a pan

        last = loaded.store.state().last_t
        times = pan(set_view, 0.0, last)
        print(f"{label:>6} saved view: open {opened * 1000:7.0f} ms   pan median "
              f"{statistics.median(times) * 1000:6.1f} ms, worst {max(times) * 1000:6.1f} ms "
              f"per painted step", flush=True)
        view.close()
    os._exit(0)


if __name__ == "__main__":
    main()
