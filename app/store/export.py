"""Writers for what a comparison exports: series as CSV/JSON, tables as Markdown/HTML/CSV,
and a whole comparison as a slide deck (.pptx, python-pptx).

No Qt and no analysis here: callers hand in plain data (``app.model.runset.Table``, columns
of numbers, chart images as PNG bytes already rendered by ``app.ui.render``). Every file is
written to a temporary name beside the target and renamed into place, so a failed export
leaves no half-written file; failures raise ExportError with a sentence.
"""
from __future__ import annotations

import csv
import html
import io
import json
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
    """One line of the title slide."""
    label: str
    colour: str
    facts: list[str] = field(default_factory=list)     # "host bench-1 (8 cores)", …


def write_deck(path: str | Path, title: str, subtitle: str, runs: Sequence[DeckRun],
               charts: Sequence[tuple[str, bytes]], tables: Sequence[Table],
               widescreen: bool = True) -> Path:
    """A .pptx: a title slide (runs with hosts, versions and profiles), one slide per chart
    (PNG bytes, ideally rendered at 1920×1080), one slide per table. Returns the path."""
    try:
        from pptx import Presentation
        from pptx.dml.color import RGBColor
        from pptx.util import Emu, Pt
    except ImportError:
        raise ExportError("slide decks need python-pptx: pip install python-pptx") from None
    check_writable(path)
    prs = Presentation()
    if widescreen:
        prs.slide_width, prs.slide_height = Emu(12_192_000), Emu(6_858_000)     # 16:9
    W, H = prs.slide_width, prs.slide_height
    blank = prs.slide_layouts[6]

    def rgb(hexcol: str) -> RGBColor:
        return RGBColor.from_string(hexcol.lstrip("#").upper())

    def textbox(slide, x, y, w, h, text, size, bold=False, colour="#222222"):
        tb = slide.shapes.add_textbox(x, y, w, h)
        tf = tb.text_frame
        tf.word_wrap = True
        p = tf.paragraphs[0]
        p.text = text
        p.font.size = Pt(size)
        p.font.bold = bold
        p.font.color.rgb = rgb(colour)
        return tf

    # title slide
    s = prs.slides.add_slide(blank)
    m = int(W * 0.06)
    textbox(s, m, int(H * 0.10), W - 2 * m, int(H * 0.15), title, 36, bold=True)
    if subtitle:
        textbox(s, m, int(H * 0.25), W - 2 * m, int(H * 0.08), subtitle, 18, colour="#555555")
    tf = None
    y = int(H * 0.36)
    for r in runs:
        tf = textbox(s, m, y, W - 2 * m, int(H * 0.12), "", 20)
        p = tf.paragraphs[0]
        run = p.add_run()
        run.text = "■ "
        run.font.size = Pt(20)
        run.font.color.rgb = rgb(r.colour)
        run = p.add_run()
        run.text = r.label
        run.font.size = Pt(20)
        run.font.bold = True
        run.font.color.rgb = rgb("#222222")
        if r.facts:
            p2 = tf.add_paragraph()
            p2.text = " · ".join(r.facts)
            p2.font.size = Pt(13)
            p2.font.color.rgb = rgb("#555555")
        y += int(H * 0.13)
    # charts
    for name, png in charts:
        s = prs.slides.add_slide(blank)
        try:
            pic = s.shapes.add_picture(io.BytesIO(png), 0, 0)
        except Exception as exc:          # python-pptx raises several types for bad images
            raise ExportError(f"the chart {name!r} is not a usable PNG ({exc})") from None
        scale = min(W / pic.width, H / pic.height)
        pic.width, pic.height = int(pic.width * scale), int(pic.height * scale)
        pic.left, pic.top = int((W - pic.width) / 2), int((H - pic.height) / 2)
    # tables
    for t in tables:
        s = prs.slides.add_slide(blank)
        textbox(s, m // 2, int(H * 0.03), W - m, int(H * 0.08), t.title, 24, bold=True)
        n_rows, n_cols = len(t.rows) + 1, len(t.header)
        top = int(H * 0.13)
        avail = H - top - int(H * (0.10 if t.notes else 0.04))
        row_h = min(int(avail / n_rows), Emu(370_000))
        shape = s.shapes.add_table(n_rows, n_cols, m // 2, top, W - m, row_h * n_rows)
        tbl = shape.table
        size = 14 if n_rows <= 14 and n_cols <= 8 else 11 if n_rows <= 20 else 9
        first_w = int((W - m) * (0.22 if n_cols > 4 else 0.3))
        tbl.columns[0].width = first_w
        for j in range(1, n_cols):
            tbl.columns[j].width = int((W - m - first_w) / (n_cols - 1))
        cells = [t.header] + t.rows
        classes = [[None] * n_cols] + t.classes
        for i, (row, cls) in enumerate(zip(cells, classes)):
            tbl.rows[i].height = row_h
            for j, (text, k) in enumerate(zip(row, cls)):
                c = tbl.cell(i, j)
                c.text = text
                para = c.text_frame.paragraphs[0]
                para.font.size = Pt(size)
                para.font.bold = i == 0
                if j >= 1 and (i > 0 or j >= 2):
                    from pptx.enum.text import PP_ALIGN
                    para.alignment = PP_ALIGN.RIGHT if j >= 2 else PP_ALIGN.LEFT
                c.fill.solid()
                if i == 0:
                    c.fill.fore_color.rgb = rgb("#EDEDED")
                    para.font.color.rgb = rgb("#222222")
                elif k:
                    c.fill.fore_color.rgb = rgb(CLASS_COLOURS[k])
                    para.font.color.rgb = rgb(CLASS_TEXT[k])
                else:
                    c.fill.fore_color.rgb = rgb("#FFFFFF")
                    para.font.color.rgb = rgb("#222222")
        if t.notes:
            textbox(s, m // 2, H - int(H * 0.09), W - m, int(H * 0.08), "   ".join(t.notes),
                    11, colour="#666666")
    buf = io.BytesIO()
    prs.save(buf)
    return write_bytes(path, buf.getvalue())
