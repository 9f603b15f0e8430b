"""Writers for what a comparison exports: series as CSV/JSON, tables as Markdown/HTML/CSV,
and a whole comparison as a slide deck (.pptx, python-pptx).

No Qt and no analysis here: callers hand in plain data (``app.model.runset.Table``, columns
of numbers, chart images as PNG bytes already rendered by ``app.ui.charts.render``). Every file is
written to a temporary name beside the target and renamed into place, so a failed export
leaves no half-written file; failures raise ExportError with a sentence.
"""
from __future__ import annotations

import csv
import html
import io
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from app.model.runset import CLASS_COLOURS, CLASS_TEXT, Table


class ExportError(Exception):
    """An export that could not be written, said as a sentence."""


# --- files --------------------------------------------------------------------------------
def _parent_folder(path: Path) -> Path:
    """The folder a file at ``path`` would go in; ExportError when there can be no such file."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ExportError(f"cannot write {path}: it is a folder; give a file name")
    if not parent.is_dir():
        raise ExportError(f"cannot write {path}: the folder {parent} does not exist")
    return parent


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write atomically; raise ExportError naming the path and the reason."""
    path = Path(path)
    parent = _parent_folder(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc} "
                          f"(choose a folder you can write to)") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def write_text(path: str | Path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def check_writable(path: str | Path) -> None:
    """Fail early, before any rendering, when ``path`` cannot be created."""
    path = Path(path)
    parent = _parent_folder(path)
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists()
                                                    and not os.access(path, os.W_OK)):
        raise ExportError(f"cannot write {path}: permission denied (choose a folder you can "
                          f"write to)")


# --- series -------------------------------------------------------------------------------
def series_csv(seconds: Sequence[int], columns: Sequence[tuple[str, Sequence[float | None]]]
               ) -> str:
    """One row per second, one column per (run, metric): ``t_s,<header>,…``; empty cells
    where a run has no value in that second."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["t_s"] + [h for h, _ in columns])
    cols = [c for _, c in columns]
    for i, s in enumerate(seconds):
        w.writerow([s] + ["" if c[i] is None else _num_text(c[i]) for c in cols])
    return buf.getvalue()


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False, allow_nan=False,
                      default=_json_default) + "\n"


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"cannot write {type(o).__name__} as JSON")


def _num_text(x: float) -> str:
    if x != x:
        return ""
    return repr(round(x, 6)) if isinstance(x, float) else str(x)


# --- tables -------------------------------------------------------------------------------
_MARK = {"better": "▲", "worse": "▼"}


def table_markdown(t: Table, marks: bool = True) -> str:
    """A GitHub-flavoured Markdown table. Markdown has no cell colours, so ratio cells that
    are better or worse carry ▲ / ▼ (``marks=False`` leaves the numbers bare)."""
    def esc(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    out = [f"**{esc(t.title)}**", ""] if t.title else []
    out.append("| " + " | ".join(esc(h) for h in t.header) + " |")
    aligns = ["---" if i == 0 else "---:" for i in range(len(t.header))]
    if len(t.header) > 1 and t.header[1] == "unit":
        aligns[1] = "---"
    out.append("| " + " | ".join(aligns) + " |")
    for row, cls in zip(t.rows, t.classes):
        cells = []
        for c, k in zip(row, cls):
            mark = _MARK.get(k or "") if marks else None
            cells.append(esc(f"{c} {mark}" if mark else c))
        out.append("| " + " | ".join(cells) + " |")
    if t.notes:
        out.append("")
        out += [f"_{esc(n)}_  " for n in t.notes]
    return "\n".join(out) + "\n"


def table_csv(t: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(t.header)
    for row in t.rows:
        w.writerow(row)
    return buf.getvalue()


def table_html(t: Table, standalone: bool = False) -> str:
    """An HTML table with inline colours (pastes into slides, mail and blog editors)."""
    st_cell = "padding:4px 10px;border:1px solid #d0d0d0;"
    parts = ['<table style="border-collapse:collapse;font-family:sans-serif;font-size:14px">']
    if t.title:
        parts.append(f'<caption style="font-weight:600;text-align:left;padding:4px 0">'
                     f'{html.escape(t.title)}</caption>')
    parts.append("<thead><tr>" + "".join(
        f'<th style="{st_cell}background:#f3f3f3;text-align:{"left" if i < 2 else "right"}">'
        f"{html.escape(h)}</th>" for i, h in enumerate(t.header)) + "</tr></thead><tbody>")
    for row, cls in zip(t.rows, t.classes):
        cells = []
        for i, (c, k) in enumerate(zip(row, cls)):
            style = st_cell + f'text-align:{"left" if i < 2 and not _numeric(c) else "right"};'
            if k:
                style += f"background:{CLASS_COLOURS[k]};color:{CLASS_TEXT[k]};"
            cells.append(f'<td style="{style}" class="{k or ""}">{html.escape(c)}</td>')
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table>")
    if t.notes:
        parts.append('<p style="font-family:sans-serif;font-size:12px;color:#555">'
                     + "<br>".join(html.escape(n) for n in t.notes) + "</p>")
    body = "\n".join(parts)
    if standalone:
        return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
                f"{html.escape(t.title)}</title></head><body>\n{body}\n</body></html>\n")
    return body + "\n"


def _numeric(s: str) -> bool:
    return s.replace(",", "").replace(".", "", 1).lstrip("-").isdigit()


def tables_text(tables: Iterable[Table], fmt: str) -> str:
    """Several tables in one document: ``markdown``, ``html`` or ``csv`` (blank-line apart,
    each CSV block preceded by its title as a one-cell row)."""
    tables = list(tables)
    if fmt == "markdown":
        return "\n".join(table_markdown(t) for t in tables)
    if fmt == "html":
        body = "\n".join(table_html(t) for t in tables)
        return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Versus comparison"
                f"</title></head><body>\n{body}</body></html>\n")
    if fmt == "csv":
        chunks = []
        for t in tables:
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow([t.title])
            chunks.append(buf.getvalue() + table_csv(t))
        return "\n".join(chunks)
    raise ValueError(f"unknown table format {fmt!r}")


# --- slide deck ---------------------------------------------------------------------------
@dataclass
class DeckRun:
    """One row of the title slide's table of runs."""
    label: str
    colour: str
    facts: list[str] = field(default_factory=list)     # server, host, profile, workload


@dataclass
class DeckSeries:
    label: str
    colour: str
    style: str                 # "solid" | "dash" | "dot" | "dashdot"
    xs: list[float]
    ys: list[float]


@dataclass
class DeckPanel:
    """One chart on a slide: every run (overlay) or one run (side by side)."""
    title: str
    colour: str
    series: list[DeckSeries]
    marks: list[tuple[float, str]] = field(default_factory=list)    # phase starts


@dataclass
class DeckChart:
    """A chart the deck draws as a native, editable PowerPoint chart (XY lines): the data,
    and axes already chosen to hold all of it in at most eight round steps."""
    name: str
    title: str
    subtitle: str
    y_title: str
    x_title: str
    panels: list[DeckPanel]
    y_range: tuple[float, float, float]      # lo, hi, step (log: decades as 10**lo … 10**hi)
    x_range: tuple[float, float, float]      # seconds
    log_y: bool = False
    footer: str = ""


MAX_TABLE_ROWS = 14             # more rows continue on the next slide
SLIDE_PX = 1920                 # text sizes are chosen for a 1920-pixel-wide projection


def _pt_for_px(px: float) -> float:
    """Points that show as ``px`` pixels when the 13.33-inch slide is shown 1920 wide."""
    return px * 13.333 * 72 / SLIDE_PX


def write_deck(path: str | Path, title: str, subtitle: str, runs: Sequence[DeckRun],
               charts: Sequence[DeckChart | tuple[str, bytes]], tables: Sequence[Table],
               widescreen: bool = True, footer: str = "",
               key_results: Sequence[str] = (), lead_tables: Sequence[Table] = ()) -> Path:
    """A .pptx: a title slide (runs with server, host, profile and parameters, and the key
    results), the ``lead_tables`` (a suite's matrices), one slide per chart (a native line chart from a DeckChart, or a picture from
    PNG bytes), one per table (continued on more slides when long). No title overlaps what
    is under it: boxes are placed below the lines their text needs. Returns the path."""
    try:
        from pptx import Presentation
        from pptx.util import Emu
    except ImportError:
        raise ExportError("slide decks need python-pptx: pip install python-pptx") from None
    check_writable(path)
    prs = Presentation()
    if widescreen:
        prs.slide_width, prs.slide_height = Emu(12_192_000), Emu(6_858_000)     # 16:9
    deck = _Deck(prs)
    deck.title_slide(title, subtitle, runs, key_results, footer)
    for t in lead_tables:                 # a suite's tests x runs matrices, before the charts
        deck.table_slides(t, footer)
    for chart in charts:
        if isinstance(chart, DeckChart):
            deck.chart_slide(chart, footer)
        else:
            deck.picture_slide(*chart)
    for t in tables:
        deck.table_slides(t, footer)
    buf = io.BytesIO()
    prs.save(buf)
    return write_bytes(path, buf.getvalue())


class _Deck:
    """Slide layout in EMU; text in points sized for a projector (18–24 px at 1920 wide)."""

    TITLE_PT = 24
    BODY_PT = round(_pt_for_px(22))        # 11 pt ≈ 22 px
    SMALL_PT = round(_pt_for_px(18))       # 9 pt ≈ 18 px
    TEXT, MUTED = "#222222", "#555555"

    def __init__(self, prs) -> None:
        from pptx.util import Emu
        self.prs = prs
        self.W, self.H = prs.slide_width, prs.slide_height
        self.m = Emu(int(self.W * 0.045))
        self.blank = prs.slide_layouts[6]

    # helpers
    @staticmethod
    def rgb(hexcol: str):
        from pptx.dml.color import RGBColor
        return RGBColor.from_string(hexcol.lstrip("#").upper())

    def lines_needed(self, text: str, size_pt: float, width_emu: int,
                     bold: bool = False) -> int:
        """Lines a text wraps to in a box ``width_emu`` wide: words wrapped greedily, with a
        wide average glyph (0.6 em, bold 0.64) so the estimate errs towards more lines."""
        em = size_pt * (0.64 if bold else 0.6)
        room = max(4.0, width_emu / 12700 / em)          # glyphs per line
        lines = 0
        for para in (text or " ").split("\n"):
            n, used = 1, 0.0
            for word in para.replace("-", "- ").split(" "):
                need = len(word) + (1 if used else 0)
                if used and used + need > room:
                    n, used = n + 1, 0.0
                    need = len(word)
                while need > room:                     # a word longer than a line
                    n, need = n + 1, need - room
                used += need
            lines += n
        return lines

    def text(self, slide, x, y, w, text: str, size: float, bold=False, colour=TEXT,
             align=None) -> int:
        """A text box whose height fits its lines; returns its bottom (EMU)."""
        from pptx.enum.text import MSO_AUTO_SIZE
        from pptx.util import Pt
        lines = self.lines_needed(text, size, w - 2 * 91440, bold)
        h = int(lines * size * 1.3 * 12700) + 2 * 45720
        tb = slide.shapes.add_textbox(x, y, w, h)
        tf = tb.text_frame
        tf.word_wrap = True
        tf.auto_size = MSO_AUTO_SIZE.NONE
        for i, line in enumerate(text.split("\n")):
            p = tf.paragraphs[0] if i == 0 else tf.add_paragraph()
            p.text = line
            p.font.size = Pt(size)
            p.font.bold = bold
            p.font.color.rgb = self.rgb(colour)
            if align is not None:
                p.alignment = align
        return y + h

    def row_height(self, cells: Sequence[str], widths: Sequence[int], size: float) -> int:
        """A table row tall enough for its longest cell (a renderer grows a row that is
        not, pushing the table over what follows)."""
        pad = 2 * 91440                                       # the cell's text margins
        lines = max(self.lines_needed(str(c), size, max(1, cw - pad))
                    for c, cw in zip(cells, widths))
        return int(lines * size * 1.25 * 12700) + 2 * 45720 + 20000

    def slide_title(self, slide, text: str) -> int:
        return self.text(slide, self.m, int(self.H * 0.04), self.W - 2 * self.m, text,
                         self.TITLE_PT, bold=True)

    def footer(self, slide, text: str) -> int:
        """Small print at the bottom; returns its top (content must end above it)."""
        if not text:
            return self.H - int(self.H * 0.03)
        w = self.W - 2 * self.m
        h = int(self.lines_needed(text, self.SMALL_PT, w) * self.SMALL_PT * 1.3 * 12700
                ) + 2 * 45720
        top = self.H - h - int(self.H * 0.02)
        self.text(slide, self.m, top, w, text, self.SMALL_PT, colour=self.MUTED)
        return top

    # slides
    def fitting_size(self, text: str, sizes: Sequence[float], width: int, lines: int,
                     bold: bool = True) -> float:
        """The largest of ``sizes`` at which ``text`` takes at most ``lines`` lines."""
        return next((z for z in sizes if self.lines_needed(text, z, width, bold) <= lines),
                    sizes[-1])

    def title_slide(self, title, subtitle, runs, key_results, footer) -> None:
        from pptx.util import Pt
        s = self.prs.slides.add_slide(self.blank)
        w = self.W - 2 * self.m
        size = self.fitting_size(title, (32, 28, 24, 20), w - 2 * 91440, 2)
        y = self.text(s, self.m, int(self.H * 0.07), w, title, size, bold=True)
        if subtitle:
            y = self.text(s, self.m, y, w, subtitle, 16, colour=self.MUTED)
        # the table of runs is the configuration: no footer repeating it here
        bottom = self.H - int(self.H * 0.05)
        y += int(self.H * 0.03)
        results = "\n".join(key_results)
        head = ["", "run", "server", "host", "configuration", "workload"]
        rows = [[""] + [r.label] + (list(r.facts) + [""] * 4)[:4] for r in runs]
        widths = [int(w * f) for f in (0.03, 0.2, 0.17, 0.14, 0.16, 0.30)]
        for body in (self.BODY_PT, self.SMALL_PT):   # smaller type if the results need room
            heights = [self.row_height(row, widths, body) for row in [head] + rows]
            res_h = (int(self.lines_needed(results, body + 2, w) * (body + 2) * 1.3 * 12700)
                     + int(Pt(16).emu * 1.6)) if results else 0
            if y + sum(heights) + int(self.H * 0.04) + res_h <= bottom:
                break
        if runs:
            shape = s.shapes.add_table(len(rows) + 1, len(head), self.m, y, w, sum(heights))
            tbl = shape.table
            for j, cw in enumerate(widths):
                tbl.columns[j].width = cw
            for i, row in enumerate([head] + rows):
                tbl.rows[i].height = heights[i]
                for j, text in enumerate(row):
                    c = tbl.cell(i, j)
                    c.text = text
                    para = c.text_frame.paragraphs[0]
                    para.font.size = Pt(body if i else self.SMALL_PT)
                    para.font.bold = i == 0 or j == 1
                    para.font.color.rgb = self.rgb(self.TEXT if i else self.MUTED)
                    c.fill.solid()
                    c.fill.fore_color.rgb = self.rgb(
                        runs[i - 1].colour if (i and j == 0) else "#F3F3F3" if i == 0
                        else "#FFFFFF")
            y += sum(heights) + int(self.H * 0.04)
        if results:
            y = self.text(s, self.m, y, w, "Results", 16, bold=True)
            self.text(s, self.m, y, w, results, body + 2)

    def picture_slide(self, name: str, png: bytes) -> None:
        s = self.prs.slides.add_slide(self.blank)
        try:
            pic = s.shapes.add_picture(io.BytesIO(png), 0, 0)
        except Exception as exc:          # python-pptx raises several types for bad images
            raise ExportError(f"the chart {name!r} is not a usable PNG ({exc})") from None
        scale = min(self.W / pic.width, self.H / pic.height)
        pic.width, pic.height = int(pic.width * scale), int(pic.height * scale)
        pic.left, pic.top = int((self.W - pic.width) / 2), int((self.H - pic.height) / 2)

    def chart_slide(self, c: DeckChart, footer: str) -> None:
        s = self.prs.slides.add_slide(self.blank)
        y = self.slide_title(s, c.title)
        if c.subtitle:
            y = self.text(s, self.m, y, self.W - 2 * self.m, c.subtitle, self.SMALL_PT + 1,
                          colour=self.MUTED)
        bottom = self.footer(s, c.footer or footer)
        n = len(c.panels)
        gap = int(self.W * 0.01)
        w = int((self.W - 2 * self.m - gap * (n - 1)) / max(1, n))
        for i, panel in enumerate(c.panels):
            x = self.m + i * (w + gap)
            _native_chart(self, s, c, panel, x, y + int(self.H * 0.01), w,
                          bottom - y - int(self.H * 0.02), many=n > 1, first=i == 0)

    def table_slides(self, t: Table, footer: str) -> None:
        from pptx.enum.text import PP_ALIGN
        from pptx.util import Pt
        chunks = [list(range(i, min(i + MAX_TABLE_ROWS, len(t.rows))))
                  for i in range(0, max(1, len(t.rows)), MAX_TABLE_ROWS)]
        for n, rows in enumerate(chunks):
            s = self.prs.slides.add_slide(self.blank)
            title = t.title + (f" (continued, {n + 1}/{len(chunks)})" if n else "")
            y = self.slide_title(s, title) + int(self.H * 0.015)
            notes = "   ".join(t.notes) if n == len(chunks) - 1 else ""
            bottom = self.footer(s, "  ".join(x for x in (notes, footer) if x))
            n_rows, n_cols = len(rows) + 1, len(t.header)
            w = self.W - 2 * self.m
            size = self.BODY_PT + 1 if n_rows <= 10 and n_cols <= 7 else self.BODY_PT \
                if n_cols <= 9 else self.SMALL_PT
            first_w = int(w * (0.22 if n_cols > 4 else 0.3))
            widths = [first_w] + [int((w - first_w) / (n_cols - 1))] * (n_cols - 1)
            cells = [t.header] + [t.rows[i] for i in rows]
            classes = [[None] * n_cols] + [t.classes[i] for i in rows]
            heights = [self.row_height(row, widths, size) for row in cells]
            room = bottom - y - int(self.H * 0.02)
            if sum(heights) > room:          # shrink the type until the rows fit
                size = self.SMALL_PT
                heights = [self.row_height(row, widths, size) for row in cells]
            shape = s.shapes.add_table(n_rows, n_cols, self.m, y, w, sum(heights))
            tbl = shape.table
            for j, cw in enumerate(widths):
                tbl.columns[j].width = cw
            for i, (row, cls) in enumerate(zip(cells, classes)):
                tbl.rows[i].height = heights[i]
                for j, (text, k) in enumerate(zip(row, cls)):
                    c = tbl.cell(i, j)
                    c.text = text
                    para = c.text_frame.paragraphs[0]
                    para.font.size = Pt(size)
                    para.font.bold = i == 0
                    if j >= 1 and (i > 0 or j >= 2):
                        para.alignment = PP_ALIGN.RIGHT if j >= 2 else PP_ALIGN.LEFT
                    c.fill.solid()
                    if i == 0:
                        c.fill.fore_color.rgb = self.rgb("#EDEDED")
                        para.font.color.rgb = self.rgb(self.TEXT)
                    elif k:
                        c.fill.fore_color.rgb = self.rgb(CLASS_COLOURS[k])
                        para.font.color.rgb = self.rgb(CLASS_TEXT[k])
                    else:
                        c.fill.fore_color.rgb = self.rgb("#FFFFFF")
                        para.font.color.rgb = self.rgb(self.TEXT)


_DASHES = {"dash": "DASH", "dot": "ROUND_DOT", "dashdot": "DASH_DOT"}


def _native_chart(deck: _Deck, slide, c: DeckChart, panel: DeckPanel, x: int, y: int, w: int,
                  h: int, many: bool, first: bool) -> None:
    """An XY line chart (editable in PowerPoint and LibreOffice) with the DeckChart's axes."""
    from pptx.chart.data import XyChartData
    from pptx.enum.chart import XL_CHART_TYPE, XL_LABEL_POSITION, XL_LEGEND_POSITION, \
        XL_MARKER_STYLE, XL_TICK_LABEL_POSITION
    from pptx.enum.dml import MSO_LINE_DASH_STYLE
    from pptx.oxml.ns import qn
    from pptx.oxml.xmlchemy import OxmlElement
    from pptx.util import Pt

    x_lo, x_hi, x_step = c.x_range
    # the axis starts and ends on whole steps: ticks fall on 0, 10, 20 …, not −12, −2, 8 …
    x_lo = math.floor(x_lo / x_step) * x_step
    y_lo, y_hi, y_step = c.y_range
    # clock formats cannot show time before zero (runs aligned on a phase): plain seconds,
    # or whole minutes for long runs, then
    numeric = x_lo < 0
    per = 60.0 if numeric and x_hi - x_lo > 600 else 1.0 if numeric else 86400.0
    if numeric and per == 60.0:
        x_step = max(60.0, round(x_step / 60.0) * 60.0)
        x_lo = math.floor(x_lo / x_step) * x_step

    def xscale(v: float) -> float:
        return v / per
    y_bottom = 10 ** y_lo if c.log_y else y_lo
    y_top = 10 ** y_hi if c.log_y else y_hi
    points = [[(xscale(px), py) for px, py in zip(ser.xs, ser.ys)] for ser in panel.series]
    # a phase start: a grey vertical line of 2 points
    points += [[(xscale(t), y_bottom), (xscale(t), y_top)] for t, _name in panel.marks]
    # Every series as long as the longest, padded with blank points: LibreOffice reads the
    # first series' point count as every series' and drops a longer series after a shorter
    # one (a 10 s run before a 15 s run showed only the second run)
    longest = max((len(p) for p in points), default=0)
    data = XyChartData()
    for label, pts in zip([ser.label for ser in panel.series] + [" "] * len(panel.marks),
                          points):
        sd = data.add_series(label)
        for px, py in pts + [(None, None)] * (longest - len(pts)):
            sd.add_data_point(px, py)
    gf = slide.shapes.add_chart(XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS, x, y, w, h, data)
    chart = gf.chart
    chart.font.size = Pt(deck.SMALL_PT + 1)
    chart.font.color.rgb = deck.rgb(deck.TEXT)
    if many:
        chart.has_title = True
        chart.chart_title.text_frame.text = panel.title
        para = chart.chart_title.text_frame.paragraphs[0]
        para.font.size = Pt(deck.BODY_PT)
        para.font.color.rgb = deck.rgb(panel.colour)
    else:
        chart.has_title = False
    chart.has_legend = True
    chart.legend.position = XL_LEGEND_POSITION.TOP
    chart.legend.include_in_layout = False
    chart.legend.font.size = Pt(deck.BODY_PT)
    # the phase-mark series have no legend entry
    legend = chart.legend._element
    pos = legend.find(qn("c:legendPos"))
    for k in range(len(panel.series), len(panel.series) + len(panel.marks)):
        entry = OxmlElement("c:legendEntry")
        idx = OxmlElement("c:idx")
        idx.set("val", str(k))
        dele = OxmlElement("c:delete")
        dele.set("val", "1")
        entry.append(idx)
        entry.append(dele)
        (pos.addnext(entry) if pos is not None else legend.insert(0, entry))
        pos = entry
    plot = chart.plots[0]
    for i, ser in enumerate(plot.series):
        ser.smooth = False
        ser.marker.style = XL_MARKER_STYLE.NONE
        line = ser.format.line
        if i < len(panel.series):
            spec = panel.series[i]
            line.color.rgb = deck.rgb(spec.colour)
            line.width = Pt(2.25)
            if spec.style in _DASHES:
                line.dash_style = getattr(MSO_LINE_DASH_STYLE, _DASHES[spec.style])
        else:
            line.color.rgb = deck.rgb("#9A9A9A")
            line.width = Pt(1)
            line.dash_style = MSO_LINE_DASH_STYLE.DASH
            _t, name = panel.marks[i - len(panel.series)]
            late = (_t - x_lo) > 0.85 * (x_hi - x_lo)
            pt = ser.points[1]
            pt.data_label.has_text_frame = True
            pt.data_label.text_frame.text = name
            pt.data_label.position = XL_LABEL_POSITION.LEFT if late else XL_LABEL_POSITION.RIGHT
            pt.data_label.font.size = Pt(deck.SMALL_PT)
            pt.data_label.font.color.rgb = deck.rgb(deck.MUTED)
    va = chart.value_axis
    va.has_major_gridlines = True
    va.major_gridlines.format.line.color.rgb = deck.rgb("#E3E3E3")
    va.tick_labels.font.size = Pt(deck.SMALL_PT + 1)
    va.tick_label_position = XL_TICK_LABEL_POSITION.LOW
    if c.log_y:
        scaling = va._element.find(qn("c:scaling"))
        base = OxmlElement("c:logBase")
        base.set("val", "10")
        scaling.insert(0, base)
        va.minimum_scale, va.maximum_scale = y_bottom, y_top
        va.tick_labels.number_format = "General"
    else:
        va.minimum_scale, va.maximum_scale, va.major_unit = y_lo, y_hi, y_step
        decimals = max(0, -int(math.floor(math.log10(y_step)))) if y_step < 1 else 0
        va.tick_labels.number_format = "#,##0" + ("." + "0" * decimals if decimals else "")
    va.tick_labels.number_format_is_linked = False
    if first:
        va.has_title = True
        va.axis_title.text_frame.text = c.y_title
        va.axis_title.text_frame.paragraphs[0].font.size = Pt(deck.SMALL_PT + 1)
    xa = chart.category_axis          # the X value axis of an XY chart
    xa.minimum_scale, xa.maximum_scale = xscale(x_lo), xscale(x_hi)
    xa.major_unit = xscale(x_step)
    xa.has_major_gridlines = True
    xa.major_gridlines.format.line.color.rgb = deck.rgb("#EEEEEE")
    xa.tick_labels.font.size = Pt(deck.SMALL_PT + 1)
    xa.tick_labels.number_format = "0" if numeric else (
        "[h]:mm:ss" if x_hi >= 3600 else "[m]:ss")
    xa.tick_labels.number_format_is_linked = False
    xa.tick_label_position = XL_TICK_LABEL_POSITION.LOW
    xa.has_title = True
    xa.axis_title.text_frame.text = c.x_title + (
        " (min)" if per == 60.0 else " (s)" if numeric else " (h:mm:ss)")
    xa.axis_title.text_frame.paragraphs[0].font.size = Pt(deck.SMALL_PT + 1)
