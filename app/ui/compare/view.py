"""Compare and Replay: runs from any sessions on linked charts, one clock, ratio tables.

    view = CompareWidget(tasks)
    view.set_runs([RunRef("a.versus", "20261121-…"), RunRef("b.versus")])   # loads off-thread
    view.clock.play()                                   # Space does the same

The view puts together parts that each do one thing (STYLE.md "Data flow for live charts"):

- the data: one ``Comparison`` (app.analysis.compare), loaded from the session files in a
  background task; no part owns series, they read ``comp.series(i, key)``;
- the one clock and its bar (``replay``): the scrubber, a drag of a chart's cursor, a click
  on a chart, the step buttons and the play timer all move it; every cursor, the values
  panel and the replayed lines follow its ``position_changed``;
- the charts (``compare_panes``): overlay or side by side, time axes linked, y axes fixed
  to hold every run; while the clock runs the lines grow up to the cursor as if live;
- the numbers (``compare_tables``): values at the cursor, per-phase ratios, the matrix, the
  server settings; and the exports (``compare_export``).

A run still in progress is re-read from its session file every two seconds, so it can be
watched next to a finished one. Every run keeps one colour (by the order it joined the
comparison) in charts, values, tables, legends and exports.
"""
from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any, Sequence

from PySide6.QtCore import QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QMenu, QMessageBox, QSplitter,
                               QStackedWidget, QToolButton, QVBoxLayout, QWidget)

from app.analysis.compare import CompareError, Comparison, load_comparison, load_run
from app.analysis.metrics import CHARTS
from app.model.runset import RUN_COLOURS, RunRef

from app.ui.common.actions import COMPARE_ACTIONS, build_actions, keep_shortcuts
from app.ui.compare.exports import CompareExports
from app.ui.compare.panes import ComparePanes
from app.ui.compare.tables import (CLASS_ROLE, CompareTablesWidget, MatrixTableModel,  # noqa: F401
                             RatioTableModel, ValuesPanel, swatch)
from app.ui.charts.render import FORMATS
from app.ui.compare.replay import ReplayBar, ReplayClock
from app.ui.sessions.tree import SessionTreeWidget, ref_key, refs_from_mime, runs_mime  # noqa: F401
from app.ui.compare.suite_matrix import StepChartsWindow
from app.ui.common.tasks import TaskRunner

LIVE_MS = 2000                # a live run is re-read this often
REFREEZE_MS = 120             # after a zoom or resize, the replay picture is taken again
FINISHED = ("ok", "stopped", "failed")


REPLAY_KEYS = ("play_pause", "step_back", "step_forward")    # Space "," "."

class CompareWidget(QWidget):
    """Runs from any sessions: charts (overlay or side by side), replay, tables, exports."""

    comparison_loaded = Signal(object)          # Comparison
    load_failed = Signal(str)
    export_finished = Signal(str)               # path written
    export_failed = Signal(str)                 # the sentence shown
    live_refreshed = Signal(int)                # index of the run re-read

    def __init__(self, tasks: TaskRunner | None = None, parent: QWidget | None = None,
                 export_dir: Path | str | None = None, settings: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_view")
        self.tasks = tasks or TaskRunner(self)
        self.clock = ReplayClock(self)
        self.comp: Comparison | None = None
        self.refs: list[RunRef] = []
        self.mode = "overlay"
        self.settings = settings          # app.ui.common.settings.Settings: export choices kept
        self.default_export_dir = Path(export_dir or Path.home())
        self._colours: dict[tuple, str] = {}
        self._damaged_told: set[str] = set()    # damaged rows already named (live reloads)
        self._chart_choice: list[str] | None = None     # None: the default charts
        self._generation = 0
        self._live_busy: set[int] = set()
        self._menu_chart: str | None = None
        self._message_boxes: list[QMessageBox] = []

        self.actions = build_actions(self, COMPARE_ACTIONS)
        for act in self.actions.values():
            act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(act)
        self.actions["loop"].setCheckable(True)
        self.panes = ComparePanes(self)
        self.tables = CompareTablesWidget(self.tasks, self.actions)
        self.tables.suite_matrix.test_chosen.connect(self._on_suite_test_chosen)
        self._step_windows: list[StepChartsWindow] = []
        self.values_panel = ValuesPanel()
        self.values_panel.setObjectName("values_panel")
        self.replay_bar = ReplayBar(self.clock, self.actions)
        self._build()
        self.exports = CompareExports(self)
        self._connect()
        self._keeper = keep_shortcuts(self, self.actions)     # Ctrl+E in the filter box
        self.setAcceptDrops(True)
        self._live_timer = QTimer(self)
        self._live_timer.setInterval(LIVE_MS)
        self._live_timer.timeout.connect(self._on_live_timer_timeout)
        self._refreeze_timer = QTimer(self)
        self._refreeze_timer.setSingleShot(True)
        self._refreeze_timer.setInterval(REFREEZE_MS)
        self._refreeze_timer.timeout.connect(self._on_refreeze_timer_timeout)
        self._set_enabled(False)

    # the parts, by the names tests, the main window and screenshots use
    @property
    def plots(self):
        return self.panes.plots

    @property
    def curves(self):
        return self.panes.curves

    @property
    def cursors(self):
        return self.panes.cursors

    @property
    def overlay(self):
        return self.panes.overlay

    @property
    def crosshair(self):
        return self.panes.crosshair

    @property
    def chart_names(self) -> list[str]:
        return self.panes.chart_names

    @property
    def log_charts(self) -> set[str]:
        return self.panes.log_charts

    @property
    def chart_view(self):
        return self.panes.view

    @property
    def export_dir(self) -> Path:
        return self.exports.export_dir

    @property
    def table_tabs(self) -> CompareTablesWidget:
        return self.tables

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        outer.setSpacing(6)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack)
        self.placeholder = QLabel("Select runs in the Sessions list (Ctrl+click for several) "
                                  "and press Compare, or drop runs or session files here.")
        self.placeholder.setObjectName("compare_placeholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setProperty("role", "hint")
        self.stack.addWidget(self.placeholder)
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        self.stack.addWidget(page)
        lay.addLayout(self._build_top_bar())

        # Charts over the replay bar take the height (three charts in 450 px were too
        # squeezed); the values at the cursor, the tables and the settings a column.
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.setSpacing(4)
        ll.addWidget(self.panes.view, 1)
        ll.addWidget(self.replay_bar)
        self.side_split = QSplitter(Qt.Orientation.Vertical)
        self.side_split.setObjectName("compare_side")
        self.side_split.addWidget(self.values_panel)
        self.side_split.addWidget(self.tables)
        self.side_split.setStretchFactor(0, 1)
        self.side_split.setStretchFactor(1, 3)
        self.side_split.setSizes([220, 600])
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setObjectName("compare_split")
        self.split.addWidget(left)
        self.split.addWidget(self.side_split)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setSizes([820, 520])
        self.split.setCollapsible(0, False)
        lay.addWidget(self.split, 1)

    def _build_top_bar(self) -> QHBoxLayout:
        """The runs in their colours, then the view's choices and the export menu."""
        top = QHBoxLayout()
        top.setSpacing(10)
        self.runs_bar = QHBoxLayout()
        self.runs_bar.setSpacing(14)
        top.addLayout(self.runs_bar)
        top.addStretch(1)
        top.addWidget(QLabel("Align on"))
        self.align_combo = QComboBox()
        self.align_combo.setObjectName("align_combo")
        self.align_combo.setToolTip("Time zero of every run: its start, or the start of a "
                                    "phase all runs have")
        top.addWidget(self.align_combo)
        top.addWidget(QLabel("Base"))
        self.base_combo = QComboBox()
        self.base_combo.setObjectName("base_combo")
        self.base_combo.setToolTip("The run the ratios are taken to")
        top.addWidget(self.base_combo)
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("mode_combo")
        self.mode_combo.addItem("Overlay", "overlay")
        self.mode_combo.addItem("Side by side", "side-by-side")
        self.mode_combo.setToolTip("Overlay: one chart per metric, one line per run. Side by "
                                   "side: one column per run, one row per metric")
        top.addWidget(self.mode_combo)
        self.charts_button = QToolButton()
        self.charts_button.setText("Charts")
        self.charts_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.charts_menu = QMenu(self.charts_button)
        self.charts_button.setMenu(self.charts_menu)
        top.addWidget(self.charts_button)
        self.export_button = QToolButton()
        self.export_button.setObjectName("export_button")
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_menu = QMenu(self.export_button)
        for key in ("export_chart", "copy_chart", None, "export_series_csv",
                    "export_series_json", None, "export_tables_md", "export_tables_html",
                    "export_tables_csv", None, "export_deck", None, "export_footer"):
            if key is None:
                self.export_menu.addSeparator()
            else:
                self.export_menu.addAction(self.actions[key])
        self.export_button.setMenu(self.export_menu)
        top.addWidget(self.export_button)
        return top

    def _connect(self) -> None:
        c = self.clock
        c.position_changed.connect(self._on_clock_position_changed)
        c.playing_changed.connect(self._on_clock_playing_changed)
        self.panes.position_picked.connect(self.clock.set_position)
        self.panes.menu_requested.connect(lambda name, pos: self.chart_menu(name).popup(pos))
        self.panes.view_changed.connect(self._on_panes_view_changed)
        # scrubbing while paused moves the cursor over a still picture of the charts
        self.replay_bar.scrub_started.connect(self._on_scrub_started)
        self.replay_bar.scrub_ended.connect(self._on_scrub_ended)
        self.mode_combo.currentIndexChanged.connect(
            lambda _i: self.set_mode(self.mode_combo.currentData()))
        self.align_combo.currentIndexChanged.connect(self._on_align_combo_changed)
        self.base_combo.currentIndexChanged.connect(lambda _i: self._fill_tables())
        self.tables.changed.connect(self._fill_tables)

    def _set_enabled(self, on: bool) -> None:
        for act in self.actions.values():
            act.setEnabled(on)
        self.stack.setCurrentIndex(1 if on else 0)

    def message(self, text: str, title: str, name: str = "compare_error_box") -> QMessageBox:
        """A non-blocking message box: replay and live refresh go on behind it."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok,
                          self)
        box.setObjectName(name)
        box.finished.connect(lambda _r: self._message_boxes.remove(box)
                             if box in self._message_boxes else None)
        self._message_boxes.append(box)
        box.open()
        return box

    # ------------------------------------------------------------------ loading
    def set_runs(self, refs: Sequence[RunRef]) -> None:
        """Compare exactly these runs (a RunRef without run id: every run of that file)."""
        self.clock.pause()
        self._load(list(refs))

    def add_runs(self, refs: Sequence[RunRef]) -> None:
        """Add runs (dropped, or compared while a comparison is open); duplicates are left out."""
        have = {ref_key(r) for r in self.refs}
        new = [r for r in refs if ref_key(r) not in have]
        if new:
            self._load(self.refs + new)

    def remove_run(self, index: int) -> None:
        refs = [r for i, r in enumerate(self.refs) if i != index]
        if refs:
            self._load(refs)
        else:
            self.clear()

    def clear(self) -> None:
        self.clock.pause()
        self._live_timer.stop()
        self.comp, self.refs = None, []
        self.panes.clear()
        self._set_enabled(False)

    def _load(self, refs: list[RunRef]) -> None:
        self._generation += 1
        gen = self._generation
        align = self.comp.align_phase if self.comp is not None else None
        if self.comp is None:
            self.placeholder.setText("Loading the runs…")

        def job():
            comp = load_comparison(refs)
            if align and all(r.phase(align) for r in comp.runs):
                comp.align(align)
            comp.charts()           # computes the series here, off the GUI thread
            return comp

        self.tasks.submit(job, lambda comp: self._on_comparison_loaded(gen, comp),
                          lambda exc: self._on_comparison_failed(gen, exc))

    def _on_comparison_failed(self, gen: int, exc: BaseException) -> None:
        if gen != self._generation:
            return
        msg = str(exc) or type(exc).__name__
        if self.comp is None:
            self.placeholder.setText(f"Could not open the runs: {msg}")
        self.message(f"Could not open the runs: {msg}", "Compare")
        self.load_failed.emit(msg)

    def _on_comparison_loaded(self, gen: int, comp: Comparison) -> None:
        if gen != self._generation:
            return
        # one colour per run for as long as it is in the comparison; newcomers take the
        # first colour no run has
        kept: set[int] = set()
        used: set[str] = set()
        for r in comp.runs:
            col = self._colours.get(ref_key(r.ref))
            if col is not None and col not in used:
                r.colour = col
                used.add(col)
                kept.add(r.index)
        for r in comp.runs:
            if r.index not in kept:
                free = [c for c in RUN_COLOURS if c not in used] or list(RUN_COLOURS)
                r.colour = free[0]
                used.add(r.colour)
        self._colours = {ref_key(r.ref): r.colour for r in comp.runs}
        # other runs: the time axis spans them (the previous runs' range hid part of them)
        same_runs = self.comp is not None and [r.ref for r in self.comp.runs] == [
            r.ref for r in comp.runs]
        self.comp = comp
        self.refs = [r.ref for r in comp.runs]
        self._fill_runs_bar()
        self._fill_choices()
        self._rebuild_charts(keep_x=same_runs)
        self._fill_tables()
        self.tables.settings_page.load(comp)
        lo, hi = comp.time_range()
        self.clock.set_range(lo, hi)
        self.clock.set_position(self._first_values_time())
        self._on_clock_position_changed(self.clock.position)
        self._set_enabled(True)
        if self.live_runs():
            self._live_timer.start()
        else:
            self._live_timer.stop()
        new = [d for d in comp.damaged() if d not in self._damaged_told]
        if new:
            self._damaged_told.update(new)
            more = f"\n… and {len(new) - 5} more" if len(new) > 5 else ""
            self.message("Damaged rows of the session files were skipped; everything else "
                         "is shown:\n" + "\n".join(new[:5]) + more, "Compare",
                         name="compare_damaged_box")
        self.comparison_loaded.emit(comp)

    def _first_values_time(self) -> float:
        """Where the cursor starts: the first moment every run has a value of the first
        chart (at the run start there is none yet, and the values panel showed dashes)."""
        comp = self.comp
        lo, hi = comp.time_range()
        key = CHARTS[self.chart_names[0]].metrics[0] if self.chart_names else "throughput"
        firsts = [comp.series(i, key)[0] for i in range(len(comp.runs))]
        firsts = [t[0] for t in firsts if len(t)]
        start = max(firsts) if firsts else max(0.0, lo)
        return min(max(start, lo, 0.0 if lo <= 0 <= hi else lo), hi)

    def live_runs(self) -> list[int]:
        return [i for i, r in enumerate(self.comp.runs) if r.status not in FINISHED] \
            if self.comp else []

    def _fill_runs_bar(self) -> None:
        while self.runs_bar.count():
            w = self.runs_bar.takeAt(0).widget()
            if w is not None:
                w.hide()
                w.deleteLater()
        for i, r in enumerate(self.comp.runs):
            live = " (live)" if r.status not in FINISHED else ""
            lab = QLabel(f'<span style="color:{r.colour};font-size:14pt">■</span> '
                         f'{i + 1}. {escape(r.label)}{live}')
            lab.setObjectName(f"run_chip_{i}")
            lab.setToolTip(f"{r.ref.file}\nrun {r.ref.run_id}\n{r.workload} on {r.hostname}"
                           f" → {r.target}\n" + ", ".join(f"{k}={v}" for k, v in
                                                          r.params.items()))
            lab.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            lab.customContextMenuRequested.connect(
                lambda pos, i=i, lab=lab: self._on_run_chip_menu(i, lab.mapToGlobal(pos)))
            self.runs_bar.addWidget(lab)

    def _on_run_chip_menu(self, i: int, pos: QPoint) -> None:
        menu = QMenu(self)
        menu.addAction("Use as base run", lambda: self.base_combo.setCurrentIndex(i))
        menu.addAction("Remove from the comparison", lambda: self.remove_run(i))
        menu.popup(pos)

    def _fill_choices(self) -> None:
        comp = self.comp
        for combo in (self.align_combo, self.base_combo):
            combo.blockSignals(True)
        base = self.base_combo.currentIndex()
        self.align_combo.clear()
        self.align_combo.addItem("Run start", None)
        for ph in comp.common_phases():
            self.align_combo.addItem(f"Start of {ph}", ph)
        self.align_combo.setCurrentIndex(max(0, self.align_combo.findData(comp.align_phase)))
        self.base_combo.clear()
        for r in comp.runs:
            self.base_combo.addItem(swatch(r.colour), f"{r.index + 1}. {r.label}", r.index)
        self.base_combo.setCurrentIndex(base if 0 <= base < len(comp.runs) else 0)
        for combo in (self.align_combo, self.base_combo):
            combo.blockSignals(False)
        self.tables.fill_choices(comp)
        self.charts_menu.clear()
        shown = self._shown_charts()
        for name in comp.charts():
            act = self.charts_menu.addAction(CHARTS[name].title)
            act.setCheckable(True)
            act.setChecked(name in shown)
            act.toggled.connect(lambda on, n=name: self._on_chart_toggled(n, on))

    # ------------------------------------------------------------------ charts
    def _shown_charts(self) -> list[str]:
        have = self.comp.charts() if self.comp else []
        want = (self._chart_choice if self._chart_choice is not None
                else self.comp.default_charts() if self.comp else [])
        return [c for c in have if c in want] or have[:1]

    def set_charts(self, names: Sequence[str]) -> None:
        self._chart_choice = list(names)
        self._rebuild_charts()

    def _on_chart_toggled(self, name: str, on: bool) -> None:
        shown = self._shown_charts()
        shown = [c for c in shown if c != name] + ([name] if on else [])
        order = list(CHARTS)
        self.set_charts(sorted(shown, key=order.index))

    def set_mode(self, mode: str) -> None:
        if mode not in ("overlay", "side-by-side"):
            raise ValueError(f"a compare mode is overlay or side-by-side, not {mode!r}")
        self.mode = mode
        self.mode_combo.blockSignals(True)
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(mode))
        self.mode_combo.blockSignals(False)
        self._rebuild_charts()

    def set_log_scale(self, chart: str, on: bool) -> None:
        """A log10 value axis for ``chart`` here and in its exports."""
        (self.log_charts.add if on else self.log_charts.discard)(chart)
        self._rebuild_charts()

    def _rebuild_charts(self, keep_x: bool = True) -> None:
        comp = self.comp
        if comp is None:
            return
        playing = self.clock.playing
        self.panes.build(comp, self._shown_charts(), self.mode, self.clock.position, keep_x)
        keys = [k for n in self.chart_names for k in CHARTS[n].metrics]
        self.values_panel.set_comparison(comp, keys)
        total = sum(self.side_split.sizes())
        if total > 0:
            top = min(self.values_panel.wanted_height(), total // 2)
            self.side_split.setSizes([top, total - top])
        self._on_clock_position_changed(self.clock.position)
        if playing:
            self._freeze()

    def plot(self, chart: str, run: int | None = None):
        return self.panes.plot(chart, run)

    def cursor_positions(self) -> list[float]:
        return self.panes.cursor_positions()

    def reset_zoom(self) -> None:
        if self.comp is not None:
            self.panes.set_x_view(*self.comp.time_range())

    def current_chart(self) -> str:
        """The chart an export is about: the one last right-clicked, else the first."""
        return self._menu_chart if self._menu_chart in self.chart_names else (
            self.chart_names[0] if self.chart_names else "throughput")

    def chart_menu(self, chart: str) -> QMenu:
        """The context menu of one chart."""
        self._menu_chart = chart
        title = CHARTS[chart].title
        menu = QMenu(self)
        menu.setObjectName("chart_menu")
        for fmt in FORMATS:
            menu.addAction(f"Export {title} as {fmt.upper()}…",
                           lambda f=fmt: self.exports.ask_chart_path(chart, f))
        menu.addAction(f"Copy {title} to the clipboard", lambda: self.copy_chart(chart))
        menu.addSeparator()
        log = menu.addAction("Logarithmic scale")
        log.setCheckable(True)
        log.setChecked(chart in self.log_charts)
        log.toggled.connect(lambda on: self.set_log_scale(chart, on))
        menu.addSeparator()
        menu.addAction(self.actions["export_series_csv"])
        menu.addAction(self.actions["export_series_json"])
        menu.addAction(self.actions["export_deck"])
        menu.addSeparator()
        menu.addAction("Show all of the time axis", self.reset_zoom)
        return menu

    # ------------------------------------------------------------------ clock → views
    @Slot(float)
    def _on_clock_position_changed(self, t: float) -> None:
        self.panes.set_time(t)
        self.values_panel.show_time(t)

    @Slot(bool)
    def _on_clock_playing_changed(self, playing: bool) -> None:
        if playing:
            self._freeze()
        else:
            self.panes.thaw()

    def _freeze(self) -> None:
        if self.isVisible():
            self.panes.freeze(self.clock.position)

    def _on_scrub_started(self) -> None:
        if not self.clock.playing and self.isVisible():
            self.panes.freeze(self.clock.position, grow=False)

    def _on_scrub_ended(self) -> None:
        if not self.clock.playing:
            self.panes.thaw()

    def _on_panes_view_changed(self) -> None:
        if self.clock.playing:
            self._refreeze_timer.start()

    def _on_refreeze_timer_timeout(self) -> None:
        if self.clock.playing:
            self._freeze()

    def _replay_keys_window_wide(self, on: bool) -> None:
        """While Compare is shown its replay keys act wherever the focus is in the window
        (the Sessions tree is the usual way in; a text field keeps its own keys); hidden,
        they are its own again, so another view keeps Space, "," and "."."""
        for name in REPLAY_KEYS:
            self.actions[name].setShortcutContext(
                Qt.ShortcutContext.WindowShortcut if on
                else Qt.ShortcutContext.WidgetWithChildrenShortcut)

    def showEvent(self, ev) -> None:                          # noqa: N802
        self._replay_keys_window_wide(True)
        super().showEvent(ev)

    def hideEvent(self, ev) -> None:                          # noqa: N802
        self.clock.pause()          # a hidden view does not play on in the background
        self._replay_keys_window_wide(False)
        super().hideEvent(ev)

    # ------------------------------------------------------------------ alignment
    def set_align(self, phase: str | None) -> None:
        if self.comp is None:
            return
        try:
            self.comp.align(phase)
        except CompareError as exc:
            self.message(str(exc), "Cannot align")
            return
        self.align_combo.blockSignals(True)
        self.align_combo.setCurrentIndex(max(0, self.align_combo.findData(phase)))
        self.align_combo.blockSignals(False)
        lo, hi = self.comp.time_range()
        self.clock.set_range(lo, hi)
        self._rebuild_charts()
        self.panes.set_x_view(lo, hi)
        self.clock.set_position(min(max(0.0, lo), hi))
        self._on_clock_position_changed(self.clock.position)

    def _on_align_combo_changed(self, _i: int) -> None:
        self.set_align(self.align_combo.currentData())

    # ------------------------------------------------------------------ tables
    def base(self) -> int:
        b = self.base_combo.currentData()
        return int(b) if b is not None else 0

    def set_base(self, index: int) -> None:
        self.base_combo.setCurrentIndex(index)

    def set_phase(self, phase: str) -> None:
        self.tables.phase_combo.setCurrentIndex(self.tables.phase_combo.findData(phase))

    def _fill_tables(self) -> None:
        self.tables.fill(self.comp, self.base())

    def _on_suite_test_chosen(self, phase: str, run: int) -> None:
        """A suite matrix cell: the base run's and that run's charts, aligned on the test."""
        refs = list(dict.fromkeys((self.refs[self.base()], self.refs[run])))
        self._step_windows = [w for w in self._step_windows if w.isVisible()]
        w = StepChartsWindow(CompareWidget(self.tasks), refs, phase, self)
        self._step_windows.append(w)
        w.show()

    # ------------------------------------------------------------------ live runs
    def _on_live_timer_timeout(self) -> None:
        if self.comp is None:
            return
        for i in self.live_runs():
            if i in self._live_busy:
                continue
            self._live_busy.add(i)
            r = self.comp.runs[i]
            gen = self._generation
            file, run_id, index = r.ref.file, r.ref.run_id, r.index

            def job(file=file, run_id=run_id, index=index):
                from app.store.session import SessionFile
                with SessionFile(file) as s:
                    return load_run(s, run_id, index, file)

            self.tasks.submit(job, lambda new, i=i, gen=gen: self._on_live_run_read(gen, i, new),
                              lambda exc, i=i: self._live_busy.discard(i))

    def _on_live_run_read(self, gen: int, i: int, new: Any) -> None:
        self._live_busy.discard(i)
        if gen != self._generation or self.comp is None or i >= len(self.comp.runs):
            return
        comp, old = self.comp, self.comp.runs[i]
        new.label, new.colour = old.label, old.colour
        span = new.phase(comp.align_phase) if comp.align_phase else None
        new.offset = span.t0 if span else old.offset
        comp.runs[i] = new
        self.panes.update_run(i)
        lo, hi = comp.time_range()
        self.clock.set_range(lo, hi)
        self._fill_tables()
        self._on_clock_position_changed(self.clock.position)
        if new.status in FINISHED:
            self._fill_runs_bar()
            if not self.live_runs():
                self._live_timer.stop()
        if self.clock.playing:
            self._refreeze_timer.start()
        self.live_refreshed.emit(i)

    # ------------------------------------------------------------------ drag and drop
    def dragEnterEvent(self, ev) -> None:                    # noqa: N802 (Qt name)
        if refs_from_mime(ev.mimeData()):
            ev.acceptProposedAction()
        else:
            ev.ignore()

    def dragMoveEvent(self, ev) -> None:                     # noqa: N802
        self.dragEnterEvent(ev)

    def dropEvent(self, ev) -> None:                         # noqa: N802
        refs = refs_from_mime(ev.mimeData())
        if refs:
            ev.acceptProposedAction()
            if self.comp is None:
                self.set_runs(refs)
            else:
                self.add_runs(refs)

    # ------------------------------------------------------------------ exports
    def export_chart(self, *args, **kw) -> None:
        self.exports.export_chart(*args, **kw)

    def copy_chart(self, *args, **kw) -> None:
        self.exports.copy_chart(*args, **kw)

    def export_series(self, *args, **kw) -> None:
        self.exports.export_series(*args, **kw)

    def export_tables(self, *args, **kw) -> None:
        self.exports.export_tables(*args, **kw)

    def export_deck(self, *args, **kw) -> None:
        self.exports.export_deck(*args, **kw)

    def footer_on(self) -> bool:
        return self.exports.footer_on()

    def _on_chart_dialog_accepted(self, dlg) -> None:
        self.exports.on_chart_dialog_accepted(dlg)


def _delegate(part: str, name: str) -> property:
    return property(lambda self: getattr(getattr(self, part), name),
                    doc=f"The view's {part}.{name}")


# the tables' and the replay bar's widgets and models, by the names the main window, tests
# and screenshots use
for _name in ("summary_model", "efficiency_model", "matrix_model", "summary_view",
              "efficiency_view", "matrix_view", "phase_combo", "matrix_metric", "matrix_by",
              "notes_label", "ratio_key", "settings_page", "settings_model", "suite_matrix"):
    setattr(CompareWidget, _name, _delegate("tables", _name))
for _name in ("slider", "time_label", "speed_combo", "loop_box", "play_button"):
    setattr(CompareWidget, _name, _delegate("replay_bar", _name))

__all__ = ["CompareWidget", "ReplayClock", "ValuesPanel", "RatioTableModel",
           "MatrixTableModel", "SessionTreeWidget", "refs_from_mime", "runs_mime"]
