"""A flame graph of a run's CPU profile (folded stacks from `perf record -g`), drawn from the
same layout as the SVG export (app.analysis.flame). Click a frame to zoom on it, click the
bottom bar to zoom out; Export SVG writes what is shown."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFrame, QHBoxLayout, QLabel,
                               QPushButton, QScrollArea, QToolTip, QVBoxLayout, QWidget)

from app.analysis.flame import Frame, colour, describe, layout, svg

ROW = 18


class FlameCanvas(QWidget):
    """Paints the frames of one profile; root at the bottom."""

    focus_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setMinimumHeight(160)
        self.stacks: list = []
        self.focus = ""
        self.frames: list[Frame] = []
        self.total = 0

    def set_stacks(self, stacks: Sequence, focus: str = "") -> None:
        self.stacks = list(stacks)
        self.set_focus(focus)

    def set_focus(self, focus: str) -> None:
        self.focus = focus
        self.frames, self.total = layout(self.stacks, focus, min_width=0.5 / max(self.width(), 1))
        depth = max((f.depth for f in self.frames), default=0) + 1
        self.setMinimumHeight(max(160, depth * ROW + 8))
        self.update()
        self.focus_changed.emit(focus)

    def _rect(self, f: Frame) -> QRectF:
        w = self.width() - 8
        return QRectF(4 + f.x * w, self.height() - 4 - (f.depth + 1) * ROW,
                      max(f.width * w - 1, 0.5), ROW - 1)

    def frame_at(self, x: float, y: float) -> Frame | None:
        for f in self.frames:
            if self._rect(f).contains(x, y):
                return f
        return None

    def paintEvent(self, _ev: QPaintEvent) -> None:             # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#ffffff"))
        font = QFont(self.font())
        font.setPointSizeF(max(7.5, font.pointSizeF() * 0.85))
        p.setFont(font)
        fm = QFontMetrics(font)
        if not self.frames:
            p.setPen(QColor("#666666"))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No profile to show.")
            return
        for f in self.frames:
            r = self._rect(f)
            p.fillRect(r, QColor(colour(f.name)))
            if r.width() > 24:
                p.setPen(QColor("#111111"))
                text = fm.elidedText(f.name, Qt.TextElideMode.ElideRight, int(r.width() - 4))
                p.drawText(r.adjusted(2, 0, -2, 0),
                           Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)
        p.end()

    def mouseMoveEvent(self, ev: QMouseEvent) -> None:          # noqa: N802
        f = self.frame_at(ev.position().x(), ev.position().y())
        if f is not None and self.total:
            QToolTip.showText(ev.globalPosition().toPoint(),
                              f"{f.name}\n{f.count:,} samples, "
                              f"{100.0 * f.count / self.total:.2f} % of the profile", self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, ev: QMouseEvent) -> None:         # noqa: N802
        f = self.frame_at(ev.position().x(), ev.position().y())
        if f is None:
            return
        # a click on the zoomed frame itself (at the bottom) zooms out one level
        if f.path == self.focus:
            self.set_focus(";".join(self.focus.split(";")[:-1]))
        else:
            self.set_focus(f.path)

    def resizeEvent(self, ev) -> None:                          # noqa: N802
        super().resizeEvent(ev)
        if self.stacks:
            self.frames, self.total = layout(self.stacks, self.focus,
                                             min_width=0.5 / max(self.width(), 1))


class FlameGraphWidget(QWidget):
    """A phase chooser, the flame graph, where it comes from, and SVG export."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Profile of phase"))
        self.phase_combo = QComboBox()
        self.phase_combo.setObjectName("profile_phase_combo")
        row.addWidget(self.phase_combo)
        self.reset_button = QPushButton("Zoom out")
        row.addWidget(self.reset_button)
        row.addStretch(1)
        self.export_button = QPushButton("Export SVG…")
        self.export_button.setObjectName("flame_export_button")
        row.addWidget(self.export_button)
        lay.addLayout(row)
        self.canvas = FlameCanvas()
        self.canvas.setObjectName("flame_canvas")
        scroll = QScrollArea()             # deep stacks scroll; the root stays at the bottom
        scroll.setWidget(self.canvas)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll = scroll
        self._to_bottom = True
        scroll.verticalScrollBar().rangeChanged.connect(self._on_scroll_range_changed)
        lay.addWidget(scroll, 1)
        self.source = QLabel()
        self.source.setObjectName("flame_source")
        self.source.setProperty("role", "hint")
        self.source.setWordWrap(True)
        lay.addWidget(self.source)
        self.profiles: list[dict[str, Any]] = []
        self.label = ""
        self.phase_combo.currentIndexChanged.connect(self._on_phase_combo_changed)
        self.reset_button.clicked.connect(lambda: self.canvas.set_focus(""))
        self.export_button.clicked.connect(self._on_export_button_clicked)

    def set_profiles(self, profiles: Sequence[dict[str, Any]], label: str = "") -> None:
        self.profiles = [p for p in profiles if p.get("stacks")]
        self.label = label
        self.phase_combo.blockSignals(True)
        self.phase_combo.clear()
        for i, p in enumerate(self.profiles):
            self.phase_combo.addItem(str(p.get("phase", f"profile {i + 1}")), i)
        # the latest profile first: the measured phase comes after warm-ups
        self.phase_combo.setCurrentIndex(len(self.profiles) - 1)
        self.phase_combo.blockSignals(False)
        self._on_phase_combo_changed(self.phase_combo.currentIndex())

    def _on_scroll_range_changed(self, _lo: int, hi: int) -> None:
        if self._to_bottom:
            self.scroll.verticalScrollBar().setValue(hi)

    def current(self) -> dict[str, Any] | None:
        i = self.phase_combo.currentData()
        return self.profiles[i] if i is not None and 0 <= i < len(self.profiles) else None

    def _on_phase_combo_changed(self, _i: int) -> None:
        prof = self.current()
        self.canvas.set_stacks(prof["stacks"] if prof else [])
        self._to_bottom = True          # the root (at the bottom) in view once laid out
        bar = self.scroll.verticalScrollBar()
        bar.setValue(bar.maximum())
        self.source.setText(describe(prof) if prof else
                            "No CPU profile in this run: record one with the run option "
                            "'CPU profile' (versus run … --profile SECONDS).")
        self.export_button.setEnabled(prof is not None)

    def svg_text(self) -> str:
        prof = self.current() or {}
        return svg(prof.get("stacks") or [], f"{self.label}: CPU of the server in "
                   f"{prof.get('phase', '?')}", focus=self.canvas.focus,
                   subtitle=describe(prof) if prof else "")

    def export_svg(self, path: str | Path) -> None:
        from app.store.export import write_text
        write_text(str(path), self.svg_text())

    def _on_export_button_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export flame graph", "flamegraph.svg",
                                              "SVG (*.svg)")
        if path:
            self.export_svg(path)
