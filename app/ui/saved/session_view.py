"""Saved runs: read session files off the GUI thread, show one run's charts and summary."""
from __future__ import annotations

import html
import textwrap

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QScrollArea, QSplitter, QTabWidget, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from app.analysis.results import ResultValue, new_store, result_parts
from app.analysis.compare import step_table_cells
from app.model.series import SeriesStore

from app.ui.common.scroll import scrolled_layout
from app.ui.charts.dashboard import DashboardWidget
from app.ui.cpu.panel import CpuPanelWidget
from app.ui.charts.headline import HeadlineStripWidget
from app.ui.live.vu_table import VirtualUserTableModel, VirtualUserTableView


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
    server_version: str | None = None
    intervals: dict[str, list[float]] = field(default_factory=dict)   # phase -> sample lengths
    is_open: bool = False     # the session lacks the run's end; its host may have the rest
    cpu_tables: list = field(default_factory=list)     # app.analysis.cpu tables
    damaged: list[str] = field(default_factory=list)   # rows of the file skipped, in words



def _h(text) -> str:
    """Names come from files users share: show them as text, never as markup."""
    return html.escape(str(text))

def _when(epoch: float | None) -> str:
    if not epoch:
        return "?"
    return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")


def varying_params(runs: list) -> list[str]:
    """Parameters whose values differ between the runs of one file (a plan's clients=1, 4,
    16): what tells their otherwise identical labels apart."""
    names = dict.fromkeys(k for r in runs for k in (r.params or {}))
    return [k for k in names if len({str((r.params or {}).get(k)) for r in runs}) > 1]


def run_label(r: Any, differ: list[str]) -> str:
    """The Sessions entry of a run: time, (plan position,) workload → target, what varies."""
    plan = (r.info or {}).get("plan") or {}
    head = f"#{int(plan['index']) + 1} " if plan.get("index") is not None else ""
    # what tells the runs apart first: the sidebar elides the end of a long label
    varies = ", ".join(f"{k}={(r.params or {}).get(k)}" for k in differ if k != "profile")
    return (f"{_when(r.created)[11:]}  {head}" + (f"{varies} · " if varies else "")
            + f"{r.workload} → {r.target}  [{r.status or 'running'}]")


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
        differ = varying_params(runs)
        for r in sorted(runs, key=lambda r: r.created or 0, reverse=True):
            status = r.status or "running"
            entry.runs.append(RunEntry(
                id=r.id,
                label=run_label(r, differ),
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
        summary = summarize_run(sf, run_id)
        cpu_tables = _cpu_tables(sf, run_id, path)
        damaged = sf.check(run_id)
    finally:
        sf.close()
    from app.remote.follow import run_is_open
    store = new_store(recent=None)          # a saved run keeps every point of every series
    store.ingest(events)
    version = next((str(e["server_version"]) for e in events
                    if e.get("kind") == "setting" and e.get("server_version")), None)
    intervals: dict[str, list[float]] = {}
    for e in events:
        iv = e.get("interval")
        if e.get("kind") == "sample" and isinstance(iv, list) and len(iv) == 2:
            intervals.setdefault(str(e.get("phase")), []).append(float(iv[1]) - float(iv[0]))
    return LoadedRun(path=path, record=record, store=store, summary=summary,
                     events_count=len(events), server_version=version, intervals=intervals,
                     cpu_tables=cpu_tables, damaged=damaged,
                     is_open=run_is_open(record, any(e["kind"] == "end" for e in events)))


def _damaged_html(damaged: list[str], limit: int = 3) -> str:
    """The file's damaged rows that were skipped, under the header: the first few in words."""
    if not damaged:
        return ""
    more = (f" (and {len(damaged) - limit} more damaged rows; 'versus show' lists them)"
            if len(damaged) > limit else "")
    return "".join(f"<br><span style='color:#9a6700'>&#9888; {_h(d)}</span>"
                   for d in damaged[:limit]) + _h(more)


def _cpu_tables(sf, run_id: str, path: Path) -> list:
    from app.analysis.compare import Comparison, load_run as load_run_data
    from app.analysis.cpu import run_tables
    return run_tables(Comparison([load_run_data(sf, run_id, 0, str(path))]))


# --- the widget ------------------------------------------------------------------------------
SUMMARY_COLUMNS = ("Phase", "Duration", "Samples", "Throughput", "Server", "p50 ms", "p95 ms",
                   "p99 ms", "CPU user %", "CPU sys %", "iowait %", "other %", "idle %")
# Where each column comes from (header tooltips): every number says its source and interval.
SUMMARY_TIPS = (
    "The phase, in the order it ran",
    "Phase time as the agent measured it",
    "Per-interval samples the agent reported (about 1 s each; the first and last of a phase "
    "are usually partial, so a 30 s phase has 31)",
    "Client count: operations the virtual users completed ÷ phase time",
    "Cross-check from the server's own counters over the same phase (per second)",
    "Latency percentiles of every operation in the phase, from the merged histograms",
    "Latency percentiles of every operation in the phase, from the merged histograms",
    "Latency percentiles of every operation in the phase, from the merged histograms",
    "Host CPU from /proc/stat, mean of the 1 s intervals in the phase",
    "Host CPU from /proc/stat, mean of the 1 s intervals in the phase",
    "Host CPU from /proc/stat, mean of the 1 s intervals in the phase",
    "The rest of 100 %: irq, softirq, nice and steal (/proc/stat)",
    "Host CPU from /proc/stat, mean of the 1 s intervals in the phase",
)


def _fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, (int, float)):
        return f"{x:,.0f}" if abs(x) >= 1000 or digits == 0 else f"{x:,.{digits}f}"
    return str(x)


def _samples_tip(lengths: list[float]) -> str:
    if not lengths:
        return "No per-interval samples in this phase"
    full = [x for x in lengths if x >= 0.9]
    part = [x for x in lengths if x < 0.9]
    text = f"{len(lengths)} intervals: {len(full)} of about 1 s"
    if part:
        text += f" and {len(part)} partial ({', '.join(f'{x:.1f} s' for x in part[:4])}" + (
            ", …" if len(part) > 4 else "") + ") at the phase's ends"
    return text


def _server_tip(srv: dict, duration: Any) -> str:
    if srv.get("delta") is None:
        return "No server counters for this phase"
    return (f"server {srv.get('counter') or 'transactions'}: {srv['delta']:,} over "
            f"{_fmt(duration, 1)} s = {_fmt(srv.get('rate'), 1)}/s ({srv.get('source') or '?'})")


def _result_html(phase: str, results: list[dict], duration_s: float | None,
                 flags: list[dict] | None = None) -> str:
    values = [ResultValue(r["key"], r["title"], r["unit"], r["value"], r["source"],
                          r["role"], r["headline"]) for r in results]
    head, sources, checks = result_parts(values, duration_s)
    out = ""
    if head:
        out = (f"<b>{_h(phase)}: {_h(head)}</b> <span style='color:#6a737d'>{_h(sources)}"
               + (f"<br>cross-check: {_h('; '.join(checks))}" if checks else "") + "</span>")
    for f in flags or ():
        word = "FAILED" if f.get("severity") == "fail" else f["name"].upper()
        text = f"{f['name']}: {f['detail']}" if f.get("severity") == "fail" else f["detail"]
        out += ("<br>" if out else "") + (
            f"<b style='color:#b00020'>{_h(phase)}: {_h(word)}</b> "
            f"<span style='color:#b00020'>{_h(text)}</span>")
    return out


SUITE_CHARTS_HEIGHT = 480          # a suite's charts: three of about 150 px each

class SessionViewWidget(QWidget):
    """A saved run: a header, the same three charts as live, and a per-phase summary.
    A run the session does not have to its end gets a bar offering to bring in the rest."""

    attach_requested = Signal(str, str)          # session path, run id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = scrolled_layout(self, QVBoxLayout)
        lay.setContentsMargins(12, 10, 12, 10)
        lay.setSpacing(6)
        self.header = QLabel("Choose a run in the Sessions list to see its charts and summary.")
        self.header.setObjectName("session_header")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.header)
        self.attach_bar = QFrame()
        self.attach_bar.setObjectName("attach_bar")
        self.attach_bar.setStyleSheet("#attach_bar { background: #fff8e1; border: 1px solid "
                                      "#f0d58c; border-radius: 4px; }")
        bar = QHBoxLayout(self.attach_bar)
        bar.setContentsMargins(10, 6, 6, 6)
        self.attach_label = QLabel()
        self.attach_label.setObjectName("attach_label")
        self.attach_label.setWordWrap(True)
        self.attach_button = QPushButton("Bring in the rest")
        self.attach_button.setObjectName("attach_button")
        self.attach_button.clicked.connect(self._on_attach_button_clicked)
        bar.addWidget(self.attach_label, 1)
        bar.addWidget(self.attach_button)
        self.attach_bar.setVisible(False)
        lay.addWidget(self.attach_bar)
        # TPROC-C: NOPM/TPM as HammerDB defines them, with their sources and the cross-checks
        self.result = QLabel()
        self.result.setObjectName("session_result")
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.RichText)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result.setVisible(False)
        # a suite has a result line per test: they scroll, the charts keep their room
        self.result_scroll = QScrollArea()
        self.result_scroll.setObjectName("session_result_scroll")
        self.result_scroll.setWidget(self.result)
        self.result_scroll.setWidgetResizable(True)
        self.result_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.result.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.result_scroll.setVisible(False)
        lay.addWidget(self.result_scroll)
        self.headline = HeadlineStripWidget()
        lay.addWidget(self.headline)
        self.dashboard = DashboardWidget()
        self.dashboard.setObjectName("session_dashboard")
        self.table = QTableWidget(0, len(SUMMARY_COLUMNS))
        self.table.setObjectName("summary_table")
        self.table.setHorizontalHeaderLabels(SUMMARY_COLUMNS)
        for col, tip in enumerate(SUMMARY_TIPS):
            self.table.horizontalHeaderItem(col).setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)           # "321,810 rows/s" on one line
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        for col in (0, SUMMARY_COLUMNS.index("Throughput"), SUMMARY_COLUMNS.index("Server")):
            self.table.horizontalHeader().setSectionResizeMode(
                col, QHeaderView.ResizeMode.ResizeToContents)
        self.vu_model = VirtualUserTableModel(self.dashboard.store, self)
        self.vu_view = VirtualUserTableView(self.vu_model)
        self.vu_view.setObjectName("session_vu_table")
        # The summary keeps the full width; the virtual users are a tab next to it.
        bottom = QTabWidget()
        bottom.setObjectName("session_bottom_tabs")
        bottom.setDocumentMode(True)
        summary_page = QWidget()
        sp = QVBoxLayout(summary_page)
        sp.setContentsMargins(0, 0, 0, 0)
        sp.setSpacing(2)
        sp.addWidget(self.table)
        self.notes = QLabel()
        self.notes.setObjectName("summary_notes")
        self.notes.setProperty("role", "hint")
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sp.addWidget(self.notes)
        sp.addStretch(1)
        bottom.addTab(summary_page, "Summary")
        bottom.addTab(self.vu_view, "Virtual users")
        # a suite's one-row-per-step table, as its published results show it
        self.steps_table = QTableWidget(0, 0)
        self.steps_table.setObjectName("steps_table")
        self.steps_table.verticalHeader().setVisible(False)
        self.steps_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.steps_table.setAlternatingRowColors(True)
        bottom.addTab(self.steps_table, "Steps")
        self.bottom_tabs = bottom
        bottom.setTabVisible(1, False)          # until a run with virtual users is shown
        bottom.setTabVisible(2, False)          # until a run whose workload has steps
        self.cpu_panel = CpuPanelWidget()
        self.cpu_panel.setObjectName("session_cpu_panel")
        self.view_tabs = QTabWidget()
        self.view_tabs.setObjectName("session_view_tabs")
        self.view_tabs.setDocumentMode(True)
        self.view_tabs.addTab(self.dashboard, "Charts")
        self.view_tabs.addTab(self.cpu_panel, "CPU && counters")
        split = self.split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view_tabs)
        split.addWidget(bottom)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setSizes([600, 160])
        lay.addWidget(split, 1)
        self.loaded: LoadedRun | None = None

    def offer_attach(self, text: str, button: bool = True, busy: bool = False) -> None:
        """Show the bar with `text` ("" hides it); the button is shown when `button`,
        disabled while `busy`."""
        self.attach_bar.setVisible(bool(text))
        self.attach_label.setText(text)
        self.attach_button.setVisible(button)
        self.attach_button.setEnabled(not busy)

    def _on_attach_button_clicked(self) -> None:
        if self.loaded is not None:
            self.attach_requested.emit(str(self.loaded.path), self.loaded.record.id)

    def show_loading(self, file_name: str, run_id: str) -> None:
        """Nothing of the run shown before stays while another one loads."""
        self.loaded = None
        self.header.setText(f"<b>Loading run {_h(run_id)}</b> from {_h(file_name)}…")
        self._clear()
        self.dashboard.set_placeholder("loading the saved run…")

    def _clear(self) -> None:
        store = SeriesStore()
        self.dashboard.set_store(store)
        self.cpu_panel.set_store(store, "")
        self.vu_model.set_store(store)
        self.bottom_tabs.setTabVisible(1, False)
        self.headline.clear()
        self.result.setVisible(False)
        self.result_scroll.setVisible(False)
        self.table.setRowCount(0)
        self.notes.setVisible(False)

    def show_failure(self, sentence: str) -> None:
        self.loaded = None
        self.header.setText(f'<span style="color:#b00020">{_h(sentence)}</span>')
        self._clear()

    def show_run(self, loaded: LoadedRun) -> None:
        self.loaded = loaded
        self.offer_attach("")
        self.dashboard.set_placeholder("no samples of this chart in the run")
        r = loaded.record
        params = ", ".join(f"{k}={v}" for k, v in (r.params or {}).items())
        version = (f"<br><span style='color:#6a737d'>server: {_h(loaded.server_version)}</span>"
                   if loaded.server_version else "")
        self.header.setText(
            f"<b>{_h(r.workload)}</b> on <b>{_h(r.target)}</b> &nbsp;·&nbsp; host "
            f"{'this computer' if r.host == 'local' else _h(r.host)} &nbsp;·&nbsp; "
            f"run {_h(r.id)} &nbsp;·&nbsp; {_when(r.created)} &nbsp;·&nbsp; "
            f"{_h(r.status or 'running')}{version}"
            f"<br><span style='color:#6a737d'>{_h(params)} &nbsp;·&nbsp; "
            f"{loaded.events_count:,} events in {_h(loaded.path.name)}</span>"
            + _damaged_html(loaded.damaged))
        self.dashboard.set_store(loaded.store)
        self.headline.refresh(loaded.store, force=True)
        label = f"run {r.id}"
        measured = next((ph["name"] for ph in loaded.summary.get("phases") or []
                         if ph.get("role") in ("measured", "step")), "")
        self.cpu_panel.set_store(loaded.store, label)
        self.cpu_panel.set_details(loaded.cpu_tables, loaded.store.profiles(), label, measured)
        self.vu_model.set_store(loaded.store)
        users = self.vu_model.rowCount()
        self.bottom_tabs.setTabVisible(1, users > 0)
        self.bottom_tabs.setTabText(1, f"Virtual users ({users})")
        phases = loaded.summary.get("phases") or []
        results = [ph for ph in phases if ph.get("results") or ph.get("flags")]
        limited = [ph for ph in phases if ph.get("client_limit")]
        outages = [line for ph in phases for line in ph.get("outages_text") or ()]
        # a measurement source that stopped: once, from the first phase that says it
        missing = list(dict.fromkeys(f"{ph['name']}: {m}" for ph in phases
                                     for m in ph.get("missing_text") or ()))[:1]
        # a suite's per-test results are its tests table's rows: not repeated as lines
        suite = bool((loaded.summary.get("step_table") or {}).get("rows"))
        self.result.setText("<br>".join(
            [h for h in (_result_html(ph["name"], ph.get("results") or [], ph.get("duration_s"),
                                      ph.get("flags")) for ph in results) if h and not suite]
            + [f"<span style='color:#9a6700'>&#9888; {_h(ph['name'])}: "
               f"{_h(ph['client_limit'])}</span>" for ph in limited]
            + [f"<span style='color:#cf222e'>&#9888; {_h(line)}</span>" for line in outages]
            + [f"<span style='color:#9a6700'>&#9888; {_h(line)}</span>" for line in missing]))
        shown = bool((results and not suite) or limited or outages or missing)
        self.result.setVisible(shown)
        self.result_scroll.setVisible(shown)
        width = self.result_scroll.viewport().width() or self.width()
        self.result_scroll.setFixedHeight(min(140, self.result.heightForWidth(width) + 2))
        self._fill_steps(loaded.summary.get("step_table"))
        self.table.setRowCount(len(phases))
        checks = []
        for row, ph in enumerate(phases):
            lat = ph.get("latency_ms") or {}
            cpu = ph.get("cpu") or {}
            unit = ph.get("throughput_unit") or ""
            srv = ph.get("server") or {}
            named = [cpu.get(k) for k in ("user", "system", "iowait", "idle")]
            other = (max(0.0, 100.0 - sum(named)) if all(v is not None for v in named)
                     else None)
            cells = (ph.get("name"), f"{_fmt(ph.get('duration_s'), 1)} s",
                     _fmt(ph.get("samples"), 0),
                     (f"{_fmt(ph.get('throughput_mean'), 1)} {unit}".strip()
                      if ph.get("throughput_mean") is not None else "–"),
                     f"{_fmt(srv.get('rate'), 1)}/s" if srv.get("rate") is not None else "–",
                     _fmt(lat.get("p50"), 3), _fmt(lat.get("p95"), 3), _fmt(lat.get("p99"), 3),
                     _fmt(cpu.get("user"), 1), _fmt(cpu.get("system"), 1),
                     _fmt(cpu.get("iowait"), 1), _fmt(other, 1), _fmt(cpu.get("idle"), 1))
            tips = {2: _samples_tip(loaded.intervals.get(str(ph.get("name")), [])),
                    4: _server_tip(srv, ph.get("duration_s"))}
            if srv.get("delta") is not None:
                checks.append(f"{ph.get('name')}: {_server_tip(srv, ph.get('duration_s'))}")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(str(text))
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(tips.get(col) or SUMMARY_TIPS[col])
                self.table.setItem(row, col, item)
        self.notes.setText(
            "Throughput: client count (operations ÷ phase time). Server cross-check: "
            + ("; ".join(checks) if checks else "no server counters in this run")
            + ". CPU: /proc/stat, mean of 1 s intervals; “other” is irq, softirq, nice and "
              "steal.")
        self.notes.setVisible(bool(phases))
        # Show every phase row without a scroll bar, up to a sensible height.
        self.table.resizeRowsToContents()
        rows = self.table.verticalHeader().length()
        head = self.table.horizontalHeader().sizeHint().height()
        height = min(260, rows + head + 2 * self.table.frameWidth() + 2)
        self.table.setFixedHeight(height)
        self.vu_view.setFixedHeight(height)
        # the bottom of the splitter as tall as the table and its notes: no row cut off
        width = max(200, self.bottom_tabs.width() - 8)
        need = (height + self.notes.heightForWidth(width) + 8
                + self.bottom_tabs.tabBar().sizeHint().height() + 6)
        total = sum(self.split.sizes())
        if self.bottom_tabs.isTabVisible(2):
            # a suite leads with its tests table, one row a test (its results); the charts
            # below keep a readable height, the view scrolls
            self.split.insertWidget(0, self.bottom_tabs)
            self.bottom_tabs.setCurrentIndex(2)
            t = self.steps_table
            steps = (t.verticalHeader().length() + t.horizontalHeader().sizeHint().height()
                     + 2 * t.frameWidth() + self.bottom_tabs.tabBar().sizeHint().height() + 8)
            self.view_tabs.setMinimumHeight(SUITE_CHARTS_HEIGHT)
            if total > 0:
                self.split.setSizes([steps, max(SUITE_CHARTS_HEIGHT, total - steps)])
        else:
            self.split.insertWidget(0, self.view_tabs)
            self.view_tabs.setMinimumHeight(0)
            if total > 0:
                self.split.setSizes([max(200, total - need), need])

    def _fill_steps(self, step_table: dict | None) -> None:
        has = bool(step_table and step_table.get("rows"))
        self.bottom_tabs.setTabVisible(2, has)
        if not has:
            self.steps_table.setRowCount(0)
            return
        header, rows, flagged = step_table_cells(step_table)
        t = self.steps_table
        t.setColumnCount(len(header))
        # titles wrapped and units on a line of their own: the table stays narrow
        t.setHorizontalHeaderLabels([
            "\n".join(textwrap.wrap(h.split(" (")[0], 10)) + ("\n(" + h.split(" (", 1)[1]
                                                           if " (" in h else "")
            for h in header])
        t.setRowCount(len(rows))
        red = QColor("#b00020")
        for r, (cells, bad) in enumerate(zip(rows, flagged)):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if 0 < c < len(cells) - 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                if bad and c in (0, len(cells) - 1):
                    item.setForeground(red)
                t.setItem(r, c, item)
        t.resizeColumnsToContents()
        t.resizeRowsToContents()
        head = t.horizontalHeader().sizeHint().height()
        t.setFixedHeight(min(320, t.verticalHeader().length() + head + 2 * t.frameWidth() + 20))
        self.bottom_tabs.setCurrentIndex(2)
