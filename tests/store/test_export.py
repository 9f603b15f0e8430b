"""Table and series writers, the slide deck, and exports that cannot be written."""
import csv
import io
import json
import os

import pytest

from app.model.runset import BETTER, NA, SAME, WORSE, Table
from app.store.export import (DeckRun, ExportError, series_csv, table_csv, table_html,
                              table_markdown, tables_text, to_json, write_deck, write_text)


def _table():
    t = Table("measure — ratios to run 1", ["metric", "unit", "1: A", "2: B", "2 / 1"])
    t.add(["Throughput", "QPS", "1,000", "1,100", "1.10"], [None, None, None, None, BETTER])
    t.add(["Latency p95", "ms", "2.00", "2.20", "1.10"], [None, None, None, None, WORSE])
    t.add(["CPU user", "%", "37.50", "37.60", "1.00"], [None, None, None, None, SAME])
    t.add(["Errors", "/s", "0", "0", "n/a"], [None, None, None, None, NA])
    t.notes.append("a note | with a pipe")
    return t


def test_markdown_table_content():
    md = table_markdown(_table())
    lines = md.splitlines()
    assert lines[0] == "**measure — ratios to run 1**"
    assert lines[2] == "| metric | unit | 1: A | 2: B | 2 / 1 |"
    assert lines[3] == "| --- | --- | ---: | ---: | ---: |"
    assert lines[4] == "| Throughput | QPS | 1,000 | 1,100 | 1.10 ▲ |"
    assert lines[5] == "| Latency p95 | ms | 2.00 | 2.20 | 1.10 ▼ |"
    assert lines[6] == "| CPU user | % | 37.50 | 37.60 | 1.00 |"
    assert lines[7] == "| Errors | /s | 0 | 0 | n/a |"
    assert "a note \\| with a pipe" in md
    assert "▲" not in table_markdown(_table(), marks=False)


def test_html_and_csv_tables():
    h = table_html(_table(), standalone=True)
    assert h.startswith("<!DOCTYPE html>") and 'class="better"' in h and 'class="worse"' in h
    assert "background:#C8E6C9" in h and "background:#FFCDD2" in h
    rows = list(csv.reader(io.StringIO(table_csv(_table()))))
    assert rows[0] == ["metric", "unit", "1: A", "2: B", "2 / 1"] and rows[1][2] == "1,000"
    both = tables_text([_table(), _table()], "csv")
    assert both.count("measure — ratios to run 1") == 2


def test_series_csv_and_json():
    text = series_csv([1, 2, 3], [("1: A Throughput (QPS)", [10.0, None, 12.5]),
                                  ("2: B Throughput (QPS)", [9.0, 9.5, None])])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["t_s", "1: A Throughput (QPS)", "2: B Throughput (QPS)"],
                    ["1", "10.0", "9.0"], ["2", "", "9.5"], ["3", "12.5", ""]]
    assert json.loads(to_json({"a": [1.5, None]})) == {"a": [1.5, None]}


def test_unwritable_path_is_a_sentence_and_leaves_nothing(tmp_path):
    with pytest.raises(ExportError, match="folder .* does not exist"):
        write_text(tmp_path / "no" / "x.md", "x")
    with pytest.raises(ExportError, match="it is a folder"):
        write_text(tmp_path, "x")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.geteuid() != 0:           # root writes anywhere; the folder check is enough
            with pytest.raises(ExportError, match="cannot write"):
                write_text(ro / "x.md", "x")
    finally:
        ro.chmod(0o700)
    assert list(tmp_path.iterdir()) == [ro] and not list(ro.iterdir())


def _png(w=320, h=180) -> bytes:
    from PIL import Image            # installed with python-pptx
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (0, 114, 178)).save(buf, "PNG")
    return buf.getvalue()


def test_deck_reopens_with_expected_slides(tmp_path):
    from pptx import Presentation
    out = write_deck(tmp_path / "d.pptx", "point-query: A vs B", "aligned on measure",
                     [DeckRun("1. A", "#0072B2", ["PostgreSQL 16.4", "host h1 (4 cores)"]),
                      DeckRun("2. B", "#D55E00", ["PostgreSQL 17.2"])],
                     [("throughput", _png()), ("latency", _png())], [_table()])
    prs = Presentation(str(out))
    assert len(prs.slides) == 1 + 2 + 1
    texts = [sh.text_frame.text for sh in prs.slides[0].shapes if sh.has_text_frame]
    runs = next(sh.table for sh in prs.slides[0].shapes if sh.has_table)
    assert "point-query: A vs B" in texts and runs.cell(1, 2).text == "PostgreSQL 16.4"
    table = next(sh.table for sh in prs.slides[3].shapes if sh.has_table)
    assert table.cell(1, 0).text == "Throughput" and table.cell(1, 4).text == "1.10"
    assert str(table.cell(1, 4).fill.fore_color.rgb) == "C8E6C9"     # green: better
    assert str(table.cell(2, 4).fill.fore_color.rgb) == "FFCDD2"     # red: worse


def test_deck_with_a_broken_image_fails_cleanly(tmp_path):
    with pytest.raises(ExportError, match="not a usable PNG"):
        write_deck(tmp_path / "d.pptx", "t", "", [], [("x", b"not a png")], [])
    assert not (tmp_path / "d.pptx").exists()
