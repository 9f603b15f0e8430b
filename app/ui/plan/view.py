"""Plans in the GUI: build a matrix (targets x profiles x parameter values) or open a plan
file, see its runs with their state and estimated finish, start it on its host, skip, reorder,
cancel, detach and attach again.

The host holds the queue (app.remote.plans); a PlanWorker follows it in a QThread and hands
every PlanState to the GUI as a signal. Skip, reorder and cancel are short calls to the host,
made in background tasks.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import (QAbstractTableModel, QModelIndex, QObject, Qt, QThread, Signal, Slot)
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDoubleSpinBox, QFileDialog,
                               QFormLayout, QFrame, QHBoxLayout, QHeaderView, QInputDialog,
                               QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton,
                               QTableView, QVBoxLayout, QWidget)

from app.model.plan import (FINAL_STATES, Plan, PlanError, PlannedRun, PlanState, PlanTarget,
                            parse_plan)
from workloads.registry import WORKLOADS, get as get_workload

from app.ui.live.run_worker import start_worker_thread
from app.ui.common.tasks import TaskRunner
from app.ui.common.scroll import scrolled_layout

ROLE = Qt.ItemDataRole.UserRole
STATE_COLOURS = {"waiting": ("#57606a", None), "loading": ("#9a6700", "#fff8c5"),
                 "running": ("#0550ae", "#ddf4ff"), "done": ("#116329", "#dafbe1"),
                 "failed": ("#82071e", "#ffebe9"), "skipped": ("#6e7781", "#f6f8fa")}


def parse_value(text: str) -> Any:
    t = text.strip()
    for cast in (int, float):
        try:
            return cast(t)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(t.lower(), t)


def parse_params(text: str) -> dict[str, Any]:
    """'duration=60, table-size=100000' -> {'duration': 60, 'table-size': 100000}."""
    out = {}
    for part in text.replace(";", ",").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise PlanError(f"parameters are name=value pairs separated by commas, not "
                            f"{part.strip()!r}")
        out[key.strip()] = parse_value(value)
    return out


def parse_values(text: str) -> list[Any]:
    return [parse_value(v) for v in text.replace(";", ",").split(",") if v.strip()]


def clock(epoch: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch)) if epoch else ""


# ---------------------------------------------------------------------------- the runs table

@dataclass
class RunRow:
    label: str
    state: str = "waiting"
    run_id: str = ""
    planned_s: float | None = None
    started: float | None = None
    ended: float | None = None
    eta: float | None = None
    reason: str = ""
    planned: PlannedRun | None = None          # before the plan is started
    result: str = ""                           # the headline result once the run is done
    result_tip: str = ""


class PlanRunsTableModel(QAbstractTableModel):
    COLUMNS = ("#", "Run", "State", "Result", "Planned", "Started", "Finish", "Note")

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[RunRow] = []

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r, col = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return str(index.row() + 1)
            if col == 1:
                return r.label
            if col == 2:
                return r.state
            if col == 3:
                return r.result
            if col == 4:
                return f"{r.planned_s:.0f} s" if r.planned_s else ""
            if col == 5:
                return clock(r.started)
            if col == 6:
                if r.ended:
                    return clock(r.ended)
                return f"≈ {clock(r.eta)}" if r.eta else ""
            if col == 7:
                return r.reason.splitlines()[0][:200] if r.reason else ""
        if role == Qt.ItemDataRole.ToolTipRole and col in (1, 7):
            return "\n".join(x for x in (r.label, r.run_id, r.reason) if x)
        if role == Qt.ItemDataRole.ToolTipRole and col == 3:
            return r.result_tip or "The workload's headline result, once the run is done"
        if role == Qt.ItemDataRole.ForegroundRole and col == 2:
            return QBrush(QColor(STATE_COLOURS.get(r.state, ("#24292f", None))[0]))
        if role == Qt.ItemDataRole.BackgroundRole and col == 2:
            bg = STATE_COLOURS.get(r.state, (None, None))[1]
            return QBrush(QColor(bg)) if bg else None
        if role == Qt.ItemDataRole.FontRole and col == 2 and r.state in ("running", "loading"):
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 3, 4, 5, 6):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def set_rows(self, rows: list[RunRow]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def move(self, row: int, to: int) -> None:
        if row == to or not (0 <= row < len(self.rows)) or not (0 <= to < len(self.rows)):
            return
        dest = to + 1 if to > row else to
        self.beginMoveRows(QModelIndex(), row, row, QModelIndex(), dest)
        self.rows.insert(to, self.rows.pop(row))
        self.endMoveRows()
        self._changed(min(row, to), max(row, to), 0)

    def set_state(self, row: int, state: str) -> None:
        self.rows[row].state = state
        self._changed(row, row, 2)

    def apply(self, st: PlanState, now: float) -> None:
        """The host's view: its order, states and times; estimated ends for the rest."""
        ends = st.estimated_ends(now) if not st.finished else {}
        known = {r.run_id: r for r in self.rows if r.run_id}
        rows = []
        for rs in st.runs:
            row = known.get(rs.run_id) or RunRow(rs.label, run_id=rs.run_id)
            row.label, row.state = rs.label or row.label, rs.state
            row.planned_s, row.started, row.ended = rs.planned_s, rs.started, rs.ended
            row.reason, row.eta = rs.reason, ends.get(rs.run_id)
            rows.append(row)
        # runs skipped before the start never reached the host: keep showing them, last
        rows += [r for r in self.rows if not r.run_id and r.state == "skipped"]
        if [id(r) for r in rows] != [id(r) for r in self.rows]:
            self.set_rows(rows)
        else:
            self.rows = rows
            self._changed(0, len(rows) - 1, 0, len(self.COLUMNS) - 1)

    def _changed(self, first: int, last: int, col: int, last_col: int | None = None) -> None:
        if last < first:
            return
        self.dataChanged.emit(self.index(first, 0 if last_col else col),
                              self.index(last, last_col if last_col else len(self.COLUMNS) - 1))


def headline_result(path: Path, run_id: str) -> tuple[str, str] | None:
    """(text, source) of a run's headline result (the workload's declared headline metric in
    its last phase that has it), read from the session file; None while it has none."""
    from app.analysis.summary import summarize_run
    from app.store.session import SessionFile
    with SessionFile(path) as s:
        if run_id not in {r.id for r in s.runs()}:
            return None
        summary = summarize_run(s, run_id)
    for ph in reversed(summary.get("phases") or []):
        for r in ph.get("results") or []:
            if r.get("headline") and r.get("value") is not None:
                v = r["value"]
                text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
                return (f"{text} {r.get('unit') or ''}".strip(),
                        f"{r.get('title')} of {ph['name']}: {r.get('source') or ''}")
    return None


# ---------------------------------------------------------------------------- the worker

class PlanWorker(QObject):
    """Starts (or attaches to) a plan and follows it, in its own thread."""

    plan_started = Signal(str)              # plan id
    state_changed = Signal(object)          # PlanState
    status_changed = Signal(str)
    plan_finished = Signal(object)          # PlanOutcome
    plan_failed = Signal(object)            # the exception; str(exc) is a sentence

    def __init__(self, plan: Plan | None, catalog: Any, host: str, attach_id: str = "",
                 session_path: Path | None = None,
                 controller_factory: Callable[..., Any] | None = None) -> None:
        super().__init__()
        self.plan, self.catalog, self.host = plan, catalog, host
        self.attach_id, self.session_path = attach_id, session_path
        self._factory = controller_factory
        self._lock = threading.Lock()
        self._controller = None
        self._detach = False

    @Slot()
    def start(self) -> None:
        try:
            factory = self._factory
            if factory is None:
                from app.remote.plans import PlanController
                factory = PlanController
            ctl = factory(self.plan, self.catalog, self.host, session_path=self.session_path,
                          on_status=self.status_changed.emit,
                          on_state=self.state_changed.emit)
            with self._lock:
                self._controller = ctl
            try:
                if self.attach_id:
                    ctl.plan_id = self.attach_id
                else:
                    ctl.prepare()
                    ctl.start()
                self.plan_started.emit(ctl.plan_id)
                with self._lock:
                    if self._detach:
                        ctl.stop_following()
                outcome = ctl.follow()
            finally:
                ctl.close()
        except Exception as exc:           # noqa: BLE001 - becomes a sentence in the GUI
            self.plan_failed.emit(exc)
        else:
            self.plan_finished.emit(outcome)

    def controller(self):
        with self._lock:
            return self._controller

    def detach(self) -> None:
        """Leave the plan going on the host; follow() returns soon. Never blocks."""
        with self._lock:
            self._detach = True
            ctl = self._controller
        if ctl is not None:
            threading.Thread(target=ctl.stop_following, name="versus-detach",
                             daemon=True).start()


# ---------------------------------------------------------------------------- the widget

class PlanWidget(QWidget):
    plan_built = Signal(int)                # number of runs
    plan_saved = Signal(str)                # path written
    plan_started = Signal(str)              # plan id
    plan_state_changed = Signal(object)     # PlanState
    plan_ended = Signal(object)             # PlanOutcome, or the exception that ended it
    plan_idle = Signal()                    # the follow thread is gone (safe to close)
    compare_requested = Signal(object)      # [RunRef] of done runs
    message_changed = Signal(str)
    control_failed = Signal(str)

    def __init__(self, catalog: Any, parent: QWidget | None = None,
                 controller_factory: Callable[..., Any] | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self._factory = controller_factory
        self.tasks = TaskRunner(self)
        self.model = PlanRunsTableModel(self)
        self.plan: Plan | None = None
        self.plan_id: str = ""
        self.state: PlanState | None = None
        self.last_outcome: Any = None
        self.session_path: Path | None = None
        self._results_asked: set[str] = set()
        self._worker: PlanWorker | None = None
        self._thread: QThread | None = None
        self._managed: list[PlanTarget] = []
        self._build()
        self._connect()
        self._fill_targets()
        self._load_profiles()
        self._update_buttons()

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        self.name_edit = QLineEdit("plan")
        self.name_edit.setObjectName("plan_name")
        self.workload_combo = QComboBox()
        self.workload_combo.setObjectName("plan_workload")
        for name, spec in WORKLOADS.items():
            self.workload_combo.addItem(f"{spec.title}  ({name})", name)
        self.host_combo = QComboBox()
        self.host_combo.setObjectName("plan_host")
        self.target_list = QListWidget()
        self.target_list.setObjectName("plan_targets")
        self.target_list.setMaximumHeight(130)
        self.managed_edit = QLineEdit()
        self.managed_edit.setObjectName("managed_path")
        self.managed_edit.setPlaceholderText("/usr/lib/postgresql/15/bin")
        self.add_managed_button = QPushButton("Add managed")
        self.add_managed_button.setObjectName("add_managed_button")
        self.add_managed_button.setToolTip("A private server started from this installation "
                                           "on the host for each run, with the run's profile")
        self.profile_list = QListWidget()
        self.profile_list.setObjectName("plan_profiles")
        self.profile_list.setMaximumHeight(110)
        for lst in (self.target_list, self.profile_list):
            lst.setTextElideMode(Qt.TextElideMode.ElideMiddle)
            lst.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.params_edit = QLineEdit("duration=60")
        self.params_edit.setObjectName("plan_params")
        self.params_edit.setPlaceholderText("duration=60, table-size=100000")
        self.vary_combo = QComboBox()
        self.vary_combo.setObjectName("plan_vary")
        self.vary_combo.setEditable(True)
        self.values_edit = QLineEdit("1, 4, 16")
        self.values_edit.setObjectName("plan_values")
        self.pause_spin = QDoubleSpinBox()
        self.pause_spin.setObjectName("plan_pause")
        self.pause_spin.setRange(0, 3600)
        self.pause_spin.setSuffix(" s")
        self.pause_spin.setDecimals(0)
        self.build_button = QPushButton("Build runs")
        self.build_button.setObjectName("build_button")
        self.open_button = QPushButton("Open…")
        self.open_button.setObjectName("open_plan_button")
        self.save_button = QPushButton("Save…")
        self.save_button.setObjectName("save_plan_button")

        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Name", self.name_edit)
        form.addRow("Workload", self.workload_combo)
        form.addRow("Host", self.host_combo)
        form.addRow("Targets", self.target_list)
        managed_row = QHBoxLayout()
        managed_row.addWidget(self.managed_edit, 1)
        managed_row.addWidget(self.add_managed_button)
        form.addRow("", managed_row)
        form.addRow("Profiles", self.profile_list)
        form.addRow("Parameters", self.params_edit)
        vary_row = QHBoxLayout()
        vary_row.addWidget(self.vary_combo, 1)
        vary_row.addWidget(QLabel("="))
        vary_row.addWidget(self.values_edit, 1)
        form.addRow("Vary", vary_row)
        form.addRow("Pause", self.pause_spin)
        builder = QWidget()
        builder.setObjectName("plan_builder")
        bl = QVBoxLayout(builder)
        bl.setContentsMargins(12, 10, 12, 10)
        title = QLabel("Plan")
        title.setProperty("role", "section")
        bl.addWidget(title)
        hint = QLabel("One run per target × profile × value, one after another on the host.")
        hint.setProperty("role", "hint")
        hint.setWordWrap(True)
        bl.addWidget(hint)
        bl.addLayout(form)
        brow = QHBoxLayout()
        brow.addWidget(self.build_button, 1)
        brow.addWidget(self.open_button)
        brow.addWidget(self.save_button)
        bl.addLayout(brow)
        bl.addStretch(1)
        builder.setMinimumWidth(320)
        builder.setMaximumWidth(440)

        # runs
        self.status_label = QLabel("Build a plan or open a plan file.")
        self.status_label.setObjectName("plan_status")
        self.status_label.setProperty("role", "section")
        self.message = QLabel("")
        self.message.setObjectName("plan_message")
        self.message.setWordWrap(True)
        self.message.setProperty("role", "hint")
        self.table = QTableView()
        self.table.setObjectName("plan_runs")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        hh.setStretchLastSection(False)
        self.table.setColumnWidth(7, 220)

        def button(text: str, name: str, tip: str) -> QPushButton:
            b = QPushButton(text)
            b.setObjectName(name)
            b.setToolTip(tip)
            return b

        self.start_button = button("Start", "start_button", "Hand the runs to the host and "
                                   "follow them into a session")
        self.start_button.setProperty("role", "primary")
        self.skip_button = button("Skip", "skip_button", "Skip the selected runs (a running "
                                  "one is stopped cleanly)")
        self.cancel_button = button("Cancel plan", "cancel_button",
                                    "Stop the running run and skip the rest")
        self.compare_button = button("Compare", "plan_compare_button",
                                     "Compare the selected runs that are done (or all of "
                                     "them) in the Compare tab")
        self.up_button = button("Move up", "up_button", "Run the selected run earlier")
        self.down_button = button("Move down", "down_button", "Run the selected run later")
        self.detach_button = button("Detach", "detach_button", "Stop following; the plan goes "
                                    "on on the host")
        self.attach_button = button("Attach…", "attach_button", "Follow a plan running on "
                                    "the host")
        actions = QHBoxLayout()
        for b in (self.start_button, self.skip_button, self.up_button, self.down_button,
                  self.cancel_button):
            actions.addWidget(b)
        actions.addStretch(1)
        actions.addWidget(self.compare_button)
        actions.addWidget(self.detach_button)
        actions.addWidget(self.attach_button)

        runs = QWidget()
        rl = QVBoxLayout(runs)
        rl.setContentsMargins(12, 10, 12, 10)
        rl.addWidget(self.status_label)
        rl.addWidget(self.message)
        rl.addWidget(self.table, 1)
        rl.addLayout(actions)

        lay = scrolled_layout(self, QHBoxLayout)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(builder)
        divider = QFrame()
        divider.setFrameShape(QFrame.Shape.VLine)
        divider.setProperty("role", "divider")
        lay.addWidget(divider)
        lay.addWidget(runs, 1)

    def _connect(self) -> None:
        self.workload_combo.currentIndexChanged.connect(self._on_workload_combo_changed)
        self._on_workload_combo_changed()
        self.add_managed_button.clicked.connect(self._on_add_managed_button_clicked)
        self.build_button.clicked.connect(self._on_build_button_clicked)
        self.open_button.clicked.connect(self._on_open_button_clicked)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.start_button.clicked.connect(self._on_start_button_clicked)
        self.skip_button.clicked.connect(self._on_skip_button_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(+1))
        self.detach_button.clicked.connect(self._on_detach_button_clicked)
        self.compare_button.clicked.connect(self._on_compare_button_clicked)
        self.attach_button.clicked.connect(self._on_attach_button_clicked)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)

    def _fill_targets(self) -> None:
        self.host_combo.clear()
        for h in self.catalog.hosts():
            self.host_combo.addItem("This computer" if h.name == "local" else h.name, h.name)
        self.target_list.clear()
        for t in self.catalog.targets():
            if t.name == "embedded-postgres":
                # shown, not hidden: a missing entry with no reason looked like a bug
                it = QListWidgetItem("Embedded PostgreSQL  ·  not in plans")
                it.setData(ROLE, ("unavailable", t.name))
                it.setFlags(Qt.ItemFlag.NoItemFlags)
                it.setToolTip("The embedded PostgreSQL lives in this app and is shared by every "
                              "run, so a plan cannot give each run its own server and profile. "
                              "Add a managed instance (an install folder, below) instead.")
                self.target_list.addItem(it)
                continue
            it = QListWidgetItem(f"{t.name}  ·  {t.engine} on {t.host}")
            it.setData(ROLE, ("target", t.name))
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Unchecked)
            self.target_list.addItem(it)
        for pt in self._managed:
            self._add_managed_item(pt)

    def _load_profiles(self) -> None:
        from app.store.profiles import list_profiles
        self.tasks.submit(list_profiles, self._on_profiles_listed, lambda exc: None)

    def _on_profiles_listed(self, profiles: list) -> None:
        checked = set(self.checked_profiles())
        self.profile_list.clear()
        names: dict[str, list[str]] = {}
        for p in profiles:
            names.setdefault(p.name, []).append(p.engine)
        for name, engines in sorted(names.items()):
            it = QListWidgetItem(f"{name}  ({', '.join(engines)})")
            it.setData(ROLE, name)
            it.setToolTip(f"{name}: for {', '.join(engines)}")
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked if name in checked
                             else Qt.CheckState.Unchecked)
            self.profile_list.addItem(it)

    @Slot()
    def _on_workload_combo_changed(self, *_args) -> None:
        spec = WORKLOADS.get(self.workload_combo.currentData())
        keep = self.vary_combo.currentText() or "clients"
        self.vary_combo.clear()
        self.vary_combo.addItem("(nothing)", "")
        for p in getattr(spec, "params", []):
            self.vary_combo.addItem(p.name, p.name)
        idx = self.vary_combo.findText(keep)
        self.vary_combo.setCurrentIndex(idx if idx >= 0 else 0)

    # ------------------------------------------------------------------ building
    def add_managed_target(self, path: str, name: str = "", workdir: str = "") -> PlanTarget:
        path = path.strip()
        if not path:
            raise PlanError("say where the server installation is, e.g. "
                            "/usr/lib/postgresql/15/bin")
        name = name or self._managed_name(path)
        pt = PlanTarget(name=name, managed=path, workdir=workdir)
        self._managed.append(pt)
        self._add_managed_item(pt).setCheckState(Qt.CheckState.Checked)
        return pt

    def _managed_name(self, path: str) -> str:
        parts = [p for p in Path(path).parts if p not in ("/", "bin", "usr", "lib")]
        base = "-".join(parts[-2:]) if parts else "managed"
        base = base.replace("postgresql", "pg").replace("pginstall", "embedded") or "managed"
        taken = {pt.name for pt in self._managed}
        name, n = base, 2
        while name in taken:
            name, n = f"{base}-{n}", n + 1
        return name

    def _add_managed_item(self, pt: PlanTarget) -> QListWidgetItem:
        it = QListWidgetItem(f"{pt.name}  ·  managed {pt.managed}")
        it.setData(ROLE, ("managed", pt.name))
        it.setToolTip(f"a private server from {pt.managed}"
                      + (f", data directories in {pt.workdir}" if pt.workdir else ""))
        it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        it.setCheckState(Qt.CheckState.Checked)
        self.target_list.addItem(it)
        return it

    @Slot()
    def _on_add_managed_button_clicked(self) -> None:
        try:
            self.add_managed_target(self.managed_edit.text())
        except PlanError as exc:
            self.show_message(str(exc), error=True)
            return
        self.managed_edit.clear()

    def checked_profiles(self) -> list[str]:
        return [self.profile_list.item(i).data(ROLE) for i in range(self.profile_list.count())
                if self.profile_list.item(i).checkState() == Qt.CheckState.Checked]

    def set_profiles_checked(self, names: list[str]) -> None:
        for i in range(self.profile_list.count()):
            it = self.profile_list.item(i)
            it.setCheckState(Qt.CheckState.Checked if it.data(ROLE) in names
                             else Qt.CheckState.Unchecked)

    def plan_from_fields(self) -> Plan:
        targets = []
        for i in range(self.target_list.count()):
            it = self.target_list.item(i)
            if it.checkState() != Qt.CheckState.Checked:
                continue
            kind, name = it.data(ROLE)
            if kind == "managed":
                targets.append(next(pt for pt in self._managed if pt.name == name))
            else:
                targets.append(PlanTarget(name=name, target=name))
        if not targets:
            raise PlanError("tick at least one target (or add a managed installation)")
        matrix = {}
        key = self.vary_combo.currentText().strip()
        key = "" if key == "(nothing)" else key
        if key:
            values = parse_values(self.values_edit.text())
            if not values:
                raise PlanError(f"give the values of {key} to run, e.g. 1, 4, 16")
            matrix[key] = values
        d = {"name": self.name_edit.text().strip() or "plan",
             "workload": self.workload_combo.currentData(),
             "host": self.host_combo.currentData() or "local",
             "pause": self.pause_spin.value(), "profiles": self.checked_profiles(),
             "params": parse_params(self.params_edit.text()), "matrix": matrix,
             "targets": [self._target_dict(t) for t in targets]}
        from app.model.plan import plan_from_dict
        return plan_from_dict(d, "the plan")

    @staticmethod
    def _target_dict(t: PlanTarget) -> dict:
        d: dict[str, Any] = {"name": t.name}
        if t.managed:
            d["managed"] = t.managed
            if t.workdir:
                d["workdir"] = t.workdir
            d["keep_datadir"] = t.keep_datadir
        else:
            d["target"] = t.target
        if t.engine:
            d["engine"] = t.engine
        return d

    @Slot()
    def _on_build_button_clicked(self) -> None:
        self.build()

    def build(self) -> bool:
        try:
            plan = self.plan_from_fields()
        except PlanError as exc:
            self.show_message(str(exc), error=True)
            return False
        self.set_plan(plan)
        return True

    def set_plan(self, plan: Plan) -> None:
        """Show a plan's runs, not started yet."""
        if self.is_following():
            self.show_message("A plan is being followed; detach from it first.", error=True)
            return
        self.plan, self.plan_id, self.state = plan, "", None
        planned = plan.expand()
        rows = []
        for pr in planned:
            try:
                secs = get_workload(plan.workload).planned_seconds(pr.params)
            except (KeyError, ValueError, TypeError):
                secs = 0.0          # the plan view says what is wrong with the workload
            rows.append(RunRow(pr.label, planned_s=secs or None, planned=pr))
        self.model.set_rows(rows)
        self._fill_fields(plan)
        self.status_label.setText(f"{plan.name}: {len(rows)} runs, not started")
        where = "this computer" if plan.host in ("", "local") else plan.host
        self.show_message(f"{len(rows)} runs of {plan.workload} on {where}; reorder or skip "
                          f"them, then Start.")
        self._update_buttons()
        self.plan_built.emit(len(rows))

    def _fill_fields(self, plan: Plan) -> None:
        self.name_edit.setText(plan.name)
        self.workload_combo.setCurrentIndex(max(0, self.workload_combo.findData(plan.workload)))
        idx = self.host_combo.findData(plan.host or "local")
        if idx < 0 and plan.host:
            self.host_combo.addItem(plan.host, plan.host)
            idx = self.host_combo.count() - 1
        self.host_combo.setCurrentIndex(max(0, idx))
        self.pause_spin.setValue(plan.pause_s)
        self.params_edit.setText(", ".join(f"{k}={v}" for k, v in plan.params.items()))
        if plan.matrix:
            key, values = next(iter(plan.matrix.items()))
            self.vary_combo.setCurrentText(key)
            self.values_edit.setText(", ".join(str(v) for v in values))
        known = {pt.name for pt in self._managed}
        for t in plan.targets:
            if t.managed and t.name not in known:
                self._managed.append(t)
                self._add_managed_item(t)
        names = {t.name for t in plan.targets}
        for i in range(self.target_list.count()):
            it = self.target_list.item(i)
            if it.data(ROLE)[0] == "unavailable":
                continue
            it.setCheckState(Qt.CheckState.Checked if it.data(ROLE)[1] in names
                             else Qt.CheckState.Unchecked)
        self.set_profiles_checked(plan.profiles)

    def plan_to_run(self) -> Plan:
        """The plan as the table says: its order, without the runs skipped before the start."""
        plan = self.plan
        if plan is None:
            raise PlanError("build a plan or open a plan file first")
        rows = [r for r in self.model.rows if r.planned is not None and r.state != "skipped"]
        if not rows:
            raise PlanError("every run is skipped: there is nothing to start")
        order = [r.planned.index for r in rows]
        if order == list(range(len(self.model.rows))):
            return plan
        runs = [{"target": r.planned.target, "profile": r.planned.profile,
                 "params": dict(r.planned.vary)} for r in rows]
        return Plan(plan.name, plan.workload, plan.targets, plan.profiles, dict(plan.params),
                    {}, runs, plan.host, plan.pause_s, plan.stop_on_failure)

    # ------------------------------------------------------------------ files
    @Slot()
    def _on_open_button_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open plan", "", "Plans (*.toml);;All (*)")
        if path:
            self.open_plan(Path(path))

    def open_plan(self, path: Path) -> None:
        def read() -> Plan:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise PlanError(f"cannot read {path}: {exc.strerror or exc}") from None
            return parse_plan(text, str(path))
        self.tasks.submit(read, self.set_plan,
                          lambda exc: self.show_message(str(exc), error=True))

    @Slot()
    def _on_save_button_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save plan", f"{self.name_edit.text()}.toml",
                                              "Plans (*.toml)")
        if path:
            self.save_plan(Path(path))

    def save_plan(self, path: Path) -> None:
        try:
            plan = self.plan_to_run() if self.plan is not None else self.plan_from_fields()
        except PlanError as exc:
            self.show_message(str(exc), error=True)
            return

        def write() -> Path:
            import tomli_w
            import os
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(tomli_w.dumps(plan.to_dict()), encoding="utf-8")
            os.replace(tmp, path)          # a reader never sees half a plan
            return path
        self.tasks.submit(write, self._on_plan_written,
                          lambda exc: self.show_message(f"Could not save the plan: {exc}",
                                                        error=True))

    def _on_plan_written(self, path: Path) -> None:
        self.show_message(f"Saved {path}.")
        self.plan_saved.emit(str(path))

    # ------------------------------------------------------------------ selection, reorder, skip
    def selected_rows(self) -> list[int]:
        return sorted({i.row() for i in self.table.selectionModel().selectedRows()})

    def select_row(self, row: int) -> None:
        self.table.selectRow(row)

    def move_selected(self, delta: int) -> None:
        rows = self.selected_rows()
        if len(rows) != 1:
            return
        row, to = rows[0], rows[0] + delta
        if not (0 <= to < self.model.rowCount()):
            return
        if self.plan_id:
            if not all(self.model.rows[r].state == "waiting" for r in (row, to)):
                self.show_message("Only waiting runs can be moved.", error=True)
                return
            self.model.move(row, to)
            ids = [r.run_id for r in self.model.rows if r.state == "waiting"]
            self._control("reorder", ids)
        else:
            self.model.move(row, to)
        self.select_row(to)

    @Slot()
    def _on_skip_button_clicked(self) -> None:
        self.skip_selected()

    def skip_selected(self) -> None:
        rows = [r for r in self.selected_rows()
                if self.model.rows[r].state not in FINAL_STATES]
        if not rows:
            return
        if self.plan_id:
            self._control("skip", [self.model.rows[r].run_id for r in rows])
        else:
            for r in rows:
                self.model.set_state(r, "skipped")
        self._update_buttons()

    @Slot()
    def _on_cancel_button_clicked(self) -> None:
        if self.plan_id:
            self._control("cancel")

    def _control(self, op: str, *args) -> None:
        worker = self._worker
        ctl = worker.controller() if worker is not None else None
        if ctl is None:
            self.show_message("Not following a plan.", error=True)
            return
        fn = getattr(ctl, op)
        self.tasks.submit(lambda: fn(*args), lambda _r: None, self._on_control_failed)

    def _on_control_failed(self, exc: BaseException) -> None:
        self.show_message(f"The host did not take it: {exc}", error=True)
        self.control_failed.emit(str(exc))

    # ------------------------------------------------------------------ start, follow, attach
    @Slot()
    def _on_start_button_clicked(self) -> None:
        self.start()

    def start(self, session_path: Path | None = None) -> bool:
        if self.is_following():
            return False
        try:
            plan = self.plan_to_run()
        except PlanError as exc:
            self.show_message(str(exc), error=True)
            return False
        skipped = [r.label for r in self.model.rows if r.state == "skipped"]
        self._follow(PlanWorker(plan, self.catalog, plan.host or "local", "", session_path,
                                self._factory))
        where = "this computer" if plan.host in ("", "local") else plan.host
        self.status_label.setText(f"{plan.name}: checking and starting on {where}…")
        self.show_message(f"Skipped before the start: {', '.join(skipped)}" if skipped else "")
        return True

    def attach(self, plan_id: str, host: str | None = None,
               session_path: Path | None = None) -> None:
        if self.is_following():
            return
        host = host or self.host_combo.currentData() or "local"
        self.plan, self.plan_id = None, plan_id
        self._results_asked.clear()
        self.model.set_rows([])
        self._follow(PlanWorker(None, self.catalog, host, plan_id, session_path, self._factory))
        self.status_label.setText(f"Attaching to {plan_id}…")

    def _follow(self, worker: PlanWorker) -> None:
        worker.plan_started.connect(self._on_worker_plan_started)
        worker.state_changed.connect(self._on_worker_state_changed)
        worker.status_changed.connect(self._on_worker_status_changed)
        worker.plan_finished.connect(self._on_worker_plan_finished)
        worker.plan_failed.connect(self._on_worker_plan_failed)
        self._worker = worker
        self._thread = start_worker_thread(worker, "versus-plan",
                                           (worker.plan_finished, worker.plan_failed))
        self._thread.finished.connect(self._on_plan_thread_finished)
        self._update_buttons()

    @Slot(str)
    def _on_worker_plan_started(self, plan_id: str) -> None:
        self.plan_id = plan_id
        self._update_buttons()
        self.plan_started.emit(plan_id)

    @Slot(object)
    def _on_worker_state_changed(self, st: PlanState) -> None:
        self.state = st
        self.plan_id = st.plan_id or self.plan_id
        now = time.time()
        self.model.apply(st, now)
        self._read_results()
        counts = st.counts()
        done = counts["done"] + counts["failed"] + counts["skipped"]
        eta = st.estimated_finish(now)
        parts = [f"{st.name or 'plan'} ({st.plan_id}): {st.state}",
                 f"{done} of {len(st.runs)} runs ended"]
        if counts["failed"]:
            parts.append(f"{counts['failed']} failed")
        if eta:
            parts.append(f"estimated finish {clock(eta)}")
        self.status_label.setText(" · ".join(parts))
        self._update_buttons()
        self.plan_state_changed.emit(st)

    def _runs_path(self) -> Path | None:
        """The session file the plan's runs go to (known once following has begun)."""
        if self.session_path is not None:
            return Path(self.session_path)
        ctl = self._worker.controller() if self._worker is not None else None
        path = getattr(ctl, "session_path", None)
        return Path(path) if path else None

    def _read_results(self) -> None:
        """Each run that ended gets its headline result, read from the session off-thread."""
        path = self._runs_path()
        if path is None:
            return
        for row in self.model.rows:
            if row.run_id and row.state in ("done", "failed") and not row.result \
                    and row.run_id not in self._results_asked:
                self._results_asked.add(row.run_id)
                self.tasks.submit(lambda rid=row.run_id: headline_result(path, rid),
                                  lambda res, rid=row.run_id: self._on_result_read(rid, res),
                                  lambda exc, rid=row.run_id: self._results_asked.discard(rid))

    def _on_result_read(self, run_id: str, res: tuple[str, str] | None) -> None:
        for i, row in enumerate(self.model.rows):
            if row.run_id == run_id:
                if res is None:
                    self._results_asked.discard(run_id)    # not stored yet: ask again later
                    return
                row.result, row.result_tip = res
                self.model._changed(i, i, 3, 3)
        self._update_buttons()

    def done_refs(self, selected_only: bool = True) -> list:
        from app.model.runset import RunRef
        path = self._runs_path()
        if path is None:
            return []
        rows = [self.model.rows[i] for i in self.selected_rows()] if selected_only else []
        rows = [r for r in (rows or self.model.rows) if r.state == "done" and r.run_id]
        return [RunRef(str(path), r.run_id) for r in rows]

    def _on_compare_button_clicked(self) -> None:
        refs = self.done_refs()
        if refs:
            self.compare_requested.emit(refs)

    @Slot(str)
    def _on_worker_status_changed(self, text: str) -> None:
        self.show_message(text)

    @Slot(object)
    def _on_worker_plan_finished(self, outcome: Any) -> None:
        self.last_outcome = outcome
        self.session_path = getattr(outcome, "session_path", None)
        state = getattr(outcome, "state", "?")
        if state == "detached":
            self.show_message(f"Left {outcome.plan_id} going on the host; Attach… to follow it "
                              f"again. Runs so far are in {self.session_path}.")
        else:
            self.show_message(f"Plan {state}; the runs are in {self.session_path}.")
        self._worker = None
        self._update_buttons()
        self.plan_ended.emit(outcome)

    @Slot(object)
    def _on_worker_plan_failed(self, exc: BaseException) -> None:
        self.last_outcome = exc
        self._worker = None
        self.show_message(f"The plan could not go on: {exc}" if self.plan_id else
                          f"The plan could not start: {exc}", error=True)
        if not self.plan_id:
            self.status_label.setText("Not started")
        self._update_buttons()
        self.plan_ended.emit(exc)

    @Slot()
    def _on_plan_thread_finished(self) -> None:
        self._thread = None
        self._update_buttons()
        self.plan_idle.emit()

    @Slot()
    def _on_detach_button_clicked(self) -> None:
        self.detach()

    def detach(self) -> None:
        if self._worker is not None:
            self._worker.detach()
            self.show_message("Detaching; the plan goes on on the host…")

    @Slot()
    def _on_attach_button_clicked(self) -> None:
        from app.remote.plans import list_plans
        host, catalog = self.host_combo.currentData() or "local", self.catalog
        self.show_message(f"Looking for plans on {self.host_combo.currentText()}…")
        self.tasks.submit(lambda: list_plans(host, catalog),
                          lambda plans: self._ask_plan_to_attach(host, plans),
                          lambda exc: self.show_message(f"Could not list the plans: {exc}",
                                                        error=True))

    def _ask_plan_to_attach(self, host: str, plans: list[dict]) -> None:
        if not plans:
            self.show_message("There are no plans on that host.")
            return
        self.show_message("")
        labels = [f"{p['plan_id']}  {p['state']}  {p.get('name', '')}" for p in plans]
        dlg = QInputDialog(self)
        dlg.setObjectName("attach_dialog")
        dlg.setWindowTitle("Attach to a plan")
        dlg.setLabelText("Plans on the host (newest last):")
        dlg.setComboBoxItems(labels)
        dlg.setTextValue(labels[-1])
        dlg.textValueSelected.connect(lambda text: self.attach(text.split()[0], host))
        dlg.open()

    # ------------------------------------------------------------------ state of the widget
    def is_following(self) -> bool:
        return self._worker is not None or self._thread is not None

    def show_message(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #b00020;" if error else "")
        self.message.setText(text)
        self.message_changed.emit(text)

    @Slot()
    def _update_buttons(self, *_args) -> None:
        following = self.is_following()
        started = bool(self.plan_id) and following
        rows = self.selected_rows()
        open_rows = [r for r in rows if self.model.rows[r].state not in FINAL_STATES]
        # a plan shown with the host's states is started once; Build or Open for another
        self.start_button.setEnabled(not following and self.plan is not None
                                     and not self.plan_id)
        self.skip_button.setEnabled(bool(open_rows) and (started or not following))
        movable = len(rows) == 1 and (not following or started and
                                      self.model.rows[rows[0]].state == "waiting")
        self.up_button.setEnabled(movable and rows[0] > 0)
        self.down_button.setEnabled(movable and rows[0] < self.model.rowCount() - 1)
        self.cancel_button.setEnabled(started and not (self.state and self.state.finished))
        self.detach_button.setEnabled(started)
        self.attach_button.setEnabled(not following)
        for w in (self.build_button, self.open_button):
            w.setEnabled(not following)
        self.compare_button.setEnabled(bool(self.done_refs(selected_only=False)))

    def shutdown(self) -> bool:
        """Before the window closes: detach (the plan goes on on the host). True when idle."""
        if self._worker is not None:
            self._worker.detach()
        return self._thread is None
