"""A deck as a presenter's slide program shows it (issue 20, item 1): rendered by LibreOffice
Impress, every run's line is on every chart slide, whatever the runs' lengths and order. Read
from the rendered pixels, not from the XML (the XML held both runs when Impress drew one)."""
import shutil
import subprocess

import pytest

from app.analysis.compare import load_comparison
from app.analysis.deck import deck_chart
from app.model.runset import RunRef
from app.store.export import write_deck
from tests.recorded import build_run

pytestmark = pytest.mark.skipif(
    not (shutil.which("soffice") and shutil.which("pdftoppm")),
    reason="needs LibreOffice Impress (libreoffice-impress) and pdftoppm (poppler-utils)")


def render(pptx, out_dir) -> list[tuple[int, int, bytes]]:
    """The deck's pages as (width, height, RGB bytes), drawn by LibreOffice at 30 dpi."""
    profile = out_dir / "lo-profile"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless",
                    "--convert-to", "pdf", "--outdir", str(out_dir), str(pptx)],
                   check=True, capture_output=True, timeout=600)
    pdf = out_dir / (pptx.stem + ".pdf")
    subprocess.run(["pdftoppm", "-r", "30", str(pdf), str(out_dir / "page")], check=True,
                   timeout=120)
    pages = []
    for f in sorted(out_dir.glob("page-*.ppm")):
        magic, w, h, _maxval, pix = f.read_bytes().split(maxsplit=4)
        assert magic == b"P6"
        pages.append((int(w), int(h), pix[:int(w) * int(h) * 3]))
    return pages


def plot_pixels(page, colour: str) -> int:
    """Pixels of ``colour`` below the legend (the top 30 % of a slide holds the title,
    subtitle and legend, whose swatches carry every run's colour whether drawn or not)."""
    w, h, pix = page
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    n = 0
    for y in range(h * 3 // 10, h * 9 // 10):
        row = pix[y * w * 3:(y + 1) * w * 3]
        for i in range(0, len(row), 3):
            if abs(row[i] - rgb[0]) + abs(row[i + 1] - rgb[1]) + abs(row[i + 2] - rgb[2]) < 60:
                n += 1
    return n


def test_a_short_run_before_a_long_one_shows_on_every_chart_slide(tmp_path):
    short = build_run(tmp_path / "short.versus", "s", rate=9000, p95=1.3, idle=70, seconds=10)
    long = build_run(tmp_path / "long.versus", "l", rate=12000, p95=3.5, idle=10, seconds=15)
    comp = load_comparison([RunRef(str(short)), RunRef(str(long))])
    charts = [deck_chart(comp, c) for c in ("throughput", "cpu")]
    deck = write_deck(tmp_path / "deck.pptx", comp.title(), "", comp.deck_runs(), charts, [])
    pages = render(deck, tmp_path)
    assert len(pages) == 1 + len(charts)
    for n, page in enumerate(pages[1:], start=2):
        for r in comp.runs:
            assert plot_pixels(page, r.colour) > 40, f"{r.label} is not drawn on slide {n}"
