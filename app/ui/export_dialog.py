"""The chart export dialog of the Compare view: which chart, format, size, scale, file.

It only gathers choices; the Compare view renders (app.ui.render) and writes in the
background. PNG sizes: 1920×1080 (slides), 1280×720, 3840×2160, or a custom size; the HiDPI
scale multiplies the pixels, not the layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLineEdit, QPushButton, QSpinBox, QWidget)

from app.model.runset import CHARTS

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


class ChartExportDialog(QDialog):
    def __init__(self, charts: list[str], chart: str, mode: str, folder: Path,
                 parent: QWidget | None = None) -> None:
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
        for text, fmt in FORMAT_CHOICES:
            self.format_combo.addItem(text, fmt)
        form.addRow("Format", self.format_combo)
        self.size_combo = QComboBox()
        for text, size in SIZE_CHOICES:
            self.size_combo.addItem(text, size)
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
        for text, scale in SCALE_CHOICES:
            self.scale_combo.addItem(text, scale)
        form.addRow("Pixel scale", self.scale_combo)
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("Overlay: one chart, one line per run", "overlay")
        self.mode_combo.addItem("Side by side: one panel per run", "side-by-side")
        self.mode_combo.setCurrentIndex(max(0, self.mode_combo.findData(mode)))
        form.addRow("Layout", self.mode_combo)
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
                                  self.mode_combo.currentData())
