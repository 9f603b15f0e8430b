"""The chart export dialog of the Compare view: which chart, format, size, scale, file.

It only gathers choices; the Compare view renders (app.ui.charts.render) and writes in the
background. PNG sizes: 1920×1080 (slides), 1280×720, 3840×2160, or a custom size; the HiDPI
scale multiplies the pixels, not the layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLineEdit, QPushButton, QSpinBox, QWidget)

from app.analysis.metrics import CHARTS

SIZE_CHOICES = (("1920 × 1080 (slides)", (1920, 1080)), ("1280 × 720", (1280, 720)),
                ("3840 × 2160", (3840, 2160)), ("Custom…", None))
SCALE_CHOICES = (("1× (as sized)", 1.0), ("1.5×", 1.5), ("2× (HiDPI)", 2.0))
FORMAT_CHOICES = (("PNG image", "png"), ("SVG drawing", "svg"), ("PDF page", "pdf"))


@dataclass(frozen=True)
class ChartExportRequest:
    chart: str
    path: Path
    fmt: str
    size: tuple[int, int]
    scale: float
    mode: str
    log_y: bool = False
    footer: bool = False


class ChartExportDialog(QDialog):
    def __init__(self, charts: list[str], chart: str, mode: str, folder: Path,
                 parent: QWidget | None = None, log_y: bool = False, footer: bool = False,
                 fmt: str = "png", size: str = "1920x1080", scale: float = 1.0) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export Chart")
        self.setObjectName("chart_export_dialog")
        form = QFormLayout(self)
        self.chart_combo = QComboBox()
        for name in charts:
            self.chart_combo.addItem(CHARTS[name].title, name)
        self.chart_combo.setCurrentIndex(max(0, self.chart_combo.findData(chart)))
        form.addRow("Chart", self.chart_combo)
        self.format_combo = QComboBox()
        for text, choice in FORMAT_CHOICES:
            self.format_combo.addItem(text, choice)
        form.addRow("Format", self.format_combo)
        self.size_combo = QComboBox()
        for text, choice in SIZE_CHOICES:
            self.size_combo.addItem(text, choice)
        self.width_spin, self.height_spin = QSpinBox(), QSpinBox()
        for spin, value in ((self.width_spin, 1600), (self.height_spin, 900)):
            spin.setRange(16, 16384)
            spin.setValue(value)
            spin.setSuffix(" px")
        custom = QHBoxLayout()
        custom.addWidget(self.width_spin)
        custom.addWidget(self.height_spin)
        form.addRow("Size", self.size_combo)
        form.addRow("Custom size", custom)
        self.scale_combo = QComboBox()
        for text, choice in SCALE_CHOICES:
            self.scale_combo.addItem(text, choice)
        form.addRow("Pixel scale", self.scale_combo)
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("Overlay: one chart, one line per run", "overlay")
        self.mode_combo.addItem("Side by side: one panel per run", "side-by-side")
        self.mode_combo.setCurrentIndex(max(0, self.mode_combo.findData(mode)))
        form.addRow("Layout", self.mode_combo)
        self.log_box = QCheckBox("Logarithmic value axis")
        self.log_box.setToolTip("For latency percentiles an order of magnitude apart")
        self.log_box.setChecked(log_y)
        form.addRow("Scale", self.log_box)
        self.footer_box = QCheckBox("Footer with each run's configuration and the source")
        self.footer_box.setChecked(footer)
        form.addRow("Small print", self.footer_box)
        # the choices of the last export (format, size, pixel scale)
        self.format_combo.setCurrentIndex(max(0, self.format_combo.findData(fmt)))
        w, _, h = str(size).partition("x")
        known = next((i for i, (_t, sz) in enumerate(SIZE_CHOICES)
                      if sz and f"{sz[0]}x{sz[1]}" == size), None)
        if known is not None:
            self.size_combo.setCurrentIndex(known)
        elif w.isdigit() and h.isdigit():
            self.size_combo.setCurrentIndex(len(SIZE_CHOICES) - 1)
            self.width_spin.setValue(int(w))
            self.height_spin.setValue(int(h))
        self.scale_combo.setCurrentIndex(max(0, self.scale_combo.findData(float(scale))))
        self.path_edit = QLineEdit(str(Path(folder) / f"{chart}.png"))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_clicked)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        form.addRow("File", row)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.format_combo.currentIndexChanged.connect(self._on_choice_changed)
        self.size_combo.currentIndexChanged.connect(self._on_choice_changed)
        self.chart_combo.currentIndexChanged.connect(self._on_choice_changed)
        self._on_choice_changed()

    def _on_choice_changed(self, *_a) -> None:
        custom = self.size_combo.currentData() is None
        self.width_spin.setEnabled(custom)
        self.height_spin.setEnabled(custom)
        self.scale_combo.setEnabled(self.format_combo.currentData() == "png")
        p = Path(self.path_edit.text() or "chart.png")
        stem = p.stem if p.stem not in CHARTS else self.chart_combo.currentData()
        self.path_edit.setText(str(p.with_name(f"{stem}.{self.format_combo.currentData()}")))

    def _on_browse_clicked(self) -> None:
        fmt = self.format_combo.currentData()
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", self.path_edit.text(),
                                              f"{fmt.upper()} (*.{fmt})")
        if path:
            self.path_edit.setText(path)

    def request(self) -> ChartExportRequest:
        size = self.size_combo.currentData() or (self.width_spin.value(),
                                                 self.height_spin.value())
        return ChartExportRequest(self.chart_combo.currentData(), Path(self.path_edit.text()),
                                  self.format_combo.currentData(), tuple(size),
                                  float(self.scale_combo.currentData()),
                                  self.mode_combo.currentData(), self.log_box.isChecked(),
                                  self.footer_box.isChecked())


DECK_SLIDE_CHOICES = (("matrix", "Tests × runs matrix, one slide per test group (suites)"),
                      ("charts", "Charts, one slide each"),
                      ("tables", "Tables per phase"),
                      ("warmups", "Warm-up phases in the tables"))


class DeckSlidesDialog(QDialog):
    """Which slides a deck holds after its title (as ``versus export --slides``)."""

    def __init__(self, chosen: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export Slide Deck")
        self.setObjectName("deck_slides_dialog")
        form = QFormLayout(self)
        self.boxes: dict[str, QCheckBox] = {}
        for name, text in DECK_SLIDE_CHOICES:
            box = QCheckBox(text)
            box.setObjectName(f"deck_{name}")
            box.setChecked(name in chosen)
            self.boxes[name] = box
            form.addRow(box)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def slides(self) -> tuple[str, ...]:
        return tuple(name for name, box in self.boxes.items() if box.isChecked())
