"""Start the GUI: one QApplication, its theme (light, dark or the system's), the main window."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from app.ui.common import theme
from app.ui.common.settings import APPLICATION, ORGANIZATION, Settings

STARTED = time.monotonic()        # (about) when the GUI's imports began


def apply_theme(app: QApplication, choice: str = "system") -> str:
    """Fusion with the light or dark theme (``choice``: system, light or dark): the same look
    on every OS; slides and exports stay light whatever the screen shows."""
    font = app.font()
    if font.pointSizeF() < 9.5:
        font.setPointSizeF(9.5)
    app.setFont(font)
    return theme.apply(app, choice)


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("Versus")
    apply_theme(app, Settings().get("ui/theme"))
    theme.follow_system(app)
    icon = Path(__file__).resolve().parents[2] / "resources" / "versus.svg"
    if icon.exists():                 # an SVG: sharp at any HiDPI scale
        app.setWindowIcon(QIcon(str(icon)))
    return app


def run_gui(files: list[str] | None = None) -> int:
    """The main window; ``files`` (session files) open in it: one in the Saved run view (or
    Compare when it holds several runs), several in Compare."""
    app = make_app()
    from app.store.catalog import Catalog
    from app.store.paths import sessions_dir

    from app.ui.main_window import MainWindow
    window = MainWindow(Catalog(), sessions_dir())
    window.show()
    if files:
        window.open_files([Path(f) for f in files])
    if os.environ.get("VERSUS_EXIT_WHEN_SHOWN"):
        # startup probe (bench/startup.py, the packaging test): leave once the window is
        # shown and the event loop is free, that is usable
        QTimer.singleShot(0, lambda: (print(f"versus: window usable after "
                                            f"{time.monotonic() - STARTED:.3f} s in process",
                                            flush=True), app.quit()))
    return app.exec()
