"""Light and dark themes for the screen (slides and exports stay light: app.ui.charts.render draws
them in its own slide colours, whatever the screen shows).

    name = resolve("system")        # "light" or "dark", following the desktop
    apply(app, "dark")              # palette, style sheet, chart colours; emits changed
    colours()["chart_bg"]           # the colours of the theme in use
    on_change(callback)             # charts restyle themselves when the theme changes

The chart colours live here so every chart (live, saved, compare, crosshair) takes the same
ones; the run and series colours (Okabe–Ito) read well on both backgrounds.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap

THEMES = ("system", "light", "dark")

LIGHT = {
    "window": "#f6f7f9", "sidebar": "#eef0f3", "base": "#ffffff", "alt_base": "#f6f8fa",
    "text": "#24292f", "muted": "#57606a", "hint": "#6a737d", "border": "#d8dce1",
    "button": "#ffffff", "button_hover": "#f0f3f6", "disabled": "#a0a7af",
    "accent": "#1f6feb", "accent_hover": "#1a5fcc", "accent_off": "#9dbcf0",
    "selection_bg": "#dbe8f7", "selection_fg": "#0b3d6e", "header": "#f0f2f5",
    "placeholder": "#8c959f", "progress": "#e3e6ea",
    # charts
    "chart_bg": "#ffffff", "chart_fg": "#333333", "chart_title": "#222222",
    "chart_cursor": "#222222", "chart_mark": "#9a9a9a", "chart_mark_text": "#555555",
    "chart_outage": (207, 34, 46, 40),
    "readout_bg": (255, 255, 255, 230), "readout_border": "#c9ced4",
}
DARK = {
    "window": "#1e2228", "sidebar": "#181b20", "base": "#252a31", "alt_base": "#2b3038",
    "text": "#e6edf3", "muted": "#aab3bd", "hint": "#8b949e", "border": "#3a414b",
    "button": "#2d333b", "button_hover": "#363d47", "disabled": "#6e7681",
    "accent": "#2f81f7", "accent_hover": "#4493f8", "accent_off": "#2a4a7a",
    "selection_bg": "#1f3a5f", "selection_fg": "#e6edf3", "header": "#2b3038",
    "placeholder": "#7d8590", "progress": "#3a414b",
    "chart_bg": "#1b1f24", "chart_fg": "#c9d1d9", "chart_title": "#e6edf3",
    "chart_cursor": "#e6edf3", "chart_mark": "#6e7681", "chart_mark_text": "#aab3bd",
    "chart_outage": (248, 81, 73, 56),
    "readout_bg": (37, 42, 49, 235), "readout_border": "#3a414b",
}

STYLE_SHEET = """
QMainWindow, QDialog {{ background: {window}; }}
#sidebar {{ background: {sidebar}; }}
#sidebar QListWidget, #sidebar QTreeWidget {{
    background: {base}; border: 1px solid {border}; border-radius: 4px; padding: 2px; }}
#sidebar QListWidget::item, #sidebar QTreeWidget::item {{ padding: 3px 4px; }}
#sidebar QListWidget::item:selected, #sidebar QTreeWidget::item:selected {{
    background: {selection_bg}; color: {selection_fg}; }}
QLabel[role="sidebar-heading"] {{ color: {muted}; font-weight: 600; font-size: 8.5pt;
    letter-spacing: 1px; }}
QToolButton[role="add"] {{ font-weight: 700; color: {accent}; padding: 0 6px; }}
QLabel[role="section"] {{ font-weight: 600; color: {text}; padding-top: 4px; }}
QLabel[role="hint"] {{ color: {hint}; }}
#run_panel {{ background: {window}; }}
#run_panel QScrollArea, #run_panel QScrollArea > QWidget > QWidget {{ background: transparent; }}
QFrame[role="divider"] {{ color: {border}; }}
QPushButton {{ padding: 5px 14px; border-radius: 4px; border: 1px solid {border};
    background: {button}; color: {text}; }}
QPushButton:hover {{ background: {button_hover}; }}
QPushButton:disabled {{ color: {disabled}; background: {window}; }}
QPushButton[role="primary"] {{ background: {accent}; color: white; border-color: {accent_hover};
    font-weight: 600; }}
QPushButton[role="primary"]:hover {{ background: {accent_hover}; }}
QPushButton[role="primary"]:disabled {{ background: {accent_off}; border-color: {accent_off};
    color: {window}; }}
QProgressBar {{ border: none; background: {progress}; border-radius: 4px; }}
QProgressBar::chunk {{ background: {accent}; border-radius: 4px; }}
QPlainTextEdit#log_view {{ background: {base}; border: none; border-top: 1px solid {border}; }}
QTabWidget::pane {{ border: none; }}
QTabBar::tab {{ padding: 6px 16px; }}
QTableWidget {{ background: {base}; alternate-background-color: {alt_base};
    gridline-color: {border}; border: 1px solid {border}; }}
QHeaderView::section {{ background: {header}; color: {text}; border: none;
    border-bottom: 1px solid {border}; padding: 4px 6px; font-weight: 600; }}
QToolBar {{ background: {window}; border-bottom: 1px solid {border}; spacing: 4px;
    padding: 2px 6px; }}
QToolBar QToolButton:disabled {{ color: {disabled}; }}
QStatusBar {{ background: {sidebar}; border-top: 1px solid {border}; }}
QStatusBar QLabel {{ padding: 0 8px; color: {muted}; }}
QFrame[role="tile"] {{ background: {base}; border: 1px solid {border}; border-radius: 6px; }}
QLabel[role="tile-title"] {{ color: {muted}; font-size: 7.5pt; font-weight: 600;
    letter-spacing: 1px; border: none; }}
QLabel[role="tile-value"] {{ color: {text}; font-size: 15pt; font-weight: 600; border: none; }}
QFrame[role="tile"] QLabel[role="hint"] {{ border: none; font-size: 8pt; }}
"""


class _Theme(QObject):
    changed = Signal(str)              # "light" | "dark"

    def __init__(self) -> None:
        super().__init__()
        self.name = "light"
        self.choice = "system"


_theme: _Theme | None = None


def _state() -> _Theme:
    global _theme
    if _theme is None:
        _theme = _Theme()
    return _theme


def system_is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    return app.styleHints().colorScheme() == Qt.ColorScheme.Dark


def resolve(choice: str) -> str:
    """"system" follows the desktop's colour scheme; "light" and "dark" are themselves."""
    if choice == "dark" or (choice == "system" and system_is_dark()):
        return "dark"
    return "light"


def current() -> str:
    return _state().name


def colours() -> dict:
    return DARK if _state().name == "dark" else LIGHT


def is_dark() -> bool:
    return _state().name == "dark"


def on_change(callback: Callable[[str], None]) -> None:
    _state().changed.connect(callback)


def palette(c: dict) -> QPalette:
    pal = QPalette()
    roles = {QPalette.ColorRole.Window: "window", QPalette.ColorRole.WindowText: "text",
             QPalette.ColorRole.Base: "base", QPalette.ColorRole.AlternateBase: "alt_base",
             QPalette.ColorRole.Text: "text", QPalette.ColorRole.Button: "button",
             QPalette.ColorRole.ButtonText: "text", QPalette.ColorRole.Highlight: "accent",
             QPalette.ColorRole.ToolTipBase: "base", QPalette.ColorRole.ToolTipText: "text",
             QPalette.ColorRole.PlaceholderText: "placeholder",
             QPalette.ColorRole.Link: "accent"}
    for role, key in roles.items():
        pal.setColor(role, QColor(c[key]))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    # disabled items must look disabled (toolbar buttons read as clickable otherwise)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText,
                 QPalette.ColorRole.Text):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(c["disabled"]))
    return pal


def apply(app, choice: str = "system") -> str:
    """Fusion with the chosen theme's palette and style sheet, and the chart colours for new
    charts; returns the theme in use ("light" or "dark")."""
    import pyqtgraph as pg
    st = _state()
    st.choice = choice if choice in THEMES else "system"
    name = resolve(st.choice)
    c = DARK if name == "dark" else LIGHT
    app.setStyle("Fusion")
    app.setPalette(palette(c))
    app.setStyleSheet(STYLE_SHEET.format(**c))
    pg.setConfigOptions(background=c["chart_bg"], foreground=c["chart_fg"], antialias=True)
    changed = name != st.name
    st.name = name
    if changed:
        st.changed.emit(name)
    return name


def follow_system(app) -> None:
    """Re-apply "system" when the desktop switches between light and dark."""
    app.styleHints().colorSchemeChanged.connect(
        lambda _scheme: apply(app, "system") if _state().choice == "system" else None)


def style_plot(plot, title_html: str | None = None) -> None:
    """A plot's axes, grid text and title in the theme's chart colours."""
    import pyqtgraph as pg
    c = colours()
    for side in ("left", "bottom"):
        ax = plot.getAxis(side)
        ax.setPen(pg.mkPen(c["chart_fg"]))
        ax.setTextPen(pg.mkPen(c["chart_fg"]))
    if title_html is not None:
        plot.setTitle(title_html, size="10pt")


def tinted(icon: QIcon, colour: str | QColor, size: int = 32) -> QIcon:
    """``icon``'s shape in one colour: the style's black media glyphs vanish on a dark
    button (Run and Stop in the dark theme)."""
    src = icon.pixmap(size, size)
    out = QPixmap(src.size())
    out.setDevicePixelRatio(src.devicePixelRatio())
    out.fill(Qt.GlobalColor.transparent)
    p = QPainter(out)
    p.drawPixmap(0, 0, src)
    p.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
    p.fillRect(out.rect(), QColor(colour))
    p.end()
    return QIcon(out)
