"""Every action declared once (id, text, shortcut, icon); menus and toolbars come from here."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenuBar, QStyle, QToolBar, QWidget


@dataclass(frozen=True)
class ActionSpec:
    id: str
    text: str
    shortcut: str = ""
    icon: str = ""          # a QStyle standard pixmap name
    tip: str = ""
    menu: str = ""          # menu title; "" = no menu
    toolbar: bool = False


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("open_session", "&Open Session…", "Ctrl+O", "SP_DialogOpenButton",
               "Open a saved session file", "&File", True),
    ActionSpec("import_logs", "&Import Logs…", "Ctrl+I", "SP_ArrowDown",
               "Import HammerDB, sysbench or pgbench logs as runs of a new session", "&File"),
    ActionSpec("refresh_sessions", "Refresh Sessions", "F5", "SP_BrowserReload",
               "Re-read the sessions folder", "&File"),
    ActionSpec("quit", "&Quit", "Ctrl+Q", "", "Quit Versus", "&File"),
    ActionSpec("run", "&Run", "Ctrl+R", "SP_MediaPlay",
               "Run the workload on the selected host and target", "&Run", True),
    ActionSpec("stop", "&Stop", "Ctrl+.", "SP_MediaStop",
               "Stop the run cleanly (the summary is still written)", "&Run", True),
    ActionSpec("plan", "&Plan…", "Ctrl+Shift+P", "SP_FileDialogDetailedView",
               "Build or open a plan: many runs one after another on one host", "&Run", True),
    ActionSpec("add_host", "Add &Host…", "", "SP_ComputerIcon",
               "Add a machine reached over SSH", "&Hosts", True),
    ActionSpec("edit_host", "Edit Host…", "", "", "Edit the selected host", "&Hosts"),
    ActionSpec("remove_host", "Remove Host", "", "", "Remove the selected host", "&Hosts"),
    ActionSpec("add_target", "Add &Target…", "", "SP_DriveNetIcon",
               "Add a database server to test", "&Hosts", True),
    ActionSpec("edit_target", "Edit Target…", "", "", "Edit the selected target", "&Hosts"),
    ActionSpec("remove_target", "Remove Target", "", "", "Remove the selected target",
               "&Hosts"),
    ActionSpec("profiles", "Server &Profiles…", "", "",
               "Browse, edit, check and compare server profiles", "&Hosts"),
    ActionSpec("compare", "&Compare Runs", "Ctrl+Shift+M", "SP_FileDialogContentsView",
               "Compare the runs selected in the Sessions list (Ctrl+click to pick several)",
               "&Compare", True),
    ActionSpec("theme_system", "Theme as the &System", "", "",
               "Light or dark as the desktop is (slides and exports stay light)", "&View"),
    ActionSpec("theme_light", "&Light Theme", "", "", "Light colours on screen", "&View"),
    ActionSpec("theme_dark", "&Dark Theme", "", "",
               "Dark colours on screen (slides and exports stay light)", "&View"),
    ActionSpec("shortcuts", "&Keyboard Shortcuts", "F1", "", "Every shortcut and chart gesture",
               "&Help"),
    ActionSpec("about", "&About Versus", "", "", "", "&Help"),
)

# The Compare view's own actions: shortcuts work while the view (or a child) has focus.
COMPARE_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("play_pause", "Play / Pause", "Space", "SP_MediaPlay",
               "Replay the runs as if live, or pause"),
    ActionSpec("step_back", "Step Back", ",", "SP_MediaSeekBackward",
               "Move the clock back by one second of play at the current speed"),
    ActionSpec("step_forward", "Step Forward", ".", "SP_MediaSeekForward",
               "Move the clock on by one second of play at the current speed"),
    ActionSpec("loop", "Loop", "L", "", "Start again at the beginning after the end"),
    ActionSpec("export_chart", "Export Chart…", "Ctrl+E", "SP_DialogSaveButton",
               "Save a chart as PNG, SVG or PDF in the light slide theme"),
    ActionSpec("copy_chart", "Copy Chart", "", "", "Copy a chart to the clipboard as an image"),
    ActionSpec("export_series_csv", "Series as CSV…", "", "",
               "One row per second, one column per run and metric"),
    ActionSpec("export_series_json", "Series as JSON…", "", "",
               "Every point at full resolution with the runs' facts"),
    ActionSpec("export_tables_md", "Tables as Markdown…", "", "", ""),
    ActionSpec("export_tables_html", "Tables as HTML…", "", "", "With the ratio colours"),
    ActionSpec("export_tables_csv", "Tables as CSV…", "", "", ""),
    ActionSpec("export_deck", "Slide Deck (.pptx)…", "", "",
               "Title slide, one slide per chart, one per table"),
    ActionSpec("export_footer", "Footer with Configuration and Source", "", "",
               "Small print under exported charts and slides: each run's configuration and "
               "where the numbers come from"),
)

SEPARATE_BEFORE = {"quit", "add_target", "plan", "profiles", "about"}        # menu separators, by action id


def build_actions(parent: QWidget, specs: tuple[ActionSpec, ...] = ACTIONS
                  ) -> dict[str, QAction]:
    style = parent.style()
    actions: dict[str, QAction] = {}
    for spec in specs:
        act = QAction(spec.text, parent)
        act.setObjectName(f"action_{spec.id}")
        if spec.shortcut:
            act.setShortcut(QKeySequence(spec.shortcut))
        if spec.icon:
            act.setIcon(style.standardIcon(getattr(QStyle.StandardPixmap, spec.icon)))
        tip = spec.tip or spec.text.replace("&", "").rstrip("…")
        if spec.shortcut:
            tip += f" ({QKeySequence(spec.shortcut).toString(QKeySequence.SequenceFormat.NativeText)})"
        act.setToolTip(tip)
        act.setStatusTip(spec.tip)
        actions[spec.id] = act
    return actions


def build_menus(menubar: QMenuBar, actions: dict[str, QAction]) -> None:
    menus = {}
    for spec in ACTIONS:
        if not spec.menu:
            continue
        menu = menus.get(spec.menu)
        if menu is None:
            menu = menus[spec.menu] = menubar.addMenu(spec.menu)
        if spec.id in SEPARATE_BEFORE and not menu.isEmpty():
            menu.addSeparator()
        menu.addAction(actions[spec.id])


def build_toolbar(toolbar: QToolBar, actions: dict[str, QAction]) -> None:
    last_menu = None
    for spec in ACTIONS:
        if not spec.toolbar:
            continue
        if last_menu is not None and spec.menu != last_menu:
            toolbar.addSeparator()
        toolbar.addAction(actions[spec.id])
        last_menu = spec.menu



class _ShortcutKeeper(QObject):
    """Lets a window's shortcuts through a text box that would take the key itself (on
    Linux a line edit reads Ctrl+E as "end of line", and Export Chart never fired)."""

    def __init__(self, actions: dict[str, QAction], parent: QObject) -> None:
        super().__init__(parent)
        self._keys = {a.shortcut().toString() for a in actions.values()
                      if not a.shortcut().isEmpty()}

    def eventFilter(self, obj, ev) -> bool:                  # noqa: N802 (Qt name)
        if ev.type() == QEvent.Type.ShortcutOverride and ev.modifiers() & (
                Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
            seq = QKeySequence(ev.keyCombination()).toString()
            if seq in self._keys:
                return True            # not taken by the text box: the action's shortcut runs
        return False


def keep_shortcuts(widget: QWidget, actions: dict[str, QAction]) -> QObject:
    """Install the keeper on every line edit under ``widget`` (and return it)."""
    from PySide6.QtWidgets import QLineEdit
    keeper = _ShortcutKeeper(actions, widget)
    for edit in widget.findChildren(QLineEdit):
        edit.installEventFilter(keeper)
    return keeper


# What the mouse does on charts: listed with the shortcuts (one place to learn them all).
GESTURES: tuple[tuple[str, str, str], ...] = (
    ("Charts", "Read every line's value at a moment", "hover"),
    ("Charts", "Zoom the time axis (all charts together)", "mouse wheel"),
    ("Charts", "Pan the time axis", "drag"),
    ("Charts", "Log scale, follow the run, exports", "right-click"),
    ("Compare", "Move the replay cursor there", "click a chart"),
    ("Compare", "Compare several runs", "Ctrl/Shift+click in Sessions, then Ctrl+Shift+M"),
    ("Compare", "Add runs to the comparison", "drag them from Sessions"),
)


def shortcut_rows() -> list[tuple[str, str, str]]:
    """(where, what, keys) for every declared action with a shortcut, then the gestures."""
    def text(spec: ActionSpec) -> str:
        return spec.text.replace("&", "").rstrip("…")

    def keys(spec: ActionSpec) -> str:
        return QKeySequence(spec.shortcut).toString(QKeySequence.SequenceFormat.NativeText)

    rows = [(spec.menu.replace("&", "") or "Window", text(spec), keys(spec))
            for spec in ACTIONS if spec.shortcut]
    rows += [("Compare", text(spec), keys(spec)) for spec in COMPARE_ACTIONS if spec.shortcut]
    return rows + list(GESTURES)
