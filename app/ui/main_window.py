"""The main window: sidebar (hosts, targets, sessions), run panel, live dashboard, log."""
from __future__ import annotations

import html
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSize, Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QActionGroup, QCloseEvent, QFontDatabase, QIcon, QPalette
from PySide6.QtWidgets import (QApplication, QCheckBox, QComboBox, QFileDialog, QFrame,
                               QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QMainWindow,
                               QMenu, QMessageBox, QPlainTextEdit, QProgressBar, QPushButton, QScrollArea, QSpinBox,
                               QSplitter, QStyle, QTabWidget, QToolBar,
                               QToolButton, QTreeWidgetItem, QVBoxLayout, QWidget)

from app.model.text import as_sentence
from app.analysis.results import new_store
from app.model.series import SeriesStore
from workloads.params import ParamError
from workloads.registry import WORKLOADS, get as get_workload

from app.ui.common import theme
from app.ui.common.actions import build_actions, build_menus, build_toolbar
from app.ui.common.theme import THEMES
from app.ui.charts.dashboard import DashboardWidget
from app.ui.cpu.panel import CpuComparePage, CpuPanelWidget
from app.ui.charts.headline import HeadlineStripWidget
from app.ui.dialogs.host_key import ask_host_key
from app.ui.live.param_form import ParamFormWidget
from app.ui.live.run_worker import AttachWorker, RunWorker, start_worker_thread
from app.ui.saved.session_view import SessionViewWidget, load_run, read_sessions
from app.ui.common.settings import Settings
from app.ui.sessions.tree import SessionTreeWidget
from app.ui.common.tasks import TaskRunner
from app.ui.live.vu_table import VirtualUserTableModel, VirtualUserTableView

REDRAW_MS = 40          # coalescing window: a burst of events costs one redraw
PANEL_MIN_WIDTH, PANEL_MAX_WIDTH = 270, 380     # the run panel, unless its form needs more
CLOCK_MS = 500          # elapsed/remaining labels tick even when no event arrives

BUILTIN_LABELS = {"local": "This computer", "embedded-postgres": "Embedded PostgreSQL"}
ENGINE_LABELS = {"postgres": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB"}
ROLE_NAME = Qt.ItemDataRole.UserRole
SESSION_SUFFIX = ".versus"      # what app.store.paths.list_sessions looks for


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = max(0, int(round(seconds)))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def host_label(h: Any) -> str:
    if h.name in BUILTIN_LABELS:
        return BUILTIN_LABELS[h.name]
    who = f"{h.user}@" if getattr(h, "user", "") else ""
    return f"{h.name}  ·  {who}{h.address}"


def target_label(t: Any) -> str:
    if t.name in BUILTIN_LABELS:
        return BUILTIN_LABELS[t.name]
    return f"{t.name}  ·  {ENGINE_LABELS.get(t.engine, t.engine)}"


def item_tooltip(obj: Any) -> str:
    if hasattr(obj, "engine"):
        return (f"{obj.name}: {ENGINE_LABELS.get(obj.engine, obj.engine)} at "
                f"{obj.address}:{obj.port or 'auto'} on host {obj.host}")
    if obj.name == "local":
        return "This computer: runs without SSH"
    return f"{obj.name}: {obj.user + '@' if obj.user else ''}{obj.address}:{obj.port} ({obj.auth})"


class SectionHeader(QWidget):
    """A sidebar heading with an optional small "+" button."""

    def __init__(self, text: str, add_action=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(2, 8, 0, 2)
        label = QLabel(text.upper())
        label.setProperty("role", "sidebar-heading")
        lay.addWidget(label)
        lay.addStretch(1)
        if add_action is not None:
            btn = QToolButton()
            btn.setDefaultAction(add_action)
            btn.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            btn.setText("+")
            btn.setAutoRaise(True)
            btn.setProperty("role", "add")
            lay.addWidget(btn)


class MainWindow(QMainWindow):
    run_started = Signal(str)            # run_id
    run_ended = Signal(object)           # RunOutcome, or the exception that ended it
    session_loaded = Signal(str)         # run id shown in the Session tab

    def __init__(self, catalog: Any, sessions_dir: Path | str | None = None,
                 settings: Settings | None = None,
                 controller_factory: Callable[..., Any] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        if sessions_dir is None:
            from app.store.paths import sessions_dir as default_sessions_dir
            sessions_dir = default_sessions_dir()
        self.sessions_dir = Path(sessions_dir)
        self.settings = settings or Settings()
        self._controller_factory = controller_factory
        self.tasks = TaskRunner(self)

        # run state
        self.store = new_store()
        self._worker: RunWorker | None = None
        self._thread = None
        self._request = None
        self._run_params: dict = {}
        self._run_t0_wall: float | None = None
        self._notes_seen = 0
        self._close_when_idle = False
        self._pending_host_key: str | None = None
        self._message_boxes: list[QMessageBox] = []
        self._dialogs: list[QWidget] = []
        self.last_outcome: Any = None
        self._opened_sessions: list[Path] = []    # files opened from outside sessions_dir
        self._loading: tuple[str, str] | None = None
        self._live_run_id: str | None = None      # the run this window follows live
        self._attach: tuple[AttachWorker, Any] | None = None   # worker, thread: until it ends
        self._attaching: str | None = None        # the run being brought in
        self.plan_widget = None                   # the Plan tab, made when first opened
        self.compare_widget = None                # the Compare tab, made when first opened

        self.setWindowTitle("Versus")
        self.setObjectName("MainWindow")
        self.actions = build_actions(self)
        build_menus(self.menuBar(), self.actions)
        self.toolbar = QToolBar("Main")
        self.toolbar.setObjectName("main_toolbar")
        self.toolbar.setMovable(False)
        self.toolbar.setIconSize(QSize(18, 18))
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        build_toolbar(self.toolbar, self.actions)
        self.addToolBar(self.toolbar)

        self._build_central()
        self._build_status_bar()
        self._connect()

        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(REDRAW_MS)
        self._redraw_timer.timeout.connect(self._on_redraw_timer_timeout)
        self._clock = QTimer(self)
        self._clock.setInterval(CLOCK_MS)
        self._clock.timeout.connect(self._on_clock_timeout)

        self.reload_catalog()
        self._restore_settings()
        self._set_running(False)
        self.refresh_sessions()

    # ------------------------------------------------------------------ construction
    def _build_central(self) -> None:
        # Sidebar
        sidebar = QWidget()
        sidebar.setObjectName("sidebar")
        side = QVBoxLayout(sidebar)
        side.setContentsMargins(10, 6, 8, 10)
        side.setSpacing(2)
        self.host_list = QListWidget()
        self.host_list.setObjectName("host_list")
        self.target_list = QListWidget()
        self.target_list.setObjectName("target_list")
        for lst in (self.host_list, self.target_list):
            lst.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
            lst.setMaximumHeight(120)
            lst.setTextElideMode(Qt.TextElideMode.ElideRight)
            lst.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.host_list.addActions([self.actions["edit_host"], self.actions["remove_host"]])
        self.target_list.addActions([self.actions["edit_target"], self.actions["remove_target"]])
        self.session_tree = SessionTreeWidget()      # several runs: Ctrl/Shift+click, drag
        self.session_tree.setObjectName("session_tree")
        self.session_tree.setHeaderHidden(True)
        self.session_tree.setIndentation(14)
        self.session_tree.setUniformRowHeights(True)
        self.session_tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.session_tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        side.addWidget(SectionHeader("Hosts", self.actions["add_host"]))
        side.addWidget(self.host_list)
        side.addWidget(SectionHeader("Targets", self.actions["add_target"]))
        side.addWidget(self.target_list)
        side.addWidget(SectionHeader("Sessions", self.actions["open_session"]))
        side.addWidget(self.session_tree, 1)

        # Run panel: workload, parameters, buttons, progress
        panel = QWidget()
        panel.setObjectName("run_panel")
        self.run_panel = panel
        pl = QVBoxLayout(panel)
        pl.setContentsMargins(12, 10, 12, 10)
        pl.setSpacing(8)
        title = QLabel("Workload")
        title.setProperty("role", "section")
        pl.addWidget(title)
        self.workload_combo = QComboBox()
        self.workload_combo.setObjectName("workload_combo")
        for name, spec in WORKLOADS.items():
            self.workload_combo.addItem(f"{spec.title}  ({name})", name)
        pl.addWidget(self.workload_combo)
        self.workload_description = QLabel()
        self.workload_description.setWordWrap(True)
        self.workload_description.setProperty("role", "hint")
        pl.addWidget(self.workload_description)
        self.form = ParamFormWidget()
        self.form.setObjectName("param_form")
        scroll = QScrollArea()
        scroll.setWidget(self.form)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.form_scroll = scroll
        pl.addWidget(scroll, 10)          # the form takes the room it needs first
        prof = QHBoxLayout()
        prof_label = QLabel("CPU profile")
        prof_label.setToolTip("A CPU profile of the database server (perf record -g) for "
                              "this many seconds at the start of each measured phase; a "
                              "flame graph in CPU & counters. 0: none")
        self.profile_spin = QSpinBox()
        self.profile_spin.setObjectName("profile_spin")
        self.profile_spin.setRange(0, 3600)
        self.profile_spin.setSuffix(" s")
        self.profile_spin.setSpecialValueText("off")
        self.profile_spin.setToolTip(prof_label.toolTip())
        prof.addWidget(prof_label)
        prof.addWidget(self.profile_spin, 1)
        pl.addLayout(prof)
        self.perf_check = QCheckBox("Server perf counters")
        self.perf_check.setObjectName("perf_check")
        self.perf_check.setToolTip(
            "Count the database server's events per phase with perf stat: context switches, "
            "task clock, and IPC and cache misses where the host has hardware counters. "
            "Counting every context switch of the server costs throughput (up to 10 % at "
            "30,000 queries per second), so it is off unless asked for.")
        self.perf_check.setChecked(self.settings.get("run/perf_counters"))
        self.perf_check.toggled.connect(lambda on: self.settings.set("run/perf_counters", on))
        pl.addWidget(self.perf_check)
        pl.addSpacing(4)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("run_button")
        self.run_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
        self.run_button.setDefault(True)
        self.run_button.setProperty("role", "primary")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stop_button")
        self.stop_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_MediaStop))
        buttons.addWidget(self.run_button, 1)
        buttons.addWidget(self.stop_button, 1)
        self._tint_run_icons()
        theme.on_change(self._tint_run_icons)       # a bound slot: gone with the window
        pl.addLayout(buttons)
        self.phase_label = QLabel("Idle")
        self.phase_label.setObjectName("phase_label")
        self.progress = QProgressBar()
        self.progress.setObjectName("run_progress")
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.progress.setFixedHeight(8)
        self.time_label = QLabel("")
        self.time_label.setObjectName("time_label")
        self.time_label.setProperty("role", "hint")
        pl.addSpacing(6)
        pl.addWidget(self.phase_label)
        pl.addWidget(self.progress)
        pl.addWidget(self.time_label)
        pl.addStretch(1)
        panel.setMinimumWidth(PANEL_MIN_WIDTH)
        panel.setMaximumWidth(PANEL_MAX_WIDTH)

        # Live dashboard and log
        self.dashboard = DashboardWidget(self.store)
        self.dashboard.setObjectName("live_dashboard")
        self.cpu_panel = CpuPanelWidget()
        self.cpu_panel.setObjectName("live_cpu_panel")
        self.cpu_panel.set_store(self.store)
        self.live_tabs = QTabWidget()
        self.live_tabs.setObjectName("live_tabs")
        self.live_tabs.setDocumentMode(True)
        self.live_tabs.addTab(self.dashboard, "Charts")
        self.live_tabs.addTab(self.cpu_panel, "CPU && counters")
        self.log_view = QPlainTextEdit()
        self.log_view.setObjectName("log_view")
        self.log_view.setReadOnly(True)
        # A run of many hours logs a lot: keep the newest lines only.
        self.log_view.setMaximumBlockCount(self.settings.get("log/max_lines"))
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSizeF(max(8.5, mono.pointSizeF() * 0.92))
        self.log_view.setFont(mono)
        self.log_view.setPlaceholderText("Run messages appear here.")
        self.vu_model = VirtualUserTableModel(self.store, self)
        self.vu_view = VirtualUserTableView(self.vu_model)
        self.vu_view.setObjectName("vu_table")
        self.log_split = QSplitter(Qt.Orientation.Horizontal)    # log | virtual users
        self.log_split.setObjectName("log_split")
        self.log_split.addWidget(self.log_view)
        self.log_split.addWidget(self.vu_view)
        self.log_split.setStretchFactor(0, 3)
        self.log_split.setStretchFactor(1, 2)
        self.log_split.setSizes([540, 560])

        live = QWidget()
        live_l = QHBoxLayout(live)
        live_l.setContentsMargins(0, 0, 0, 0)
        live_l.setSpacing(0)
        self.run_splitter = QSplitter(Qt.Orientation.Vertical)
        self.run_splitter.setObjectName("run_splitter")
        charts = QWidget()
        cl = QVBoxLayout(charts)
        cl.setContentsMargins(8, 6, 0, 0)
        cl.setSpacing(4)
        self.headline = HeadlineStripWidget()
        cl.addWidget(self.headline)
        cl.addWidget(self.live_tabs, 1)
        self.run_splitter.addWidget(charts)
        self.run_splitter.addWidget(self.log_split)
        self.run_splitter.setStretchFactor(0, 5)
        self.run_splitter.setStretchFactor(1, 1)
        self.run_splitter.setSizes([640, 150])
        live_l.addWidget(panel)
        divider = QFrame()
        divider.setFrameShape(QFrame.Shape.VLine)
        divider.setProperty("role", "divider")
        live_l.addWidget(divider)
        live_l.addWidget(self.run_splitter, 1)

        self.session_view = SessionViewWidget()
        self.session_view.setObjectName("session_view")
        self.tabs = QTabWidget()
        self.tabs.setObjectName("main_tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(live, "Live run")
        self.tabs.addTab(self.session_view, "Saved run")

        self.main_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.setObjectName("main_splitter")
        self.main_splitter.addWidget(sidebar)
        self.main_splitter.addWidget(self.tabs)
        self.main_splitter.setStretchFactor(1, 1)
        self.main_splitter.setSizes([250, 1150])
        self.main_splitter.setCollapsible(1, False)
        self.setCentralWidget(self.main_splitter)

    def _build_status_bar(self) -> None:
        sb = self.statusBar()
        self.where_label = QLabel()
        self.where_label.setObjectName("where_label")
        self.state_label = QLabel("Idle")
        self.state_label.setObjectName("state_label")
        sb.addPermanentWidget(self.where_label)
        sb.addPermanentWidget(self.state_label)

    def _connect(self) -> None:
        a = self.actions
        a["run"].triggered.connect(self._on_run_action_triggered)
        a["stop"].triggered.connect(self._on_stop_action_triggered)
        a["quit"].triggered.connect(self.close)
        a["open_session"].triggered.connect(self._on_open_session_action_triggered)
        a["import_logs"].triggered.connect(self._on_import_logs_action_triggered)
        a["refresh_sessions"].triggered.connect(self.refresh_sessions)
        a["add_host"].triggered.connect(lambda: self._open_host_dialog(None))
        a["edit_host"].triggered.connect(lambda: self._open_host_dialog(self.selected_host()))
        a["remove_host"].triggered.connect(self._on_remove_host_action_triggered)
        a["add_target"].triggered.connect(lambda: self._open_target_dialog(None))
        a["edit_target"].triggered.connect(
            lambda: self._open_target_dialog(self.selected_target()))
        a["remove_target"].triggered.connect(self._on_remove_target_action_triggered)
        a["about"].triggered.connect(self._on_about_action_triggered)
        a["shortcuts"].triggered.connect(self._on_shortcuts_action_triggered)
        themes = QActionGroup(self)
        themes.setExclusive(True)
        chosen = self.settings.get("ui/theme")
        for name in THEMES:
            act = a[f"theme_{name}"]
            act.setCheckable(True)
            act.setChecked(name == chosen)
            themes.addAction(act)
            act.triggered.connect(lambda _c=False, n=name: self.set_theme(n))
        a["profiles"].triggered.connect(self._on_profiles_action_triggered)
        a["plan"].triggered.connect(self._on_plan_action_triggered)
        a["compare"].triggered.connect(self._on_compare_action_triggered)
        a["compare"].setEnabled(False)
        self.session_tree.itemSelectionChanged.connect(self._on_session_tree_selection_changed)
        self.session_view.attach_requested.connect(self._on_session_view_attach_requested)
        self.run_button.clicked.connect(a["run"].trigger)
        self.stop_button.clicked.connect(a["stop"].trigger)
        self.workload_combo.currentIndexChanged.connect(self._on_workload_combo_changed)
        self.host_list.currentItemChanged.connect(self._on_selection_changed)
        self.target_list.currentItemChanged.connect(self._on_selection_changed)
        self.host_list.itemDoubleClicked.connect(
            lambda _item: self._open_host_dialog(self.selected_host()))
        self.target_list.itemDoubleClicked.connect(
            lambda _item: self._open_target_dialog(self.selected_target()))
        self.session_tree.itemActivated.connect(self._on_session_tree_activated)
        self.session_tree.itemDoubleClicked.connect(self._on_session_tree_activated)
        self.session_tree.itemClicked.connect(self._on_session_tree_activated)

    # ------------------------------------------------------------------ settings
    def _restore_settings(self) -> None:
        s = self.settings
        geo = s.get("window/geometry")
        if not geo.isEmpty():
            self.restoreGeometry(geo)
        else:
            # no larger than the screen it opens on (a 1366x768 laptop's less its panels)
            avail = self.screen().availableGeometry()
            self.resize(min(1400, avail.width() - 16), min(900, avail.height() - 48))
        for key, splitter in (("window/main_splitter", self.main_splitter),
                              ("window/run_splitter", self.run_splitter)):
            state = s.get(key)
            if not state.isEmpty():
                splitter.restoreState(state)
        idx = self.workload_combo.findData(s.get("run/workload"))
        self.workload_combo.setCurrentIndex(max(0, idx))
        self._on_workload_combo_changed()
        self._select_by_name(self.host_list, s.get("run/host"), "local")
        self._select_by_name(self.target_list, s.get("run/target"), "embedded-postgres")

    def _save_settings(self) -> None:
        s = self.settings
        s.set("window/geometry", self.saveGeometry())
        s.set("window/main_splitter", self.main_splitter.saveState())
        s.set("window/run_splitter", self.run_splitter.saveState())
        s.set("run/workload", self.workload_name())
        if self.selected_host():
            s.set("run/host", self.selected_host())
        if self.selected_target():
            s.set("run/target", self.selected_target())
        if self.form.spec is not None:
            s.set_workload_params(self.form.spec.name, self.form.values())
        s.sync()

    # ------------------------------------------------------------------ catalog lists
    def reload_catalog(self, select_host: str | None = None,
                       select_target: str | None = None) -> None:
        host = select_host or self.selected_host() or "local"
        target = select_target or self.selected_target() or "embedded-postgres"
        for lst, items, label in ((self.host_list, self.catalog.hosts(), host_label),
                                  (self.target_list, self.catalog.targets(), target_label)):
            lst.blockSignals(True)
            lst.clear()
            for obj in items:
                it = QListWidgetItem(label(obj))
                it.setData(ROLE_NAME, obj.name)
                it.setToolTip(item_tooltip(obj))
                lst.addItem(it)
            lst.blockSignals(False)
        self._select_by_name(self.host_list, host, "local")
        self._select_by_name(self.target_list, target, "embedded-postgres")
        self._on_selection_changed()

    @staticmethod
    def _select_by_name(lst: QListWidget, name: str, fallback: str) -> None:
        for want in (name, fallback):
            for i in range(lst.count()):
                if lst.item(i).data(ROLE_NAME) == want:
                    lst.setCurrentRow(i)
                    return
        if lst.count():
            lst.setCurrentRow(0)

    def selected_host(self) -> str | None:
        it = self.host_list.currentItem()
        return it.data(ROLE_NAME) if it else None

    def selected_target(self) -> str | None:
        it = self.target_list.currentItem()
        return it.data(ROLE_NAME) if it else None

    def workload_name(self) -> str:
        return self.workload_combo.currentData() or next(iter(WORKLOADS))

    @Slot()
    def _on_selection_changed(self, *_args) -> None:
        h, t = self.host_list.currentItem(), self.target_list.currentItem()
        self.where_label.setText(
            f"{h.text() if h else 'no host'}  →  {t.text() if t else 'no target'}")
        builtin = {"local", "embedded-postgres"}
        self.actions["edit_host"].setEnabled(self.selected_host() not in (None, "local"))
        self.actions["remove_host"].setEnabled(self.selected_host() not in (None, "local"))
        self.actions["edit_target"].setEnabled(self.selected_target() not in (None, *builtin))
        self.actions["remove_target"].setEnabled(
            self.selected_target() not in (None, *builtin))

    @Slot()
    def _on_workload_combo_changed(self, *_args) -> None:
        if self.form.spec is not None:     # keep what was typed for the previous workload
            self.settings.set_workload_params(self.form.spec.name, self.form.values())
        spec = get_workload(self.workload_name())
        self.form.set_spec(spec)
        self.form.set_values(self.settings.workload_params(spec.name))
        self.workload_description.setText(spec.description)
        # As tall as the form needs (a long form scrolls), with the buttons right below it.
        self.form.adjustSize()
        self.form_scroll.setMaximumHeight(self.form.sizeHint().height() + 6)
        self._fit_run_panel()
        if not self.is_running():
            # the last run's lines must not stay under the new workload's chart titles
            self._show_store(new_store())
            self.phase_label.setText("Idle")
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)
            self.time_label.setText("")
        self.dashboard.set_workload(spec)

    def _fit_run_panel(self) -> None:
        """As wide as the form needs: a narrower panel clipped the spin boxes, and a Tab
        then scrolled the form sideways, cutting its labels."""
        m = self.run_panel.layout().contentsMargins()
        need = (self.form.minimumSizeHint().width() + 2 * self.form_scroll.frameWidth()
                + self.form_scroll.verticalScrollBar().sizeHint().width()
                + m.left() + m.right())
        self.run_panel.setMinimumWidth(max(PANEL_MIN_WIDTH, need))
        self.run_panel.setMaximumWidth(max(PANEL_MAX_WIDTH, need))

    def _show_store(self, store: SeriesStore) -> None:
        """Charts and virtual users show this store, and nothing of the previous one."""
        self.store = store
        self.dashboard.set_store(store)
        self.cpu_panel.set_store(store)
        self.vu_model.set_store(store)
        self.headline.refresh(store, force=True)

    # ------------------------------------------------------------------ running
    def is_running(self) -> bool:
        return self._worker is not None

    def _set_running(self, running: bool) -> None:
        self.actions["run"].setEnabled(not running)
        self.actions["stop"].setEnabled(running)
        self.run_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.form.setEnabled(not running)
        self.workload_combo.setEnabled(not running)
        self.host_list.setEnabled(not running)
        self.target_list.setEnabled(not running)

    def new_session_path(self) -> Path:
        stamp = datetime.now().strftime("%Y-%m-%d_%H%M%S")      # as the CLI names them
        path = self.sessions_dir / f"{stamp}-{self.workload_name()}{SESSION_SUFFIX}"
        n = 2
        while path.exists():
            path = self.sessions_dir / f"{stamp}-{self.workload_name()}-{n}{SESSION_SUFFIX}"
            n += 1
        return path

    @Slot()
    def _on_run_action_triggered(self) -> None:
        if self.is_running():
            return
        spec = get_workload(self.workload_name())
        try:
            params = spec.resolve(self.form.values())
        except ParamError as exc:
            self.show_error("Check the parameters", str(exc))
            return
        host, target = self.selected_host(), self.selected_target()
        if not host or not target:
            self.show_error("Choose where to run", "Select a host and a target first.")
            return
        from app.remote.runner import RunRequest
        self.settings.set_workload_params(spec.name, self.form.values())
        profile_s = self.profile_spin.value()
        perf: dict = {"profile_s": profile_s} if profile_s else {}
        if self.perf_check.isChecked():
            perf["stat"] = True
        request = RunRequest(host=host, target=target, workload=spec.name, params=params,
                             session_path=self.new_session_path(), perf=perf)
        self.start_run(request)

    def start_run(self, request: Any) -> None:
        """Start a run (also used to retry with an accepted host key)."""
        self._request = request
        self._run_params = dict(request.params)
        self._show_store(new_store())
        self._notes_seen = 0
        self._run_t0_wall = time.monotonic()
        self.log_line(f"Starting {request.workload} on {request.host} → {request.target}"
                      f" ({', '.join(f'{k}={v}' for k, v in request.params.items())})", "muted")
        worker = RunWorker(request, self.store, self.catalog, self._controller_factory)
        worker.run_started.connect(self._on_worker_run_started)
        worker.events_received.connect(self._on_worker_events_received)
        worker.status_changed.connect(self._on_worker_status_changed)
        worker.run_finished.connect(self._on_worker_run_finished)
        worker.run_failed.connect(self._on_worker_run_failed)
        self._worker = worker
        self._thread = start_worker_thread(worker)
        self._thread.finished.connect(self._on_run_thread_finished)
        self._set_running(True)
        self.phase_label.setText("Starting…")
        self.progress.setRange(0, 0)       # busy until the first phase says how long
        self.state_label.setText("Running")
        self._clock.start()

    @Slot()
    def _on_stop_action_triggered(self) -> None:
        if self._worker is None:
            return
        self._worker.stop()
        self.stop_button.setEnabled(False)
        self.actions["stop"].setEnabled(False)
        self.state_label.setText("Stopping…")
        self.phase_label.setText("Stopping… (the summary is still written)")
        self.log_line("Stop requested; the run ends cleanly in a few seconds.", "muted")

    @Slot(str)
    def _on_worker_run_started(self, run_id: str) -> None:
        self._live_run_id = run_id
        path = getattr(self._request, "session_path", None)
        if path is not None:             # a zoom into an old part of the run reads the file
            from app.store.session import series_between
            self.dashboard.detail = lambda names, t0, t1: series_between(path, run_id, names,
                                                                         t0, t1)
        self.statusBar().showMessage(f"Run {run_id} started", 5000)
        self.refresh_sessions()            # the new session file shows up while it runs
        self.run_started.emit(run_id)

    @Slot(int)
    def _on_worker_events_received(self, _count: int) -> None:
        if not self._redraw_timer.isActive():
            self._redraw_timer.start()

    @Slot(str)
    def _on_worker_status_changed(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)
        self.log_line(text, "muted")

    @Slot()
    def _on_redraw_timer_timeout(self) -> None:
        self.dashboard.refresh()
        self.cpu_panel.refresh()
        self._show_client_limit(self.store.client_limit())
        self.vu_model.refresh()
        self.headline.refresh(self.store)
        for note in self.store.notes_after(self._notes_seen):
            self._notes_seen = note.id
            self.log_line(f"[{fmt_duration(note.t)}] {note.text}", note.level)
        self._update_progress()

    def _show_client_limit(self, sentence: str | None) -> None:
        """The client-limit sentence marks the CPU tab (its banner says it in full)."""
        icon = (self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
                if sentence else QIcon())
        self.live_tabs.setTabIcon(1, icon)
        self.live_tabs.setTabToolTip(1, sentence or "Where the CPU goes: process groups, "
                                                    "server counters, CPU profiles")

    @Slot()
    def _on_clock_timeout(self) -> None:
        self._update_progress()
        self.headline.refresh(self.store)     # catches what the throttled redraw left

    def _update_progress(self) -> None:
        # after the run ended, a late redraw tick must not overwrite "Stopped"/"Finished"
        if self._run_t0_wall is None or self._worker is None:
            return
        st = self.store.state()
        elapsed = time.monotonic() - self._run_t0_wall
        if st.phase is None:
            if st.ended:
                return
            self.time_label.setText(f"Elapsed {fmt_duration(elapsed)}")
            return
        phase_elapsed = max(0.0, st.last_t - (st.phase_t0 or 0.0))
        planned = self._planned_seconds(st.phase)
        later = self._later_phases_seconds(st.phase)
        if st.progress and st.progress.get("total"):
            done, total = st.progress.get("done", 0), st.progress["total"]
            frac = min(1.0, done / total) if total else 0.0
            unit = st.progress.get("unit", "")
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(frac * 1000))
            self.phase_label.setText(f"{st.phase.capitalize()} · {done:,} / {total:,} {unit}")
            left = (phase_elapsed / frac - phase_elapsed) if frac > 0.02 else None
            remaining = None if left is None else left + later
        elif planned:
            frac = min(1.0, phase_elapsed / planned)
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(frac * 1000))
            self.phase_label.setText(f"{st.phase.capitalize()} · {fmt_duration(phase_elapsed)}"
                                     f" of {fmt_duration(planned)}")
            remaining = max(0.0, planned - phase_elapsed) + later
        else:
            self.progress.setRange(0, 0)
            self.phase_label.setText(f"{st.phase.capitalize()} · {fmt_duration(phase_elapsed)}")
            remaining = None
        left_text = (f"about {fmt_duration(remaining)} left" if remaining is not None
                     else "time left unknown")
        self.time_label.setText(f"Elapsed {fmt_duration(elapsed)} · {left_text}")

    def _planned_phases(self) -> list:
        """The phases the workload declares for this run's parameters, with their seconds."""
        try:
            return get_workload(self._request.workload).planned_phases(self._run_params)
        except (KeyError, AttributeError, ValueError, TypeError):
            return []

    def _planned_seconds(self, phase: str) -> float | None:
        return next((p.seconds for p in self._planned_phases() if p.name == phase), None)

    def _later_phases_seconds(self, phase: str) -> float:
        names = [p.name for p in self._planned_phases()]
        if phase not in names:
            return 0.0
        return sum(p.seconds or 0.0 for p in self._planned_phases()[names.index(phase) + 1:])

    @Slot(object)
    def _on_worker_run_finished(self, outcome: Any) -> None:
        self._on_redraw_timer_timeout()       # draw what arrived since the last tick
        self.headline.refresh(self.store, force=True)
        self.last_outcome = outcome
        status = getattr(outcome, "status", "?")
        reason = getattr(outcome, "reason", "") or ""
        self._finish_run_ui(status)
        text = f"Run {getattr(outcome, 'run_id', '')} {status}" + (f": {reason}" if reason else "")
        # "running": left going on the host (e.g. the session's disk is full): say so loudly
        self.log_line(text, "error" if status == "failed" else
                      "warning" if status == "running" else "muted")
        self.statusBar().showMessage(text, 15000)
        if status == "failed":
            self.show_error("The run failed", reason or "The run failed without a reason.")
        elif status == "running":
            # following stopped unasked (the session's disk filled up): the run is not lost,
            # and the user must act before attach can bring in the rest
            self.show_error("The run goes on, but is no longer saved here",
                            as_sentence(reason) or
                            "Following the run stopped; it goes on on its host.")
        self.refresh_sessions()
        self.run_ended.emit(outcome)

    @Slot(object)
    def _on_worker_run_failed(self, exc: BaseException) -> None:
        self._on_redraw_timer_timeout()
        self.headline.refresh(self.store, force=True)
        self.last_outcome = exc
        self._finish_run_ui("failed")
        from app.remote.errors import UnknownHostKey
        if isinstance(exc, UnknownHostKey) and self._request is not None:
            self.log_line(str(exc), "warning")
            self._ask_host_key(exc)
        else:
            self.log_line(f"Run failed: {exc}", "error")
            self.statusBar().showMessage(f"Run failed: {exc}", 15000)
            self.show_error("The run could not start", str(exc) or type(exc).__name__)
        self.refresh_sessions()
        self.run_ended.emit(exc)

    def _finish_run_ui(self, status: str) -> None:
        self._clock.stop()
        self._update_progress()
        self._redraw_timer.stop()
        self.progress.setRange(0, 1000)
        if status == "ok":
            self.progress.setValue(1000)
        labels = {"ok": "Finished", "stopped": "Stopped", "failed": "Failed",
                  "running": "Goes on on the host, not saved here"}
        self.phase_label.setText(labels.get(status, status.capitalize()))
        self.state_label.setText(labels.get(status, status.capitalize()))
        if self._run_t0_wall is not None:
            self.time_label.setText(f"Ran for {fmt_duration(time.monotonic() - self._run_t0_wall)}")
        self._worker = None                   # the thread still holds it until it finishes
        self._live_run_id = None
        self._set_running(False)

    @Slot()
    def _on_run_thread_finished(self) -> None:
        self._thread = None                   # now Python may collect thread and worker
        if self._close_when_idle:
            self.close()

    def _ask_host_key(self, exc: Any) -> None:
        request = self._request

        def accepted(fingerprint: str) -> None:
            self.log_line(f"Host key {fingerprint} accepted.", "muted")
            self.start_run(replace(request, accept_host_key=fingerprint))

        ask_host_key(self, exc, accepted,
                     lambda: self.log_line("Host key not accepted; nothing was run.", "warning"))

    # ------------------------------------------------------------------ log and errors
    def log_line(self, text: str, level: str = "info") -> None:
        colours = {"error": "#b00020", "warning": "#9a6700", "muted": "#6a737d"}
        stamp = datetime.now().strftime("%H:%M:%S")
        body = html.escape(text)
        colour = colours.get(level)
        if colour:
            body = f'<span style="color:{colour}">{body}</span>'
        self.log_view.appendHtml(f'<span style="color:#98a1ab">{stamp}</span>&nbsp; {body}')

    def show_error(self, title: str, sentence: str) -> QMessageBox:
        """A non-blocking message box: the run and the charts keep going behind it."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, sentence,
                          QMessageBox.StandardButton.Ok, self)
        box.setObjectName("error_box")
        box.finished.connect(lambda _r: self._message_boxes.remove(box)
                             if box in self._message_boxes else None)
        self._message_boxes.append(box)
        box.open()
        return box

    # ------------------------------------------------------------------ sessions
    @Slot()
    def refresh_sessions(self) -> None:
        """Re-read the session files and their runs in a worker (SQLite reads)."""
        folder, extras = self.sessions_dir, list(self._opened_sessions)
        self.tasks.submit(lambda: read_sessions(folder, extras), self._on_sessions_read,
                          self._on_sessions_read_failed)

    def _on_sessions_read(self, entries: list) -> None:
        selected = self.session_tree.currentItem()
        want = selected.data(0, ROLE_NAME) if selected else None
        self.session_tree.clear()
        for entry in entries:
            top = QTreeWidgetItem([entry.title])
            top.setData(0, ROLE_NAME, ("file", str(entry.path)))
            top.setToolTip(0, str(entry.path))
            if entry.error:
                top.setText(0, f"{entry.title}  (unreadable)")
                top.setToolTip(0, entry.error)
                top.setForeground(0, Qt.GlobalColor.darkRed)
            for run in entry.runs:
                child = QTreeWidgetItem([run.label])
                child.setData(0, ROLE_NAME, ("run", str(entry.path), run.id))
                child.setToolTip(0, run.tooltip)
                top.addChild(child)
                if want == ("run", str(entry.path), run.id):
                    self.session_tree.setCurrentItem(child)
            self.session_tree.addTopLevelItem(top)
            top.setExpanded(True)

    def _on_sessions_read_failed(self, exc: BaseException) -> None:
        self.log_line(f"Could not read the sessions folder: {exc}", "warning")

    @Slot(QTreeWidgetItem, int)
    def _on_session_tree_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        data = item.data(0, ROLE_NAME) if item else None
        if not data or data[0] != "run":
            return
        if QApplication.keyboardModifiers() & (Qt.KeyboardModifier.ControlModifier
                                               | Qt.KeyboardModifier.ShiftModifier):
            return                          # picking several runs to compare, not opening one
        _, path, run_id = data
        self.show_saved_run(path, run_id)

    def show_saved_run(self, path: str, run_id: str) -> None:
        """Load one run of a session file into the Saved run view (off the GUI thread)."""
        if self._loading == (path, run_id):
            return
        self._loading = (path, run_id)
        self.session_view.show_loading(Path(path).name, run_id)
        self.tabs.setCurrentWidget(self.session_view)
        self.statusBar().showMessage(f"Loading run {run_id}…")
        self.tasks.submit(lambda: load_run(Path(path), run_id), self._on_session_run_loaded,
                          self._on_session_run_failed)

    def _on_session_run_loaded(self, loaded: Any) -> None:
        self._loading = None
        self.session_view.show_run(loaded)
        self._offer_attach(loaded)
        self.statusBar().showMessage(f"Loaded run {loaded.record.id}: "
                                     f"{loaded.events_count:,} events", 6000)
        self.session_loaded.emit(loaded.record.id)

    def _offer_attach(self, loaded: Any) -> None:
        """A run the session does not have to its end: offer to bring in the rest, unless
        this window is following it already."""
        rec = loaded.record
        if not loaded.is_open or rec.id == self._live_run_id:
            return
        if self._attaching == rec.id:
            self.session_view.offer_attach("Bringing in the rest of this run…", busy=True)
            return
        plan = (rec.info or {}).get("plan") or {}
        where = "this computer" if rec.host == "local" else rec.host
        if plan.get("id"):
            self.session_view.offer_attach(
                f"This run of plan {plan['id']} is not complete in the session. Attach to "
                f"the plan in the Plan tab to bring in the rest.", button=False)
            return
        n = loaded.events_count
        self.session_view.offer_attach(
            f"This run is not complete in the session: {n:,} event{'' if n == 1 else 's'} "
            f"stored, and {where} may hold the rest (the run may still be going there).",
            busy=self._attaching is not None)

    @Slot(str, str)
    def _on_session_view_attach_requested(self, path: str, run_id: str) -> None:
        if self._attach is not None:
            return
        worker = AttachWorker(path, run_id, self.catalog)
        worker.status_changed.connect(self._on_attach_status_changed)
        worker.attach_finished.connect(self._on_attach_finished)
        worker.attach_failed.connect(self._on_attach_failed)
        thread = start_worker_thread(worker, "versus-attach",
                                     (worker.attach_finished, worker.attach_failed))
        thread.finished.connect(self._on_attach_thread_finished)
        self._attach, self._attaching = (worker, thread), run_id
        self.session_view.offer_attach("Bringing in the rest of this run…", busy=True)
        self.log_line(f"Bringing in the rest of run {run_id} from {Path(path).name}", "muted")

    @Slot(str)
    def _on_attach_status_changed(self, text: str) -> None:
        loaded = self.session_view.loaded
        if loaded is not None and loaded.record.id == self._attaching:
            self.session_view.offer_attach(f"Bringing in the rest of this run: {text}",
                                           busy=True)
        self.log_line(text, "muted")

    @Slot(object)
    def _on_attach_finished(self, done: Any) -> None:
        run_id, self._attaching = self._attaching, None
        if done is None:
            text = "Nothing to bring in: the session has this run to its end."
        elif done.error:
            text = as_sentence(done.error, end="")
        else:
            text = (f"Run {done.open.run.id} {done.status}: {done.events_after:,} events "
                    f"({done.events_after - done.events_before:,} brought in)"
                    + (f"; {done.reason}" if done.reason else ""))
        failed = done is not None and (done.error or done.status == "failed")
        self.log_line(text, "error" if failed else "muted")
        self.statusBar().showMessage(text, 15000)
        self.refresh_sessions()
        loaded = self.session_view.loaded
        if loaded is not None and loaded.record.id == run_id:
            if done is not None and done.error:
                self.session_view.offer_attach(text)
            else:                                   # show the run as it now is
                path, rid = loaded.path, run_id
                self.tasks.submit(lambda: load_run(path, rid), self._on_session_run_loaded,
                                  self._on_session_run_failed)

    @Slot(object)
    def _on_attach_failed(self, exc: BaseException) -> None:
        self._attaching = None
        self.log_line(f"Could not bring in the run: {exc}", "error")
        self.session_view.offer_attach(f"Could not bring in the rest: {exc}")

    @Slot()
    def _on_attach_thread_finished(self) -> None:
        self._attach = None
        if self._close_when_idle:
            self.close()

    def _on_session_run_failed(self, exc: BaseException) -> None:
        self._loading = None
        self.session_view.show_failure(str(exc))
        self.show_error("Could not open the run", str(exc))

    @Slot()
    def _on_open_session_action_triggered(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open session", str(self.sessions_dir),
            "Versus sessions (*.versus *.sqlite *.db);;All files (*)")
        if path:
            self.open_session_file(Path(path))

    @Slot()
    def _on_import_logs_action_triggered(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Import logs (HammerDB, sysbench, pgbench)", str(Path.home()),
            "Logs (*.log *.txt *.json pgbench_log.*);;All files (*)")
        if paths:
            self.import_log_files([Path(p) for p in paths])

    def import_log_files(self, paths: list[Path]) -> Path:
        """Import the logs as runs of a new session in the sessions folder (in a worker)."""
        import time as _time
        from app.store.importer import import_logs
        out = self.sessions_dir / f"imported-{_time.strftime('%Y%m%d-%H%M%S')}.versus"
        self.statusBar().showMessage(f"Importing {len(paths)} file(s)…")
        self.tasks.submit(lambda: import_logs(paths, out), self._on_logs_imported,
                          lambda exc: self.show_error("Could not import the logs", str(exc)))
        return out

    def _on_logs_imported(self, outcome: Any) -> None:
        from app.store.importer import describe
        for run in outcome.runs:
            self.log_line(f"Imported {describe(run)}")
        self.statusBar().showMessage(f"Imported {len(outcome.runs)} run(s) into "
                                     f"{outcome.session_path.name}", 8000)
        if outcome.problems:
            self.show_error("Some files were not imported", "\n".join(outcome.problems))
        if outcome.runs:
            self.open_session_file(outcome.session_path)

    def open_files(self, paths: list[Path]) -> None:
        """Session files given on the command line: listed under Sessions; several files, or
        one file of several runs, in Compare; a file of one run in the Saved run view."""
        from app.model.runset import RunRef
        from app.store.session import SessionError, SessionFile
        runs: list[tuple[Path, str]] = []
        for path in paths:
            path = path.resolve()
            try:
                sf = SessionFile(path, readonly=True)
                try:
                    runs += [(path, r.id) for r in sf.runs()]
                finally:
                    sf.close()
            except SessionError as exc:       # not a session file: said, the others open
                self.show_error(f"Could not open {path.name}", str(exc))
                continue
            self.open_session_file(path)
        if len(runs) == 1:
            self.show_saved_run(str(runs[0][0]), runs[0][1])
        elif runs:
            self.show_compare([RunRef(str(p), r) for p, r in runs])

    def open_session_file(self, path: Path) -> None:
        if path not in self._opened_sessions and path.parent != self.sessions_dir:
            self._opened_sessions.append(path)
        self.refresh_sessions()

    # ------------------------------------------------------------------ hosts and targets
    def _open_host_dialog(self, name: str | None) -> None:
        from app.ui.dialogs.host import HostDialog
        existing = self.catalog.host(name) if name and name != "local" else None
        dlg = HostDialog(self.catalog, existing, parent=self)
        dlg.host_saved.connect(lambda n: self.reload_catalog(select_host=n))
        self._show_dialog(dlg)

    def _open_target_dialog(self, name: str | None) -> None:
        from app.ui.dialogs.target import TargetDialog
        builtin = name in (None, "embedded-postgres")
        existing = None if builtin else self.catalog.target(name)
        dlg = TargetDialog(self.catalog, existing, default_host=self.selected_host(),
                           parent=self)
        dlg.target_saved.connect(lambda n: self.reload_catalog(select_target=n))
        self._show_dialog(dlg)

    def _show_dialog(self, dlg) -> None:
        # open(), not exec(): no nested event loop, the live charts keep drawing.
        self._dialogs.append(dlg)
        dlg.finished.connect(lambda _r: self._dialogs.remove(dlg) if dlg in self._dialogs
                             else None)
        dlg.open()

    @Slot()
    def _on_remove_host_action_triggered(self) -> None:
        name = self.selected_host()
        if name and name != "local":
            from app.remote.hosts import remove_host
            remove_host(self.catalog, name)
            self.reload_catalog(select_host="local")

    @Slot()
    def _on_remove_target_action_triggered(self) -> None:
        name = self.selected_target()
        if name and name != "embedded-postgres":
            from app.remote.hosts import remove_target
            remove_target(self.catalog, name)
            self.reload_catalog(select_target="embedded-postgres")

    @Slot()
    def _on_profiles_action_triggered(self) -> None:
        from app.ui.profiles.editor import ProfileEditorDialog
        self._show_dialog(ProfileEditorDialog(self.catalog, parent=self))

    @Slot()
    def _on_session_tree_selection_changed(self) -> None:
        self.actions["compare"].setEnabled(bool(self.session_tree.selected_refs()))

    @Slot()
    def _on_compare_action_triggered(self) -> None:
        refs = self.session_tree.selected_refs()
        if refs:
            self.show_compare(refs)

    @staticmethod
    def _add_cpu_page(cw: Any) -> None:
        """Compare's 'CPU & counters' tab, following its runs and its base run."""
        page = CpuComparePage()
        page.setObjectName("cpu_compare_page")
        cw.table_tabs.addTab(page, "CPU && counters")
        cw.cpu_page = page
        cw.comparison_loaded.connect(lambda comp: page.set_comparison(comp, cw.base()))
        cw.base_combo.currentIndexChanged.connect(
            lambda _i: page.set_base(cw.base()) if cw.comp is not None else None)

    def show_compare(self, refs: list | None = None) -> Any:
        """The Compare tab (made when first needed), comparing ``refs`` if given."""
        if self.compare_widget is None:
            from app.ui.compare.view import CompareWidget
            self.compare_widget = CompareWidget(self.tasks, export_dir=self.sessions_dir,
                                                settings=self.settings)
            self._add_cpu_page(self.compare_widget)
            self.tabs.addTab(self.compare_widget, "Compare")
            self.tabs.tabBar().setChangeCurrentOnDrag(True)     # drag runs onto the tab
            menu = next((m for m in self.menuBar().findChildren(QMenu)
                         if m.title() == "&Compare"), None)
            if menu is not None:           # replay and export from the menu bar too
                cv = self.compare_widget.actions
                menu.addSeparator()
                menu.addActions([cv[k] for k in ("play_pause", "step_back", "step_forward",
                                                 "loop")])
                menu.addSeparator()
                menu.addActions(self.compare_widget.export_menu.actions())
        if refs:
            self.compare_widget.set_runs(refs)
        self.tabs.setCurrentWidget(self.compare_widget)
        return self.compare_widget

    @Slot()
    def _on_plan_action_triggered(self) -> None:
        if self.plan_widget is None:
            from app.ui.plan.view import PlanWidget
            self.plan_widget = PlanWidget(self.catalog)
            self.plan_widget.setObjectName("plan_widget")
            self.plan_widget.plan_ended.connect(lambda _o: self.refresh_sessions())
            self.plan_widget.plan_started.connect(lambda _id: self.refresh_sessions())
            self.plan_widget.plan_idle.connect(
                lambda: self.close() if self._close_when_idle else None)
            self.plan_widget.compare_requested.connect(self.show_compare)
            self.tabs.addTab(self.plan_widget, "Plan")
        self.tabs.setCurrentWidget(self.plan_widget)

    def _tint_run_icons(self, _theme: str = "") -> None:
        """Run and Stop glyphs in their buttons' text colours, light or dark theme."""
        text = QApplication.palette().color(QPalette.ColorRole.ButtonText)
        play = self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay)
        stop = self.style().standardIcon(QStyle.StandardPixmap.SP_MediaStop)
        self.run_button.setIcon(theme.tinted(play, "#ffffff"))     # on the accent colour
        self.stop_button.setIcon(theme.tinted(stop, text))
        self.actions["run"].setIcon(theme.tinted(play, text))
        self.actions["stop"].setIcon(theme.tinted(stop, text))

    def set_theme(self, name: str) -> None:
        """Light, dark or the system's, now and at the next start."""
        self.settings.set("ui/theme", name)
        theme.apply(QApplication.instance(), name)
        self.actions[f"theme_{name}"].setChecked(True)

    @Slot()
    def _on_shortcuts_action_triggered(self) -> None:
        from app.ui.dialogs.shortcuts import ShortcutsDialog
        self._show_dialog(ShortcutsDialog(self))

    def about_text(self) -> str:
        import platform

        import PySide6
        import pyqtgraph

        from app import __version__
        from app.store.paths import config_dir
        readme = Path(__file__).resolve().parents[2] / "README.md"

        def link(path: Path, text: str) -> str:
            return f'<a href="{QUrl.fromLocalFile(str(path)).toString()}">{html.escape(text)}</a>'

        rows = [f"<b>Versus {html.escape(__version__)}</b>",
                "Runs database benchmarks, streams live charts and keeps every run in a "
                "session file.",
                f"Python {platform.python_version()} · Qt {PySide6.__version__} · "
                f"pyqtgraph {pyqtgraph.__version__}",
                f"Sessions: {link(self.sessions_dir, str(self.sessions_dir))}",
                f"Hosts, targets and settings: {link(config_dir(), str(config_dir()))}"]
        if readme.exists():
            rows.append(f"Documentation: {link(readme, 'README')}")
        rows.append("Keyboard shortcuts: Help ▸ Keyboard Shortcuts (F1)")
        return "<br>".join(rows)

    @Slot()
    def _on_about_action_triggered(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, "About Versus", self.about_text(),
                          QMessageBox.StandardButton.Ok, self)
        box.setObjectName("about_box")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self._message_boxes.append(box)
        box.finished.connect(lambda _r: self._message_boxes.remove(box)
                             if box in self._message_boxes else None)
        box.open()

    # ------------------------------------------------------------------ closing
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.plan_widget is not None and not self.plan_widget.shutdown():
            # a followed plan goes on on the host; close once its thread has let go
            self._close_when_idle = True
            event.ignore()
            return
        if self._attach is not None:
            # the run goes on on its host; close once the attach thread has let go
            self._attach[0].leave()
            self._close_when_idle = True
            event.ignore()
            return
        if self._worker is not None or self._thread is not None:
            # Never block the GUI: ask the run to stop and close once its thread is done.
            if self._worker is not None:
                self._on_stop_action_triggered()
            self._close_when_idle = True
            self.statusBar().showMessage("Stopping the run before closing…")
            event.ignore()
            return
        self._save_settings()
        super().closeEvent(event)
