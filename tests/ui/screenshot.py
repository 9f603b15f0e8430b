"""Render the main window with a recorded stream to PNG, offscreen, to look at it.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.ui.screenshot [out_dir]

Writes live.png (mid-run: charts, progress, log) and saved.png (a reopened run with its
summary table), both 1400x900.
"""
from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(out_dir: str | None = None) -> list[Path]:
    out = Path(out_dir or "/tmp/versus-screenshots")
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="versus-shot-"))
    os.environ["VERSUS_HOME"] = str(home)

    from PySide6.QtCore import QEventLoop

    from app.store.catalog import Catalog
    from app.model.config import HostConfig, TargetConfig
    from app.ui.application import make_app
    from app.ui.main_window import MainWindow
    from app.ui.common.settings import Settings
    from tests.ui.stream import ReplayController, recorded_run

    app = make_app([])
    events = recorded_run(measure_s=300, prepare_s=6, clients=8)
    cut = next(i for i, e in enumerate(events)
               if e["kind"] == "sample" and e["interval"][1] > 190)
    release = threading.Event()

    def factory(request, catalog=None, on_events=None, on_status=None):
        c = ReplayController(request, catalog, on_events, on_status, events=events, batch=40)
        original = c.on_events

        def deliver(run_id, batch):
            original(run_id, batch)
            if batch and batch[-1]["seq"] >= cut:
                release.wait(30)       # the run stays "live" while we take the picture
        c.on_events = deliver
        return c

    catalog = Catalog(home / "config")
    catalog.save_host(HostConfig("bench-1", "10.0.0.21", user="perf", auth="key",
                                 key_file="~/.ssh/id_ed25519"))
    catalog.save_target(TargetConfig("pg17-tuned", host="bench-1", engine="postgres",
                                     address="127.0.0.1", port=5432, user="bench",
                                     database="sbtest"))
    catalog.save_target(TargetConfig("mariadb-11.4", host="bench-1", engine="mariadb",
                                     address="127.0.0.1", port=3306, user="bench",
                                     database="sbtest"))
    window = MainWindow(catalog, home / "sessions", settings=Settings(home / "ui.ini"),
                        controller_factory=factory)
    window.resize(1400, 900)
    window.show()
    window.form.widget("clients").setValue(8)
    window.form.widget("duration").setValue(300)

    def pump(seconds: float, until=None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until and until()):
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            time.sleep(0.01)

    window.run_button.click()
    pump(15, until=lambda: window.store.state().last_t > 190)
    pump(0.3)
    # Pretend the run started ~3:16 ago so the labels read like a real mid-run moment.
    window._run_t0_wall = time.monotonic() - 196.4
    window._update_progress()
    pump(0.2)
    paths = [out / "live.png"]
    window.grab().save(str(paths[0]))

    release.set()
    pump(15, until=lambda: not window.is_running())
    pump(15, until=lambda: window.session_tree.topLevelItemCount() > 0
         and window.session_tree.topLevelItem(0).childCount() > 0)
    item = window.session_tree.topLevelItem(0).child(0)
    window.session_tree.setCurrentItem(item)
    window._on_session_tree_activated(item)
    pump(15, until=lambda: window.session_view.loaded is not None)
    pump(0.3)
    paths.append(out / "saved.png")
    window.grab().save(str(paths[1]))
    # The host dialog after a successful "Test connection" (facts of this computer).
    from app.remote.facts import format_facts, gather_facts
    from app.remote.transport import LocalTransport
    from app.ui.dialogs.host import HostDialog
    dlg = HostDialog(catalog, catalog.host("bench-1"), parent=window)
    dlg.show()
    dlg._on_test_succeeded(format_facts(gather_facts(LocalTransport())))
    dlg.resize(620, 640)
    pump(0.5)
    paths.append(out / "host_dialog.png")
    dlg.grab().save(str(paths[2]))
    dlg.close()
    window.tasks.wait(5000)
    window.close()
    for p in paths:
        print(p)
    return paths


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
