"""Render the Compare view of three recorded runs to PNG, offscreen, to look at it.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.ui.screenshot_compare [out_dir]

Writes compare_overlay.png (overlay, aligned on measure, cursor mid-run, summary and
efficiency tables), compare_side.png (side by side), compare_matrix.png and
compare_playing.png (cursor over the frozen charts while the clock runs), 1500×950.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def make_session(path: Path, run_id: str, version: str, scale: float, seed: int,
                 prepare_s: int, clients: int) -> Path:
    from app.store.session import SessionFile
    from tests.ui.stream import recorded_run
    events = recorded_run(measure_s=240, prepare_s=prepare_s, run_id=run_id, seed=seed,
                          clients=clients)
    out = []
    for e in events:
        e = dict(e)
        if e["kind"] == "sample":
            e["rate"] = round(e["rate"] * scale, 1)
            e["ops"] = {k: int(v * scale) for k, v in e["ops"].items()}
            lat = {k: round(v / scale ** 0.7, 4) for k, v in e["lat_ms"]["all"].items()}
            e["lat_ms"] = {"all": lat, "point": lat}
        if e["kind"] == "summary" and "rate" in e:
            e["rate"] = round(e["rate"] * scale, 1)
            e["ops_total"] = int(e.get("ops_total", 0) * scale)
            e.pop("hist", None)
            if "lat_ms" in e:
                lat = {k: round(v / scale ** 0.7, 4) for k, v in e["lat_ms"]["all"].items()}
                e["lat_ms"] = {"all": lat}
        out.append(e)
    out.insert(1, {"v": 1, "seq": 0, "t": 0.0, "kind": "setting", "server_version": version})
    for i, e in enumerate(out):
        e["seq"] = i + 1
    with SessionFile(path, readonly=False) as s:
        s.add_run(run_id, "point-query", "pg", "bench-1", {"clients": clients})
        s.append_events(run_id, out)
        s.finish_run(run_id, "ok")
    return path


def main(out_dir: str | None = None) -> list[Path]:
    out = Path(out_dir or "/tmp/versus-screenshots")
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="versus-shot-"))
    os.environ["VERSUS_HOME"] = str(home)
    from PySide6.QtCore import QEventLoop

    from app.store.catalog import Catalog
    from app.ui.application import make_app
    from app.ui.main_window import MainWindow
    from app.ui.common.settings import Settings

    app = make_app([])
    sessions = home / "sessions"
    sessions.mkdir()
    make_session(sessions / "pg16.versus", "20250101-120000-aaa111", "PostgreSQL 16.4", 1.0,
                 7, 6, 8)
    make_session(sessions / "pg17.versus", "20250102-120000-bbb222", "PostgreSQL 17.2", 1.12,
                 11, 9, 8)
    make_session(sessions / "maria.versus", "20250103-120000-ccc333",
                 "11.4.3-MariaDB-log", 0.83, 5, 4, 8)
    window = MainWindow(Catalog(home / "config"), sessions, settings=Settings(home / "ui.ini"))
    window.resize(1500, 950)
    window.show()

    def pump(seconds: float, until=None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until and until()):
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            time.sleep(0.01)

    tree = window.session_tree
    pump(10, until=lambda: tree.topLevelItemCount() == 3)
    for i in range(3):
        tree.topLevelItem(i).child(0).setSelected(True)
    window.actions["compare"].trigger()
    view = window.compare_widget
    pump(15, until=lambda: view.comp is not None)
    view.set_align("measure")
    view.clock.set_position(131.0)
    pump(0.5)
    paths = []

    def shot(name: str) -> None:
        pump(0.3)
        p = out / name
        window.grab().save(str(p))
        paths.append(p)

    shot("compare_overlay.png")
    view.set_mode("side-by-side")
    shot("compare_side.png")
    view.set_mode("overlay")
    view.table_tabs.setCurrentIndex(1)
    shot("compare_matrix.png")
    view.table_tabs.setCurrentIndex(0)
    view.clock.set_rate(20)
    view.clock.play()
    pump(0.6)
    shot("compare_playing.png")
    view.clock.pause()
    window.tasks.wait(5000)
    window.close()
    for p in paths:
        print(p)
    return paths


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
