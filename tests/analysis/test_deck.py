"""The slide deck (issue 14, item 7): native, editable line charts whose axes hold every
value in at most eight round steps, log-scale latency on request, a footer with the runs'
configuration and the numbers' source, a title slide that says what was compared and what
came out, long tables continued, and no box on any slide over another."""
import pytest
from pptx import Presentation
from pptx.enum.chart import XL_CHART_TYPE
from pptx.oxml.ns import qn
from pptx.util import Pt

from app.analysis.compare import load_comparison
from app.analysis.deck import deck_chart, footer_text, key_results, thin
from app.model.runset import RunRef
from app.store.export import write_deck
from tests.recorded import build_run


@pytest.fixture
def comp(tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=9000, p95=1.3, idle=70,
                  phases=("rampup", "measure"), seconds=30)
    b = build_run(tmp_path / "b.versus", "rb", rate=27000, p95=3.5, idle=10,
                  phases=("rampup", "measure"), seconds=30, version="PostgreSQL 17.2")
    return load_comparison([RunRef(str(a)), RunRef(str(b))], align="measure")


def make_deck(comp, tmp_path, **kw):
    names = comp.deck_charts()
    charts = [deck_chart(comp, c, kw.get("mode", "overlay"),
                         log_y=kw.get("log", False) and c == "latency",
                         footer=kw.get("footer", False)) for c in names]
    out = write_deck(tmp_path / "d.pptx", comp.title(), "aligned on measure",
                     comp.deck_runs(), charts, comp.tables(0),
                     footer=footer_text(comp) if kw.get("footer") else "",
                     key_results=key_results(comp, 0))
    return Presentation(str(out)), names


def rect(sh):
    return sh.left, sh.top, sh.left + sh.width, sh.top + sh.height


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_charts_are_native_line_charts_that_hold_all_data(comp, tmp_path):
    prs, names = make_deck(comp, tmp_path)
    chart_slides = list(prs.slides)[1:1 + len(names)]
    for slide, name in zip(chart_slides, names):
        assert not any(sh.shape_type == 13 for sh in slide.shapes)        # no pictures
        frames = [sh for sh in slide.shapes if sh.has_chart]
        assert len(frames) == 1, name
        chart = frames[0].chart
        assert chart.chart_type == XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS
        va = chart.value_axis
        data = [s for s in chart.plots[0].series if s.name.strip()]     # not phase marks
        ys = [y for s in data for y in s.values]
        assert va.minimum_scale <= 0 <= min(ys) and max(ys) <= va.maximum_scale, name
        assert (va.maximum_scale - va.minimum_scale) / va.major_unit <= 7 + 1e-9
        xa = chart.category_axis
        span = xa.maximum_scale - xa.minimum_scale
        assert span / xa.major_unit <= 8
        assert va.tick_labels.font.size >= Pt(9)        # 18 px and more at 1920 wide
    # the throughput series are the runs' own points (thinned only when long)
    thr = prs.slides[1 + names.index("throughput")].shapes
    chart = next(sh.chart for sh in thr if sh.has_chart)
    vals = [list(s.values) for s in chart.plots[0].series if s.name.strip()]
    assert set(vals[0]) == {9000.0} and set(vals[1]) == {27000.0}


def test_no_box_overlaps_another_on_any_slide(comp, tmp_path):
    prs, _ = make_deck(comp, tmp_path, footer=True)
    W, H = prs.slide_width, prs.slide_height
    for n, slide in enumerate(prs.slides):
        shapes = list(slide.shapes)
        for i, a in enumerate(shapes):
            ra = rect(a)
            assert ra[0] >= 0 and ra[1] >= 0 and ra[2] <= W and ra[3] <= H, (n, a.name)
            for b in shapes[i + 1:]:
                assert not overlaps(ra, rect(b)), (n, a.name, b.name)


def test_log_latency_footer_and_title_slide(comp, tmp_path):
    prs, names = make_deck(comp, tmp_path, log=True, footer=True)
    lat = prs.slides[1 + names.index("latency")]
    chart = next(sh.chart for sh in lat.shapes if sh.has_chart)
    scaling = chart.value_axis._element.find(qn("c:scaling"))
    assert scaling.find(qn("c:logBase")).get("val") == "10"
    texts = " ".join(sh.text_frame.text for sh in lat.shapes if sh.has_text_frame)
    assert "PostgreSQL 17.2" in texts and "percentiles" in texts.lower()      # the footer
    title = prs.slides[0]
    tbl = next(sh.table for sh in title.shapes if sh.has_table)
    assert tbl.cell(2, 2).text == "PostgreSQL 17.2"
    body = " ".join(sh.text_frame.text for sh in title.shapes if sh.has_text_frame)
    assert "QPS in measure" in body and "3.00× run 1" in body


def test_side_by_side_panels_share_one_range(comp, tmp_path):
    prs, names = make_deck(comp, tmp_path, mode="side-by-side")
    slide = prs.slides[1 + names.index("throughput")]
    charts = [sh.chart for sh in slide.shapes if sh.has_chart]
    assert len(charts) == 2
    ranges = {(c.value_axis.minimum_scale, c.value_axis.maximum_scale) for c in charts}
    assert len(ranges) == 1 and max(ranges)[1] >= 27000


def test_long_tables_continue_on_the_next_slide(tmp_path):
    from app.model.runset import Table
    t = Table("a long table", ["metric", "unit", "1", "2", "2 / 1"])
    for i in range(30):
        t.add([f"m{i}", "/s", "1", "2", "2.00"])
    prs = Presentation(str(write_deck(tmp_path / "t.pptx", "t", "", [], [], [t])))
    tables = [next(sh.table for sh in s.shapes if sh.has_table) for s in list(prs.slides)[1:]]
    assert [len(x.rows) - 1 for x in tables] == [14, 14, 2]
    assert "continued" in prs.slides[2].shapes[0].text_frame.text


def test_thin_keeps_every_peak():
    t = list(range(10_000))
    v = [1.0] * 10_000
    v[1234], v[8765] = 50.0, -3.0
    xs, ys = thin(t, v, 400)
    assert len(xs) <= 400 and 50.0 in ys and -3.0 in ys and xs == sorted(xs)


def test_a_deck_of_one_run_says_nothing_about_ratios(tmp_path):
    from app.cli.export import main
    one = build_run(tmp_path / "one.versus", "r1", rate=9000, p95=1.3, idle=70,
                    phases=("rampup", "measure"))
    assert main([str(one), "--deck", str(tmp_path / "one.pptx")]) == 0
    texts = [sh.text_frame.text for slide in Presentation(str(tmp_path / "one.pptx")).slides
             for sh in slide.shapes if sh.has_text_frame]
    texts += [c.text for slide in Presentation(str(tmp_path / "one.pptx")).slides
              for sh in slide.shapes if sh.has_table for row in sh.table.rows
              for c in row.cells]
    import re
    said = [t for t in texts if re.search(r"\bratios?\b", t.lower()) or "× run" in t]
    assert texts and not said, said


SUITE_PHASES = ("prepare", "point-query.warmup", "point-query", "read-only_range=10.warmup",
                "read-only_range=10", "update-index.warmup", "update-index")


def _slide_texts(slide) -> list[str]:
    out = [sh.text_frame.text for sh in slide.shapes if sh.has_text_frame]
    return out + [c.text for sh in slide.shapes if sh.has_table
                  for row in sh.table.rows for c in row.cells]


def test_a_suite_deck_leads_with_its_matrices_without_warmups(tmp_path):
    from app.cli.export import main
    runs = [build_run(tmp_path / f"{n}.versus", n, rate=1000, p95=1, idle=50,
                      phases=SUITE_PHASES, workload="micro", version=v, rates=rates)
            for n, v, rates in (
                ("ra", "PostgreSQL 15.8", {"point-query": 1000, "update-index": 200,
                                           "read-only_range=10": 400}),
                ("rb", "MariaDB 11.4.2", {"point-query": 1300, "update-index": 150,
                                          "read-only_range=10": 410}))]
    out = tmp_path / "suite.pptx"
    assert main([*map(str, runs), "--deck", str(out)]) == 0
    slides = list(Presentation(str(out)).slides)
    # title, one matrix per group (point, range, writes), then the charts; no phase tables
    matrices = [s for s in slides[1:4] if any(sh.has_table for sh in s.shapes)]
    assert len(matrices) == 3
    table = next(sh for sh in matrices[0].shapes if sh.has_table).table
    head = [c.text for c in table.rows[0].cells]
    assert head[:3] == ["test", "1: PostgreSQL 15.8 ×", "2: MariaDB 11.4.2 ×"]
    assert "CPU per op" in head[3] and "CPU per op" in head[4]
    row = [c.text for c in table.rows[1].cells]
    assert row[:3] == ["point-query", "1.00", "1.30"]
    assert not any(sh.has_table for s in slides[4:] for sh in s.shapes)
    assert not [t for s in slides for t in _slide_texts(s) if ".warmup" in t]
    # the slides asked for: tables (warm-ups out), then with the warm-ups
    assert main([*map(str, runs), "--deck", str(out), "--slides", "tables"]) == 0
    texts = [t for s in Presentation(str(out)).slides for t in _slide_texts(s)]
    assert any(t.startswith("point-query — ratios") for t in texts)
    assert not [t for t in texts if ".warmup" in t]
    assert main([*map(str, runs), "--deck", str(out), "--slides", "tables,warmups"]) == 0
    texts = [t for s in Presentation(str(out)).slides for t in _slide_texts(s)]
    assert any(t.startswith("point-query.warmup — ratios") for t in texts)
    assert main([*map(str, runs), "--deck", str(out), "--slides", "matrix,bogus"]) == 2


def test_a_step_table_column_has_one_precision():
    """Issue 20, item 10: "0.0610" next to "19,912" in one column."""
    from app.analysis.compare import step_table_cells
    table = {"columns": [{"key": "qps", "title": "QPS", "unit": "QPS"}],
             "rows": [{"phase": "point-query", "values": {"qps": 19912.4}, "flags": []},
                      {"phase": "scan", "values": {"qps": 0.061}, "flags": []},
                      {"phase": "insert", "values": {"qps": None}, "flags": []}]}
    _head, rows, _flagged = step_table_cells(table)
    texts = [r[1].split()[0] for r in rows[:2]]
    decimals = {len(t.split(".")[1]) if "." in t else 0 for t in texts}
    assert len(decimals) == 1, texts
    assert texts[1] != "0" and not texts[1].startswith("0 "), texts
