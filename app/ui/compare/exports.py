"""Everything the Compare view exports: a chart (PNG, SVG, PDF in the light slide theme, or the
clipboard), the series (CSV, JSON), the tables (Markdown, HTML, CSV) and a slide deck, each
written off the GUI thread; the choices of the last export are kept for the next.

    exports = CompareExports(view)          # view: the CompareWidget it exports from
    exports.export_chart("latency", "lat.png", size=(1920, 1080), log_y=True)

``view.export_finished`` (the path) or ``view.export_failed`` (the sentence shown) says how
each one went.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from app.analysis.compare import CompareError
from app.analysis.deck import (deck_parts, deck_subtitle, default_slides,
                               footer_text, key_results)
from app.analysis.metrics import CHARTS
from app.store.export import (ExportError, check_writable, series_csv, tables_text, to_json,
                              write_bytes, write_deck)

from app.ui.charts.render import FORMATS, render_bytes


class CompareExports(QObject):
    def __init__(self, view: Any) -> None:
        """``view``: the Compare view (its comparison, mode, panes, tables, settings, tasks,
        actions and export signals)."""
        super().__init__(view)
        self.view = view
        remembered = view.settings.get("export/dir") if view.settings is not None else ""
        self.export_dir = Path(remembered if remembered and Path(remembered).is_dir()
                               else view.default_export_dir)
        a = view.actions
        a["export_footer"].setCheckable(True)
        if view.settings is not None:
            a["export_footer"].setChecked(view.settings.get("export/footer"))
        a["export_footer"].toggled.connect(
            lambda on: self._remember({"export/footer": bool(on)}))
        a["export_chart"].triggered.connect(self._on_export_chart_action_triggered)
        a["copy_chart"].triggered.connect(lambda: self.copy_chart(view.current_chart()))
        a["export_series_csv"].triggered.connect(lambda: self._ask_and_export("series", "csv"))
        a["export_series_json"].triggered.connect(lambda: self._ask_and_export("series", "json"))
        a["export_tables_md"].triggered.connect(lambda: self._ask_and_export("tables", "md"))
        a["export_tables_html"].triggered.connect(lambda: self._ask_and_export("tables", "html"))
        a["export_tables_csv"].triggered.connect(lambda: self._ask_and_export("tables", "csv"))
        a["export_deck"].triggered.connect(lambda: self._ask_and_export("deck", "pptx"))

    def _on_export_chart_action_triggered(self) -> None:
        from app.ui.compare.export_dialog import ChartExportDialog
        v, s = self.view, self.view.settings
        if v.comp is None:
            return
        chart = v.current_chart()
        dlg = ChartExportDialog(v.comp.charts(), chart,
                                (s.get("export/mode") if s else "") or v.mode,
                                self.export_dir, v, log_y=chart in v.panes.log_charts,
                                footer=self.footer_on(),
                                fmt=s.get("export/format") if s else "png",
                                size=s.get("export/size") if s else "1920x1080",
                                scale=s.get("export/scale") if s else 1.0)
        dlg.accepted.connect(lambda: self.on_chart_dialog_accepted(dlg))
        dlg.finished.connect(lambda _r: dlg.deleteLater())
        dlg.open()

    def on_chart_dialog_accepted(self, dlg) -> None:
        req = dlg.request()
        # the next export starts where this one went, in the same layout
        self._remember({"export/dir": str(req.path.parent), "export/format": req.fmt,
                        "export/size": f"{req.size[0]}x{req.size[1]}",
                        "export/scale": req.scale, "export/mode": req.mode,
                        "export/footer": req.footer})
        self.view.actions["export_footer"].setChecked(req.footer)
        self.export_chart(req.chart, req.path, req.fmt, req.size, req.scale, req.mode,
                          req.log_y, req.footer)

    def footer_on(self) -> bool:
        return self.view.actions["export_footer"].isChecked()

    def _remember(self, values: dict) -> None:
        if "export/dir" in values and Path(values["export/dir"]).is_dir():
            self.export_dir = Path(values["export/dir"])
        if self.view.settings is not None:
            for k, value in values.items():
                self.view.settings.set(k, value)

    def ask_chart_path(self, chart: str, fmt: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self.view, f"Export {CHARTS[chart].title}",
                                              str(self.export_dir / f"{chart}.{fmt}"),
                                              f"{fmt.upper()} (*.{fmt})")
        if path:
            self._remember({"export/dir": str(Path(path).parent)})
            self.export_chart(chart, path, fmt)

    def _ask_and_export(self, what: str, fmt: str) -> None:
        if self.view.comp is None:
            return
        names = {"series": "series", "tables": "tables", "deck": "comparison"}
        path, _ = QFileDialog.getSaveFileName(self.view, "Export",
                                              str(self.export_dir / f"{names[what]}.{fmt}"),
                                              f"{fmt.upper()} (*.{fmt})")
        if not path:
            return
        self._remember({"export/dir": str(Path(path).parent)})
        if what == "series":
            self.export_series(path, fmt)
        elif what == "tables":
            self.export_tables(path, {"md": "markdown"}.get(fmt, fmt))
        else:
            from app.ui.compare.export_dialog import DeckSlidesDialog
            dlg = DeckSlidesDialog(default_slides(self.view.comp), self.view)
            if dlg.exec():
                self.export_deck(path, dlg.slides())

    def export_chart(self, chart: str, path: str | Path, fmt: str | None = None,
                     size: tuple[int, int] = (1920, 1080), scale: float = 1.0,
                     mode: str | None = None, log_y: bool | None = None,
                     footer: bool | None = None) -> None:
        """Render in the light slide theme (the time range in view) and write off-thread."""
        v = self.view
        path = Path(path)
        fmt = (fmt or path.suffix.lstrip(".")).lower()
        try:
            if v.comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            if fmt not in FORMATS:
                raise ExportError(f"a chart is saved as PNG, SVG or PDF, not "
                                  f"{fmt or path.name!r}")
            check_writable(path)
            data = render_bytes(v.comp, chart, fmt, size, scale, mode=mode or v.mode,
                                time_range=v.panes.x_view(),
                                log_y=chart in v.panes.log_charts if log_y is None else log_y,
                                footer=self.footer_on() if footer is None else footer)
        except (ExportError, CompareError, KeyError, ValueError) as exc:
            self._export_failed(exc)
            return
        self._write(path, data)

    def copy_chart(self, chart: str, size: tuple[int, int] = (1920, 1080)) -> None:
        from app.ui.charts.render import copy_to_clipboard
        v = self.view
        if v.comp is not None:
            copy_to_clipboard(v.comp, chart, size, mode=v.mode, time_range=v.panes.x_view(),
                              log_y=chart in v.panes.log_charts)
            v.export_finished.emit("clipboard")

    def export_series(self, path: str | Path, fmt: str | None = None) -> None:
        comp = self.view.comp
        path = Path(path)
        fmt = (fmt or path.suffix.lstrip(".")).lower()
        try:
            if comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            check_writable(path)
            if fmt == "json":
                text = to_json(comp.series_json())
            elif fmt == "csv":
                text = series_csv(*comp.series_columns())
            else:
                raise ExportError(f"series are saved as CSV or JSON, not {fmt!r}")
        except (ExportError, ValueError) as exc:
            self._export_failed(exc)
            return
        self._write(path, text.encode("utf-8"))

    def export_tables(self, path: str | Path, fmt: str | None = None) -> None:
        v = self.view
        path = Path(path)
        fmt = fmt or {".md": "markdown", ".markdown": "markdown", ".html": "html",
                      ".htm": "html", ".csv": "csv"}.get(path.suffix.lower(), "")
        try:
            if v.comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            if fmt not in ("markdown", "html", "csv"):
                raise ExportError(f"tables are saved as Markdown, HTML or CSV, not "
                                  f"{path.suffix or path.name!r}")
            check_writable(path)
            text = tables_text(v.tables.all_tables(v.comp, v.base()), fmt)
        except (ExportError, CompareError) as exc:
            self._export_failed(exc)
            return
        self._write(path, text.encode("utf-8"))

    def export_deck(self, path: str | Path, slides: Sequence[str] | None = None) -> None:
        """Title slide, then the chosen ``slides`` (default: as ``versus export --deck``):
        a suite's matrices, one native chart per slide, the tables (written off-thread by
        python-pptx, from the same recipe as the CLI's deck)."""
        v = self.view
        path = Path(path)
        try:
            if v.comp is None:
                raise ExportError("there is nothing to export: no runs are open")
            check_writable(path)
            comp, base, foot = v.comp, v.base(), self.footer_on()
            charts, tables, lead = deck_parts(comp, base, slides or default_slides(comp),
                                              v.mode, tuple(v.panes.log_charts), foot,
                                              cost=v.suite_matrix.cost_key())
            sub = deck_subtitle(comp, base)
            title, runs = comp.title(), comp.deck_runs()
            results = key_results(comp, base)
            small = footer_text(comp) if foot else ""
        except (ExportError, CompareError) as exc:
            self._export_failed(exc)
            return
        v.tasks.submit(lambda: write_deck(path, title, sub, runs, charts, tables,
                                          footer=small, key_results=results,
                                          lead_tables=lead),
                       lambda p: v.export_finished.emit(str(p)), self._export_failed)

    def _write(self, path: Path, data: bytes) -> None:
        self.view.tasks.submit(lambda: write_bytes(path, data),
                               lambda p: self.view.export_finished.emit(str(p)),
                               self._export_failed)

    def _export_failed(self, exc: BaseException) -> None:
        text = str(exc) or type(exc).__name__
        if isinstance(exc, KeyError) and exc.args:
            text = str(exc.args[0])
        sentence = f"Nothing was exported: {text[0].lower() + text[1:] if text else text}."
        sentence = sentence.replace("..", ".")
        self.view.message(sentence, "Export failed", "export_error_box")
        self.view.export_failed.emit(sentence)
