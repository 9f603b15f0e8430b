"""`versus export` of charts and decks as real processes (drawn with Qt, so in the GUI's
job); bad input is refused with a sentence and the session files stay byte-for-byte."""
import pytest

from tests.cli.test_compare_cli import _digest
from tests.dbs import versus
from tests.recorded import build_run


@pytest.mark.pg
def test_export_chart_and_deck(recorded, tmp_path):
    from pptx import Presentation
    p1, p2 = recorded
    before = _digest(p1, p2)
    png = tmp_path / "t.png"
    r = versus("export", str(p1), str(p2), "--chart", "throughput", "--format", "png",
               "--size", "1280x720", "--out", str(png))
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    deck = tmp_path / "d.pptx"
    r = versus("export", str(p1), str(p2), "--align", "measure", "--deck", str(deck))
    assert r.returncode == 0, r.stderr
    prs = Presentation(str(deck))
    assert len(prs.slides) >= 1 + 3 + 1
    svg = tmp_path / "lat.svg"
    r = versus("export", str(p1), str(p2), "--chart", "latency", "--mode", "side-by-side",
               "--log-y", "--footer", "--out", str(svg))
    assert r.returncode == 0 and "log scale" in svg.read_text(), r.stderr
    assert _digest(p1, p2) == before


def test_bad_chart_and_deck_input_exits_2_with_a_sentence(tmp_path):
    good = build_run(tmp_path / "good.versus", "g", rate=100, p95=1, idle=50)
    other = build_run(tmp_path / "other.versus", "o", rate=100, p95=1, idle=50,
                      phases=("warm",))
    corrupt = tmp_path / "corrupt.versus"
    corrupt.write_bytes(b"garbage" * 500)
    before = _digest(good, other, corrupt)
    cases = [
        (("export", str(good), "--chart", "cpu", "--out", str(tmp_path / "no" / "x.png")),
         "the folder"),
        (("export", str(good), "--chart", "cpu", "--out", str(tmp_path)), "it is a folder"),
        (("export", str(good), "--chart", "cpu", "--size", "huge",
          "--out", str(tmp_path / "x.png")), "WIDTHxHEIGHT"),
        (("export", str(corrupt), "--deck", str(tmp_path / "x.pptx")), "damaged"),
        (("export", str(good), str(other), "--align", "measure", "--chart", "cpu",
          "--out", str(tmp_path / "y.png")), "cannot align"),
    ]
    for args, words in cases:
        r = versus(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    assert _digest(good, other, corrupt) == before
    assert not (tmp_path / "x.png").exists() and not (tmp_path / "y.png").exists()
