"""`versus compare` and `versus export` as real processes, on sessions the suite records
itself; bad input is refused with a sentence and the session files stay byte-for-byte."""
import hashlib
import json
import sqlite3

import pytest

from app.store.session import SCHEMA_VERSION
from tests.dbs import versus
from tests.recorded import build_run


def _digest(*paths):
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


@pytest.mark.pg
def test_compare_markdown_and_json(recorded, tmp_path):
    p1, p2 = recorded
    before = _digest(p1, p2)
    r = versus("compare", str(p1), str(p2), "--align", "measure", "--markdown")
    assert r.returncode == 0, r.stderr
    assert "**measure — ratios to run 1 (PostgreSQL" in r.stdout
    assert "| metric | unit | 1: PostgreSQL" in r.stdout and "| 2 / 1 |" in r.stdout
    assert "| Throughput | QPS |" in r.stdout and "| CPU per op | µs |" in r.stdout
    r = versus("compare", f"{p1}:1", str(p2), "--base", "2", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["base"] == 2 and len(j["runs"]) == 2
    tp = j["phases"]["measure"]["throughput"]
    assert tp["ratios"][1] == {"value": 1.0, "class": "same"}
    assert tp["ratios"][0]["value"] == pytest.approx(tp["values"][0] / tp["values"][1],
                                                     abs=1e-4)
    assert j["phases"]["measure"]["latency.p95"]["lower_is_better"] is True
    assert _digest(p1, p2) == before


@pytest.mark.pg
def test_export_series_and_table(recorded, tmp_path):
    p1, p2 = recorded
    before = _digest(p1, p2)
    csv_out = tmp_path / "s.csv"
    r = versus("export", str(p1), str(p2), "--series", str(csv_out))
    assert r.returncode == 0 and csv_out.read_text().startswith("t_s,1: PostgreSQL")
    md = tmp_path / "t.md"
    r = versus("export", str(p1), str(p2), "--table", str(md))
    assert r.returncode == 0 and "| Throughput | QPS |" in md.read_text()
    assert _digest(p1, p2) == before


def test_charts_without_qt_are_a_sentence(tmp_path):
    import importlib.util
    if importlib.util.find_spec("PySide6") is not None:
        pytest.skip("Qt is installed here; the Qt-free job runs this")
    good = build_run(tmp_path / "good.versus", "g", rate=100, p95=1, idle=50)
    r = versus("export", str(good), "--chart", "cpu", "--out", str(tmp_path / "x.png"))
    assert r.returncode == 2 and "drawn with Qt" in r.stderr and "Traceback" not in r.stderr


def test_bad_input_exits_2_with_a_sentence(tmp_path):
    good = build_run(tmp_path / "good.versus", "g", rate=100, p95=1, idle=50)
    other = build_run(tmp_path / "other.versus", "o", rate=100, p95=1, idle=50,
                      phases=("warm",))
    corrupt = tmp_path / "corrupt.versus"
    corrupt.write_bytes(b"garbage" * 500)
    newer = tmp_path / "newer.versus"
    newer.write_bytes(good.read_bytes())
    c = sqlite3.connect(newer)
    c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    c.commit(); c.close()
    files = [good, other, corrupt, newer]
    before = _digest(*files)
    cases = [
        (("compare", str(good), str(corrupt)), "not a Versus session file or it is damaged"),
        (("compare", str(good), str(newer)), "newer Versus"),
        (("compare", str(good), str(other), "--align", "measure"),
         "cannot align on phase 'measure'"),
        (("compare", str(good), str(other)), "no phase in common"),
        (("compare", str(good), str(tmp_path / "missing.versus")), "does not exist"),
        (("compare", f"{good}:nope"), "has no run 'nope'"),
        (("compare", str(good), str(good), "--base", "3"), "no run 3 to use as the base"),
        (("export", str(good), "--series", str(tmp_path / "no" / "x.csv")), "the folder"),
        (("export", str(good), "--table", str(tmp_path)), "it is a folder"),
        (("export", str(good), "--chart", "nope", "--out", str(tmp_path / "x.png")),
         "no chart called 'nope'"),
        (("export", str(corrupt), "--table", str(tmp_path / "x.md")), "damaged"),
        (("export", str(good), str(other), "--align", "measure", "--table",
          str(tmp_path / "y.md")), "cannot align"),
    ]
    for args, words in cases:
        r = versus(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert r.stderr.startswith("versus: ")
    assert _digest(*files) == before
    assert not (tmp_path / "x.md").exists() and not (tmp_path / "y.md").exists()
    assert not (tmp_path / "x.pptx").exists()
