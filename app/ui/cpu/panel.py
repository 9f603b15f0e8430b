"""'CPU & counters': where the CPU went, for the live, saved and Compare views.

One panel for a run (live or saved): the stacked CPU by process group with the client-limit
line, and tabs for the counter chooser, the per-operation tables (saved runs) and the flame
graph of the run's CPU profiles. A page for Compare: the stacked CPU of each run side by
side, the per-operation tables of the chosen phase with ratios to the base run, the counter
chooser over every run, and the runs' flame graphs.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QSplitter, QTabWidget,
                               QVBoxLayout, QWidget)
from PySide6.QtCore import Qt

from app.analysis import cpu, flame
from app.model.runset import Table

from app.ui.compare.tables import RatioTableModel
from app.ui.common.table_view import table_view
from app.ui.cpu.charts import (CounterChooserWidget, CpuGroupsWidget, comparison_source,
                         store_source)
from app.ui.cpu.flamegraph import FlameGraphWidget


class TablesWidget(QWidget):
    """A list of tables, one shown at a time, with its notes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Table"))
        self.combo = QComboBox()
        self.combo.setObjectName("cpu_table_combo")
        row.addWidget(self.combo, 1)
        lay.addLayout(row)
        self.model = RatioTableModel(self)
        self.view = table_view("cpu_table", self.model)
        lay.addWidget(self.view, 1)
        self.notes = QLabel()
        self.notes.setObjectName("cpu_table_notes")
        self.notes.setProperty("role", "hint")
        self.notes.setWordWrap(True)
        lay.addWidget(self.notes)
        self.tables: list[Table] = []
        self.colours: list[str] = []
        self.combo.currentIndexChanged.connect(self._on_combo_changed)

    def set_tables(self, tables: Sequence[Table], colours: Sequence[str] = (),
                   prefer: str = "") -> None:
        """Show these tables; the one shown stays, else the first whose title starts with
        ``prefer`` (a phase name)."""
        keep = self.combo.currentText() or next(
            (t.title for t in tables if prefer and t.title.startswith(f"{prefer} ")), "")
        self.tables, self.colours = list(tables), list(colours)
        self.combo.blockSignals(True)
        self.combo.clear()
        for t in self.tables:
            self.combo.addItem(t.title)
        i = self.combo.findText(keep)
        self.combo.setCurrentIndex(max(i, 0))
        self.combo.blockSignals(False)
        self._on_combo_changed(self.combo.currentIndex())

    def _on_combo_changed(self, i: int) -> None:
        t = self.tables[i] if 0 <= i < len(self.tables) else None
        runs = {}
        if t is not None:
            for c, h in enumerate(t.header):
                head = h.split(":", 1)[0]
                if c and head.isdigit():
                    runs[c] = int(head) - 1
        self.model.set_table(t, runs, self.colours)
        self.notes.setText("   ".join(t.notes) if t else "No per-operation figures yet.")


class CpuPanelWidget(QWidget):
    """One run's CPU by process group, counters, per-operation tables and profiles."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        split = QSplitter(Qt.Orientation.Vertical)
        self.groups = CpuGroupsWidget()
        split.addWidget(self.groups)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("cpu_panel_tabs")
        self.tabs.setDocumentMode(True)
        self.chooser = CounterChooserWidget()
        self.tables = TablesWidget()
        self.flame = FlameGraphWidget()
        self.tabs.addTab(self.chooser, "Counters")
        self.tabs.addTab(self.tables, "Per operation")
        self.tabs.addTab(self.flame, "CPU profile")
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([330, 330])
        self.groups.setMinimumHeight(180)
        lay.addWidget(split)
        self.store = None
        self._version = -1

    def set_store(self, store, label: str = "this run") -> None:
        self.store = store
        self._version = -1
        src = store_source(store, label)
        self.groups.set_source(src)
        self.chooser.set_sources([src])
        self.refresh()

    def set_details(self, tables: Sequence[Table], profiles: Sequence[dict[str, Any]],
                    label: str = "", phase: str = "") -> None:
        """A saved run's per-operation tables (``phase``'s shown first) and CPU profiles."""
        self.tables.set_tables(tables, prefer=phase)
        self.flame.set_profiles(profiles, label)

    def refresh(self) -> None:
        """Redraw when the store moved and the panel is on screen (live: from the main
        window's redraw timer; a hidden panel catches up when it is shown)."""
        store = self.store
        if store is None or store.version == self._version or not self.isVisible():
            return
        self._version = store.version
        self.groups.refresh()
        self.groups.set_client_limit(store.client_limit())
        self.chooser.refresh()
        profiles = store.profiles()
        if len(profiles) != len(self.flame.profiles):
            self.flame.set_profiles(profiles, self.flame.label or "this run")


    def showEvent(self, ev) -> None:                            # noqa: N802 (Qt name)
        super().showEvent(ev)
        self.refresh()


class CpuComparePage(QWidget):
    """Compare: the runs' CPU by process group side by side, per-operation tables for the
    chosen phase, the counter chooser over all runs, and the runs' CPU profiles."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Phase"))
        self.phase_combo = QComboBox()
        self.phase_combo.setObjectName("cpu_phase_combo")
        row.addWidget(self.phase_combo)
        row.addStretch(1)
        lay.addLayout(row)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("cpu_compare_tabs")
        self.tabs.setDocumentMode(True)
        self.stacks = QWidget()
        self.stacks_layout = QHBoxLayout(self.stacks)
        self.stacks_layout.setContentsMargins(0, 0, 0, 0)
        self.tables = TablesWidget()
        self.chooser = CounterChooserWidget()
        self.flame = FlameGraphWidget()
        self.profile_combo = QComboBox()
        self.profile_combo.setObjectName("cpu_profile_run_combo")
        flame_page = QWidget()
        fl = QVBoxLayout(flame_page)
        fl.setContentsMargins(0, 0, 0, 0)
        frow = QHBoxLayout()
        frow.addWidget(QLabel("Run"))
        frow.addWidget(self.profile_combo, 1)
        fl.addLayout(frow)
        fl.addWidget(self.flame, 1)
        self.tabs.addTab(self.tables, "Per operation")
        self.tabs.addTab(self.stacks, "CPU by process group")
        self.tabs.addTab(self.chooser, "Counters")
        self.tabs.addTab(flame_page, "CPU profiles")
        lay.addWidget(self.tabs, 1)
        self.comp = None
        self.base = 0
        self._profiles: list[tuple[str, list]] = []
        self.phase_combo.currentIndexChanged.connect(lambda _i: self._fill_tables())
        self.profile_combo.currentIndexChanged.connect(self._on_profile_combo_changed)

    def set_comparison(self, comp, base: int = 0) -> None:
        self.comp, self.base = comp, base
        keep = self.phase_combo.currentText()
        self.phase_combo.blockSignals(True)
        self.phase_combo.clear()
        phases = comp.common_phases() or comp.phase_order()
        for ph in phases:
            self.phase_combo.addItem(ph, ph)
        i = self.phase_combo.findText(keep)
        self.phase_combo.setCurrentIndex(i if i >= 0 else max(0, len(phases) - 1))
        self.phase_combo.blockSignals(False)
        while self.stacks_layout.count():
            w = self.stacks_layout.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        for i, r in enumerate(comp.runs):
            g = CpuGroupsWidget()
            g.setObjectName(f"cpu_groups_run{i + 1}")
            g.set_source(comparison_source(comp, i), f"{r.index + 1}: {r.label}")
            self.stacks_layout.addWidget(g)
        self.chooser.set_sources([comparison_source(comp, i) for i in range(len(comp.runs))])
        self._profiles = []
        for r in comp.runs:
            try:
                found = flame.run_profiles(r.ref.file, r.ref.run_id)
            except Exception:                  # noqa: BLE001 - a file gone since loading
                found = []
            self._profiles.append((f"{r.index + 1}: {r.label}", found))
        self.profile_combo.blockSignals(True)
        self.profile_combo.clear()
        for k, (label, found) in enumerate(self._profiles):
            self.profile_combo.addItem(f"{label} ({len(found)} profile"
                                       f"{'s' if len(found) != 1 else ''})", k)
        first = next((k for k, (_l, f) in enumerate(self._profiles) if f), 0)
        self.profile_combo.setCurrentIndex(first)
        self.profile_combo.blockSignals(False)
        self._on_profile_combo_changed(first)
        self._fill_tables()

    def set_base(self, base: int) -> None:
        self.base = base
        self._fill_tables()

    def _fill_tables(self) -> None:
        comp, phase = self.comp, self.phase_combo.currentData()
        if comp is None or phase is None:
            self.tables.set_tables([])
            return
        tables = cpu.tables(comp, phase, self.base)
        if len(comp.runs) == 1:
            tables += cpu.trace_matrices(comp.runs[0])
        self.tables.set_tables(tables, [r.colour for r in comp.runs])

    def _on_profile_combo_changed(self, k: int) -> None:
        if 0 <= k < len(self._profiles):
            label, found = self._profiles[k]
            self.flame.set_profiles(found, label)
