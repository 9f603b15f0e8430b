"""Charts rendered headless for export: PNG of the asked size, SVG that parses and renders,
PDF that Debian's pdftoppm renders, a deck that python-pptx reopens."""
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from app.analysis.compare import load_comparison
from app.analysis.metrics import CHARTS
from app.model.runset import RunRef, run_colour
from tests.recorded import build_run


@pytest.fixture
def comp(tmp_path, qapp):
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50,
                  phases=("rampup", "measure"))
    b = build_run(tmp_path / "b.versus", "rb", rate=1300, p95=1.5, idle=40,
                  phases=("rampup", "measure"), version="PostgreSQL 17.2")
    return load_comparison([RunRef(str(a)), RunRef(str(b))], align="measure")


def test_png_has_the_asked_size_and_hidpi_scale(comp):
    from PySide6.QtGui import QImage
    from app.ui.charts.render import render_png_bytes
    for size, scale, want in (((1920, 1080), 1.0, (1920, 1080)),
                              ((1280, 720), 1.0, (1280, 720)),
                              ((1280, 720), 2.0, (2560, 1440)),
                              ((800, 600), 1.0, (800, 600))):
        img = QImage.fromData(render_png_bytes(comp, "throughput", size, scale))
        assert (img.width(), img.height()) == want


def test_png_shows_both_runs_in_their_colours(comp):
    from PySide6.QtGui import QColor
    from app.ui.charts.render import render_image
    img = render_image(comp, "throughput", (1280, 720))
    seen = {img.pixelColor(x, y).name() for x in range(0, 1280, 2) for y in range(0, 720, 2)}

    def near(hexcol):
        c = QColor(hexcol)
        return any(abs(QColor(s).red() - c.red()) + abs(QColor(s).green() - c.green())
                   + abs(QColor(s).blue() - c.blue()) < 30 for s in seen)
    assert near(run_colour(0)) and near(run_colour(1))


def test_every_chart_renders(comp):
    from app.ui.charts.render import render_image
    for name in CHARTS:
        img = render_image(comp, name, (640, 360))
        assert img.width() == 640


def test_svg_parses_and_renders(comp, tmp_path):
    from PySide6.QtGui import QImage, QPainter, QColor
    from PySide6.QtSvg import QSvgRenderer
    from app.ui.charts.render import render_to_file
    out = render_to_file(comp, "latency", tmp_path / "lat.svg", size=(1280, 720))
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    text = out.read_text()
    assert "PostgreSQL 17.2" in text and "Latency" in text
    r = QSvgRenderer(str(out))
    assert r.isValid()
    img = QImage(640, 360, QImage.Format.Format_ARGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    r.render(p)
    p.end()
    dark = sum(1 for x in range(0, 640, 4) for y in range(0, 360, 4)
               if img.pixelColor(x, y).lightness() < 200)
    assert dark > 50


@pytest.mark.skipif(not shutil.which("pdftoppm"), reason="needs poppler-utils")
def test_pdf_renders_with_pdftoppm(comp, tmp_path):
    from PySide6.QtGui import QImage
    from app.ui.charts.render import render_to_file
    pdf = render_to_file(comp, "cpu", tmp_path / "cpu.pdf", size=(1920, 1080))
    assert pdf.read_bytes().startswith(b"%PDF")
    r = subprocess.run(["pdftoppm", "-png", "-r", "48", "-singlefile", str(pdf),
                        str(tmp_path / "page")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    img = QImage(str(tmp_path / "page.png"))
    # 1920×1080 px at 96 dpi is 20×11.25 in; at 48 dpi that is 960×540
    assert (img.width(), img.height()) == (960, 540)


def test_deck_of_a_comparison(comp, tmp_path):
    from pptx import Presentation
    from app.store.export import write_deck
    from app.ui.charts.render import render_png_bytes
    charts = [(c, render_png_bytes(comp, c, (1280, 720))) for c in ("throughput", "latency",
                                                                   "cpu")]
    tables = comp.tables(0)
    out = write_deck(tmp_path / "cmp.pptx", comp.title(), "aligned on measure",
                     comp.deck_runs(), charts, tables)
    prs = Presentation(str(out))
    assert len(prs.slides) == 1 + 3 + len(tables) and len(tables) >= 2


def test_bad_sizes_and_formats(comp, tmp_path):
    from app.store.export import ExportError
    from app.ui.charts.render import parse_size, render_to_file
    assert parse_size("1280x720") == (1280, 720) and parse_size("640×480") == (640, 480)
    for bad in ("big", "0x10", "1920", "99999x10"):
        with pytest.raises(ValueError, match="WIDTHxHEIGHT"):
            parse_size(bad)
    with pytest.raises(ExportError, match="unknown chart format"):
        render_to_file(comp, "cpu", tmp_path / "x.gif")
    with pytest.raises(KeyError, match="no chart called 'nope'"):
        render_to_file(comp, "nope", tmp_path / "x.png")
