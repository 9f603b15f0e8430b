"""Run as a process of its own on a 1366x768 offscreen screen (the platform is chosen before
Qt starts, so not inside the test process): opens the main window with no saved geometry,
then a saved run, the Plan view and Compare, and prints after each step, as JSON lines, the
window's size, its minimum size and the screen's available size.

    python -m tests.ui.laptop_probe HOME RUN.versus [RUN.versus]
"""
import json
import os
import sys
from pathlib import Path


def main(home: Path, runs: list[Path]) -> None:
    screen = home / "screen.json"
    screen.write_text(json.dumps({"screens": [{
        "name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768,
        "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={screen}"
    os.environ["VERSUS_HOME"] = str(home)
    from PySide6.QtCore import QEventLoop, QTimer
    from app.model.runset import RunRef
    from app.store.catalog import Catalog
    from app.ui.application import make_app
    from app.ui.common.settings import Settings
    from app.ui.main_window import MainWindow

    app = make_app([])
    w = MainWindow(Catalog(home / "config"), home / "sessions",
                   settings=Settings(home / "ui.ini"))
    w.show()

    def settle(signal=None) -> None:
        loop = QEventLoop()
        if signal is not None:
            signal.connect(loop.quit)
            QTimer.singleShot(30_000, loop.quit)
            loop.exec()
        for _ in range(5):
            app.processEvents()

    def report(step: str) -> None:
        settle()
        avail = w.screen().availableGeometry()
        hint, least = w.minimumSizeHint(), w.minimumSize()
        print(json.dumps({"step": step, "size": [w.width(), w.height()],
                          "frame": [w.frameGeometry().width(), w.frameGeometry().height()],
                          "min": [max(hint.width(), least.width()),
                                  max(hint.height(), least.height())],
                          "screen": [avail.width(), avail.height()]}), flush=True)

    report("start")
    # the live TPROC-C screen: the virtual users' table shows every column
    w.workload_combo.setCurrentIndex(w.workload_combo.findData("tpcc"))
    from tests.ui.stream import recorded_tpcc_run
    w.store.ingest(recorded_tpcc_run(measure_s=20, rampup_s=5, vus=8))
    w.vu_model.refresh()
    w.dashboard.refresh(force=True)
    settle()
    vu = w.vu_view
    # a chart wider than the dashboard (its title and legend on one line) is cut on the right
    cut = [key for key, plot in w.dashboard.plots.items()
           if plot.titleLabel.item.boundingRect().width() > plot.width()
           or plot.width() > w.dashboard.width()]
    print(json.dumps({"step": "live tpcc", "vu_columns": vu.horizontalHeader().length(),
                      "vu_visible": vu.viewport().width(), "titles_cut": cut}), flush=True)
    w.open_session_file(runs[0])
    settle()
    from app.ui.main_window import ROLE_NAME
    tree = w.session_tree
    for _ in range(300):                 # the sessions folder is read off the GUI thread
        items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
        item = next((t.child(0) for t in items if t.childCount()
                     and t.data(0, ROLE_NAME)[1] == str(runs[0])), None)
        if item is not None:
            break
        w.tasks.wait(100)
        settle()
    tree.setCurrentItem(item)
    tree.setFocus()
    w._on_session_tree_activated(item)
    settle(w.session_loaded)
    report("saved run")
    w.actions["plan"].trigger()
    report("plan")
    w.show_compare([RunRef(str(p)) for p in runs])
    report("compare")


if __name__ == "__main__":
    main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
