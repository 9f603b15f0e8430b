"""Start the GUI: one QApplication, a light theme, the main window."""
from __future__ import annotations

import sys

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from .settings import APPLICATION, ORGANIZATION

STYLE_SHEET = """
QMainWindow, QDialog { background: #f6f7f9; }
#sidebar { background: #eef0f3; }
#sidebar QListWidget, #sidebar QTreeWidget {
    background: #ffffff; border: 1px solid #d8dce1; border-radius: 4px; padding: 2px; }
#sidebar QListWidget::item, #sidebar QTreeWidget::item { padding: 3px 4px; }
#sidebar QListWidget::item:selected, #sidebar QTreeWidget::item:selected {
    background: #dbe8f7; color: #0b3d6e; }
QLabel[role="sidebar-heading"] { color: #57606a; font-weight: 600; font-size: 8.5pt;
    letter-spacing: 1px; }
QToolButton[role="add"] { font-weight: 700; color: #0969da; padding: 0 6px; }
QLabel[role="section"] { font-weight: 600; color: #24292f; padding-top: 4px; }
QLabel[role="hint"] { color: #6a737d; }
#run_panel { background: #fbfbfc; }
#run_panel QScrollArea, #run_panel QScrollArea > QWidget > QWidget { background: transparent; }
QFrame[role="divider"] { color: #d8dce1; }
QPushButton { padding: 5px 14px; border-radius: 4px; border: 1px solid #c9ced4;
    background: #ffffff; }
QPushButton:hover { background: #f0f3f6; }
QPushButton:disabled { color: #a0a7af; background: #f3f4f6; }
QPushButton[role="primary"] { background: #1f6feb; color: white; border-color: #1a5fcc;
    font-weight: 600; }
QPushButton[role="primary"]:hover { background: #1a5fcc; }
QPushButton[role="primary"]:disabled { background: #9dbcf0; border-color: #9dbcf0; color: #eef3fb; }
QProgressBar { border: none; background: #e3e6ea; border-radius: 4px; }
QProgressBar::chunk { background: #1f6feb; border-radius: 4px; }
QPlainTextEdit#log_view { background: #ffffff; border: none; border-top: 1px solid #d8dce1; }
QTabWidget::pane { border: none; }
QTabBar::tab { padding: 6px 16px; }
QTableWidget { background: #ffffff; alternate-background-color: #f6f8fa;
    gridline-color: #e4e7eb; border: 1px solid #d8dce1; }
QHeaderView::section { background: #f0f2f5; border: none; border-bottom: 1px solid #d8dce1;
    padding: 4px 6px; font-weight: 600; }
QToolBar { background: #f6f7f9; border-bottom: 1px solid #d8dce1; spacing: 4px; padding: 2px 6px; }
QStatusBar { background: #eef0f3; border-top: 1px solid #d8dce1; }
QStatusBar QLabel { padding: 0 8px; color: #444c56; }
"""


def apply_theme(app: QApplication) -> None:
    """Fusion with a light palette: the same look on every OS, and charts that print well."""
    app.setStyle("Fusion")
    pal = QPalette()
    pal.setColor(QPalette.ColorRole.Window, QColor("#f6f7f9"))
    pal.setColor(QPalette.ColorRole.WindowText, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.AlternateBase, QColor("#f6f8fa"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.Button, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ButtonText, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#1f6feb"))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ToolTipBase, QColor("#ffffff"))
    pal.setColor(QPalette.ColorRole.ToolTipText, QColor("#24292f"))
    pal.setColor(QPalette.ColorRole.PlaceholderText, QColor("#8c959f"))
    app.setPalette(pal)
    font = app.font()
    if font.pointSizeF() < 9.5:
        font.setPointSizeF(9.5)
    app.setFont(font)
    app.setStyleSheet(STYLE_SHEET)


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("Versus")
    apply_theme(app)
    return app


def run_gui() -> int:
    app = make_app()
    from app.store.catalog import Catalog
    from app.store.paths import sessions_dir

    from .main_window import MainWindow
    window = MainWindow(Catalog(), sessions_dir())
    window.show()
    return app.exec()
