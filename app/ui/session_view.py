"""Saved runs: read session files off the GUI thread, show one run's charts and summary."""
from __future__ import annotations

import html

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QSplitter, QTabWidget,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from app.model.results import result_parts
from app.model.series import SeriesStore

from .charts import DashboardWidget
from .vu_table import VirtualUserTableModel, VirtualUserTableView


# --- worker-side functions (no widgets) ------------------------------------------------------
@dataclass
class RunEntry:
    id: str
    label: str
    tooltip: str


@dataclass
class SessionEntry:
    path: Path
    title: str
    runs: list[RunEntry] = field(default_factory=list)
    error: str | None = None


@dataclass
class LoadedRun:
    path: Path
    record: Any               # app.store.session.RunRecord
    store: SeriesStore
    summary: dict
    events_count: int



def _h(text) -> str:
    """Names come from files users share: show them as text, never as markup."""
    return html.escape(str(text))

def _when(epoch: float | None) -> str:
    if not epoch:
        return "?"
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")


def read_sessions(folder: Path, extra: list[Path] | None = None) -> list[SessionEntry]:
    """Every session file (newest first) with its runs. Runs in a worker thread."""
    from app.store.paths import list_sessions
    from app.store.session import SessionFile

    paths = list(extra or []) + [p for p in list_sessions(folder) if p not in (extra or [])]
    out: list[SessionEntry] = []
    for path in paths:
        entry = SessionEntry(path=path, title=path.stem)
        try:
            sf = SessionFile(path, readonly=True)
            try:
                runs = sf.runs()
            finally:
                sf.close()
        except Exception as exc:            # noqa: BLE001 - a bad file must not hide the rest
            entry.error = str(exc) or type(exc).__name__
            out.append(entry)
            continue
        for r in sorted(runs, key=lambda r: r.created or 0, reverse=True):
            status = r.status or "running"
            entry.runs.append(RunEntry(
                id=r.id,
                label=f"{_when(r.created)[11:]}  {r.workload} → {r.target}  [{status}]",
                tooltip=(f"run {r.id}\n{r.workload} on {r.host} → {r.target}\n"
                         f"created {_when(r.created)}, {r.events:,} events, {status}\n"
                         + ", ".join(f"{k}={v}" for k, v in (r.params or {}).items()))))
        out.append(entry)
    return out


def load_run(path: Path, run_id: str) -> LoadedRun:
    """Events of one run into a fresh SeriesStore plus its per-phase summary (worker thread)."""
    from app.analysis.summary import summarize_run
    from app.store.session import SessionFile

    sf = SessionFile(path, readonly=True)
    try:
        record = next((r for r in sf.runs() if r.id == run_id), None)
        if record is None:
            raise LookupError(f"run {run_id} is not in {path.name}")
        events = sf.events(run_id)
    finally:
        sf.close()
    store = SeriesStore()
    store.ingest(events)
    return LoadedRun(path=path, record=record, store=store, summary=summarize_run(events),
                     events_count=len(events))


# --- the widget ------------------------------------------------------------------------------
SUMMARY_COLUMNS = ("Phase", "Duration", "Samples", "Throughput", "p50 ms", "p95 ms",
                   "p99 ms", "CPU user %", "CPU sys %", "iowait %", "idle %")


def _fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, (int, float)):
        return f"{x:,.0f}" if abs(x) >= 1000 or digits == 0 else f"{x:,.{digits}f}"
    return str(x)


def _result_html(phase: str, r: dict) -> str:
    head, sources, checks = result_parts(r)
    return (f"<b>{_h(phase)}: {_h(head)}</b> <span style='color:#6a737d'>{_h(sources)}"
            f"<br>cross-check: {_h('; '.join(checks))}</span>")


class SessionViewWidget(QWidget):
    """A saved run: a header, the same three charts as live, and a per-phase summary."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 10, 12, 10)
        lay.setSpacing(6)
        self.header = QLabel("Choose a run in the Sessions list to see its charts and summary.")
        self.header.setObjectName("session_header")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.header)
        # TPROC-C: NOPM/TPM as HammerDB defines them, with their sources and the cross-checks
        self.result = QLabel()
        self.result.setObjectName("session_result")
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.RichText)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result.setVisible(False)
        lay.addWidget(self.result)
        self.dashboard = DashboardWidget()
        self.dashboard.setObjectName("session_dashboard")
        self.table = QTableWidget(0, len(SUMMARY_COLUMNS))
        self.table.setObjectName("summary_table")
        self.table.setHorizontalHeaderLabels(SUMMARY_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.ResizeToContents)
        self.vu_model = VirtualUserTableModel(self.dashboard.store, self)
        self.vu_view = VirtualUserTableView(self.vu_model)
        self.vu_view.setObjectName("session_vu_table")
        # The summary keeps the full width; the virtual users are a tab next to it.
        bottom = QTabWidget()
        bottom.setObjectName("session_bottom_tabs")
        bottom.setDocumentMode(True)
        bottom.addTab(self.table, "Summary")
        bottom.addTab(self.vu_view, "Virtual users")
        self.bottom_tabs = bottom
        bottom.setTabVisible(1, False)          # until a run with virtual users is shown
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.dashboard)
        split.addWidget(bottom)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setSizes([600, 160])
        lay.addWidget(split, 1)
        self.loaded: LoadedRun | None = None

    def show_loading(self, file_name: str, run_id: str) -> None:
        self.header.setText(f"<b>Loading run {_h(run_id)}</b> from {_h(file_name)}…")

    def show_failure(self, sentence: str) -> None:
        self.header.setText(f'<span style="color:#b00020">{_h(sentence)}</span>')

    def show_run(self, loaded: LoadedRun) -> None:
        self.loaded = loaded
        r = loaded.record
        params = ", ".join(f"{k}={v}" for k, v in (r.params or {}).items())
        self.header.setText(
            f"<b>{_h(r.workload)}</b> on <b>{_h(r.target)}</b> &nbsp;·&nbsp; host "
            f"{'this computer' if r.host == 'local' else _h(r.host)} &nbsp;·&nbsp; "
            f"run {_h(r.id)} &nbsp;·&nbsp; {_when(r.created)} &nbsp;·&nbsp; "
            f"{_h(r.status or 'running')}"
            f"<br><span style='color:#6a737d'>{_h(params)} &nbsp;·&nbsp; "
            f"{loaded.events_count:,} events in {_h(loaded.path.name)}</span>")
        self.dashboard.set_store(loaded.store)
        self.dashboard.clear_view()
        self.vu_model.set_store(loaded.store)
        users = self.vu_model.rowCount()
        self.bottom_tabs.setTabVisible(1, users > 0)
        self.bottom_tabs.setTabText(1, f"Virtual users ({users})")
        phases = loaded.summary.get("phases") or []
        results = [(ph["name"], ph["result"]) for ph in phases if ph.get("result")]
        self.result.setText("<br>".join(_result_html(name, res) for name, res in results))
        self.result.setVisible(bool(results))
        self.table.setRowCount(len(phases))
        for row, ph in enumerate(phases):
            lat = ph.get("latency_ms") or {}
            cpu = ph.get("cpu") or {}
            unit = ph.get("throughput_unit") or ""
            cells = (ph.get("name"), f"{_fmt(ph.get('duration_s'), 1)} s",
                     _fmt(ph.get("samples"), 0),
                     (f"{_fmt(ph.get('throughput_mean'), 1)} {unit}".strip()
                      if ph.get("throughput_mean") is not None else "–"),
                     _fmt(lat.get("p50"), 3), _fmt(lat.get("p95"), 3), _fmt(lat.get("p99"), 3),
                     _fmt(cpu.get("user"), 1), _fmt(cpu.get("system"), 1),
                     _fmt(cpu.get("iowait"), 1), _fmt(cpu.get("idle"), 1))
            for col, text in enumerate(cells):
                item = QTableWidgetItem(str(text))
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
        # Show every phase row without a scroll bar, up to a sensible height.
        self.table.resizeRowsToContents()
        rows = self.table.verticalHeader().length()
        head = self.table.horizontalHeader().sizeHint().height()
        height = min(260, rows + head + 2 * self.table.frameWidth() + 2)
        self.table.setFixedHeight(height)
        self.vu_view.setFixedHeight(height)
