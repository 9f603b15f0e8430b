"""A form generated from a workload's declared parameters: one typed widget per Param."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QComboBox, QDoubleSpinBox,
                               QFormLayout, QLabel, QLineEdit, QSpinBox, QVBoxLayout, QWidget)

from workloads.params import Param, WorkloadSpec

INT_MIN, INT_MAX = -(2**31), 2**31 - 1       # QSpinBox holds a C int
# The order users think in (HammerDB's too): build the schema, load it, set up the driver
# and its virtual users, then run. Groups not listed here follow, by name.
GROUP_ORDER = ("schema", "load", "driver", "run")
GROUP_TITLES = {"schema": "Schema", "load": "Load", "driver": "Driver options", "run": "Run"}


def param_label(name: str) -> str:
    return name.replace("-", " ").replace("_", " ").capitalize()


def group_rank(group: str) -> tuple[int, str]:
    return (GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER), group)


class ParamFormWidget(QWidget):
    """Widgets for ``spec.params``; ``values()`` returns them typed as the workload declares."""

    values_changed = Signal()

    def __init__(self, spec: WorkloadSpec | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._widgets: dict[str, QWidget] = {}
        self._params: dict[str, Param] = {}
        self.headings: dict[str, QLabel] = {}       # group -> its heading, in form order
        self.spec: WorkloadSpec | None = None
        if spec is not None:
            self.set_spec(spec)

    def set_spec(self, spec: WorkloadSpec) -> None:
        while self._layout.count():
            item = self._layout.takeAt(0)
            if item.widget():
                item.widget().hide()          # gone now, not when the event loop next runs
                item.widget().deleteLater()
        self._widgets.clear()
        self._params.clear()
        self.headings.clear()
        self.spec = spec
        groups: dict[str, list[Param]] = {}
        for p in spec.params:
            groups.setdefault(p.group, []).append(p)
        order = sorted(groups, key=group_rank)
        holder = QWidget()
        form = QFormLayout(holder)        # one layout, so every field lines up
        form.setContentsMargins(4, 0, 0, 0)
        form.setHorizontalSpacing(12)
        form.setVerticalSpacing(6)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for group in order:
            heading = QLabel(GROUP_TITLES.get(group, param_label(group)))
            heading.setProperty("role", "section")
            heading.setObjectName(f"param_group_{group}")
            self.headings[group] = heading
            form.addRow(heading)
            for p in groups[group]:
                w = self._make_widget(p)
                w.setObjectName(f"param_{p.name}")
                tip = p.help + self._range_text(p)
                w.setToolTip(tip)
                label = QLabel(p.label or param_label(p.name))
                label.setToolTip(tip)
                label.setBuddy(w)
                form.addRow(label, w)
                self._widgets[p.name] = w
                self._params[p.name] = p
        self._layout.addWidget(holder)
        self._layout.addStretch(1)
        # A child added to a visible form is shown only later, and until then counts for
        # nothing in sizeHint(): show it now so a new workload's form is measured right.
        holder.show()

    @staticmethod
    def _range_text(p: Param) -> str:
        if p.type not in ("int", "float") or (p.min is None and p.max is None):
            return ""
        lo = "…" if p.min is None else f"{p.min:g}"
        hi = "…" if p.max is None else f"{p.max:g}"
        return f"\nRange {lo} – {hi}{(' ' + p.unit) if p.unit else ''}."

    def _make_widget(self, p: Param) -> QWidget:
        if p.type == "int":
            w = QSpinBox()
            w.setRange(int(max(INT_MIN, p.min if p.min is not None else INT_MIN)),
                       int(min(INT_MAX, p.max if p.max is not None else INT_MAX)))
            w.setGroupSeparatorShown(True)
            w.setValue(int(p.default))
            w.setAccelerated(True)
            if p.unit:
                w.setSuffix(f" {p.unit}")
            w.valueChanged.connect(self.values_changed)
        elif p.type == "float":
            w = QDoubleSpinBox()
            w.setDecimals(3)
            w.setRange(p.min if p.min is not None else -1e12,
                       p.max if p.max is not None else 1e12)
            w.setValue(float(p.default))
            if p.unit:
                w.setSuffix(f" {p.unit}")
            w.valueChanged.connect(self.values_changed)
        elif p.type == "bool":
            w = QCheckBox()
            w.setChecked(bool(p.default))
            w.toggled.connect(self.values_changed)
        elif p.type == "choice":
            w = QComboBox()
            w.addItems(list(p.choices))
            w.setCurrentText(str(p.default))
            w.currentTextChanged.connect(self.values_changed)
        else:
            w = QLineEdit(str(p.default))
            w.textChanged.connect(self.values_changed)
        if isinstance(w, QAbstractSpinBox):
            # Typing a value then clicking Run must take it without pressing Enter first.
            w.setKeyboardTracking(True)
            w.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        return w

    def widget(self, name: str) -> QWidget:
        return self._widgets[name]

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, w in self._widgets.items():
            if isinstance(w, QSpinBox):
                w.interpretText()          # take text still being typed
                out[name] = int(w.value())
            elif isinstance(w, QDoubleSpinBox):
                w.interpretText()
                out[name] = float(w.value())
            elif isinstance(w, QCheckBox):
                out[name] = w.isChecked()
            elif isinstance(w, QComboBox):
                out[name] = w.currentText()
            else:
                out[name] = w.text()
        return out

    def set_values(self, values: dict[str, Any]) -> None:
        """Apply saved values; names the workload no longer has, or bad values, are ignored."""
        for name, value in values.items():
            w, p = self._widgets.get(name), self._params.get(name)
            if w is None:
                continue
            try:
                value = p.parse(value)
            except ValueError:
                continue
            if isinstance(w, (QSpinBox, QDoubleSpinBox)):
                w.setValue(value)
            elif isinstance(w, QCheckBox):
                w.setChecked(bool(value))
            elif isinstance(w, QComboBox):
                w.setCurrentText(str(value))
            else:
                w.setText(str(value))

    def reset(self) -> None:
        if self.spec is not None:
            self.set_values(self.spec.defaults())
