"""Comparisons: values, ratios and colours against known numbers; real recorded runs."""
import math

import pytest

from app.analysis.compare import CompareError, fmt_value, load_comparison, parse_ref
from app.analysis.metrics import CHARTS, metric
from app.model.runset import (BETTER, NA, SAME, WORSE, RunRef, ratio,
                              run_colour)
from tests.recorded import build_run, record_pg_sessions


@pytest.fixture
def built(tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    b = build_run(tmp_path / "b.versus", "rb", rate=1100, p95=2.2, idle=60)
    c = build_run(tmp_path / "c.versus", "rc", rate=970, p95=2.06, idle=50,
                  version="PostgreSQL 17.2")
    z = build_run(tmp_path / "z.versus", "rz", rate=0, p95=0, idle=99,
                  version="MariaDB 11.4.3")
    return a, b, c, z


def test_ratio_boundaries_and_sense():
    assert ratio(105, 100, lower_is_better=False).cls == BETTER        # ≥ 1.05 green
    assert ratio(95, 100, lower_is_better=False).cls == WORSE          # ≤ 0.95 red
    assert ratio(96, 100, lower_is_better=False).cls == SAME
    assert ratio(104.9, 100, lower_is_better=False).cls == SAME
    assert ratio(105, 100, lower_is_better=True).cls == WORSE          # latency went up
    assert ratio(95, 100, lower_is_better=True).cls == BETTER
    zero = ratio(100, 0, lower_is_better=False)
    assert zero.value is None and zero.cls == NA and zero.text() == "n/a"
    assert ratio(None, 5, False).cls == NA and ratio(5, None, True).cls == NA


def test_phase_values_and_efficiency_are_exact(built):
    comp = load_comparison([RunRef(str(p)) for p in built[:2]])
    a, b = comp.phase_values(0, "measure"), comp.phase_values(1, "measure")
    assert a["throughput"] == 1000 and b["throughput"] == 1100
    assert a["latency.p95"] == 2.0 and a["cpu.user"] == pytest.approx(37.5)
    # CPU µs/op = busy % × cores × seconds × 1e6 / ops = 0.5 × 4 × 10 × 1e6 / 10 000
    assert a["eff.cpu_us"] == pytest.approx(2000.0)
    assert b["eff.cpu_us"] == pytest.approx(0.4 * 4 * 10 * 1e6 / 11000)
    assert a["eff.cs"] == pytest.approx(2.0)
    assert a["eff.read_kb"] == pytest.approx(0.1) and a["eff.write_kb"] == pytest.approx(0.2)
    # the per-interval efficiency series agree with the phase figure
    t, v = comp.series(0, "eff.cpu_us")
    assert len(t) == 10 and all(x == pytest.approx(2000.0) for x in v)
    assert all(x == pytest.approx(2.0) for x in comp.series(0, "eff.cs")[1])


def test_summary_table_ratios_and_colours(built):
    comp = load_comparison([RunRef(str(p)) for p in built[:3]])
    t = comp.summary_table("measure", base=0)
    assert t.header[2:] == ["1: PostgreSQL 16.4 #1", "2: PostgreSQL 16.4 #2", "3: PostgreSQL 17.2",
                            "2 / 1", "3 / 1"]
    rows = {r[0]: (r, c) for r, c in zip(t.rows, t.classes)}
    row, cls = rows["Throughput"]
    assert row[2:] == ["1,000", "1,100", "970", "1.10", "0.97"]      # one number of decimals
    assert cls[-2:] == [BETTER, SAME]
    row, cls = rows["Latency p95"]                 # lower is better: 1.10 is worse (red)
    assert row[-2:] == ["1.10", "1.03"] and cls[-2:] == [WORSE, SAME]
    e = comp.efficiency_table("measure", base=0)
    row, cls = next((r, c) for r, c in zip(e.rows, e.classes) if r[0] == "CPU per op")
    assert row[-2] == "0.73" and cls[-2] == BETTER  # less CPU per op is better (green)
    # base 2 flips the sense of the throughput ratio
    t2 = comp.summary_table("measure", base=1)
    r, c = next((r, c) for r, c in zip(t2.rows, t2.classes) if r[0] == "Throughput")
    assert r[-2:] == ["0.91", "0.88"] and c[-2:] == [WORSE, WORSE]


def test_zero_throughput_base_gives_na(built):
    comp = load_comparison([RunRef(str(built[3])), RunRef(str(built[0]))])
    assert comp.phase_values(0, "measure")["throughput"] == 0
    t = comp.summary_table("measure", base=0)
    r, c = next((r, c) for r, c in zip(t.rows, t.classes) if r[0] == "Throughput")
    assert r[-1] == "n/a" and c[-1] == NA
    assert any("zero throughput" in n for n in t.notes)
    assert comp.phase_values(0, "measure")["eff.cpu_us"] is None     # no ops, no per-op cost
    j = comp.to_json(base=0)
    assert j["phases"]["measure"]["throughput"]["ratios"][1] == {"value": None, "class": NA}


def test_align_on_a_phase_and_no_common_phase(tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=10, p95=1, idle=50,
                  phases=("load", "measure"))
    b = build_run(tmp_path / "b.versus", "rb", rate=10, p95=1, idle=50, phases=("measure",))
    x = build_run(tmp_path / "x.versus", "rx", rate=10, p95=1, idle=50, phases=("warm",))
    comp = load_comparison([RunRef(str(a)), RunRef(str(b))], align="measure")
    ta, _ = comp.series(0, "throughput")
    tb, _ = comp.series(1, "throughput")
    assert ta[0] == -9.0                # the load phase lies before the alignment point
    assert ta[10] == tb[0] == 1.0       # both measure phases start at 0 after alignment
    assert comp.runs[0].offset == 10.0
    with pytest.raises(CompareError, match="cannot align on phase 'measure'.*run 2 .*has warm"):
        load_comparison([RunRef(str(a)), RunRef(str(x))], align="measure")
    with pytest.raises(CompareError, match="no phase in common"):
        load_comparison([RunRef(str(b)), RunRef(str(x))], align="measure")


def test_series_values_at_and_per_second(built):
    comp = load_comparison([RunRef(str(p)) for p in built[:2]])
    t, v = comp.series(1, "throughput")
    assert list(t) == [float(i) for i in range(1, 11)] and set(v) == {1100.0}
    at = comp.values_at(3.5, ["throughput", "cpu.user"])
    assert at[0] == {"throughput": 1000.0, "cpu.user": 37.5}
    assert comp.values_at(-5)[0]["throughput"] is None
    seconds, per = comp.per_second(["throughput"])
    assert seconds == list(range(1, 11)) and per[(1, "throughput")][0] == 1100.0
    assert "throughput" in comp.charts() and "latency" in comp.charts()
    assert set(comp.charts()) <= set(CHARTS)


def test_matrix_by_phase_and_by_parameter(tmp_path):
    a = build_run(tmp_path / "a.versus", "ra", rate=100, p95=1, idle=50, phases=("s1", "s2"))
    b = build_run(tmp_path / "b.versus", "rb", rate=120, p95=1, idle=50, phases=("s1", "s2"),
                  version="PostgreSQL 17.2")
    m = load_comparison([RunRef(str(a)), RunRef(str(b))]).matrix("throughput", base=0)
    assert [r[0] for r in m.rows] == ["s1", "s2"]
    assert m.rows[0][1:] == ["1.00", "1.20"] and m.classes[0][1:] == [SAME, BETTER]


def test_colours_labels_and_refs(built, tmp_path):
    assert run_colour(0) != run_colour(1) and run_colour(0) == run_colour(8)
    assert metric("latency.p99").lower_is_better and not metric("throughput").lower_is_better
    comp = load_comparison([RunRef(str(built[0])), RunRef(str(built[2]))], names=["old", ""])
    assert [r.label for r in comp.runs] == ["old", "PostgreSQL 17.2"]
    assert [r.colour for r in comp.runs] == [run_colour(0), run_colour(1)]
    assert parse_ref(f"{built[0]}:ra") == RunRef(str(built[0]), "ra")
    assert parse_ref(str(built[0])) == RunRef(str(built[0]))
    assert load_comparison([parse_ref(f"{built[0]}:1")]).runs[0].ref.run_id == "ra"
    with pytest.raises(CompareError, match="has no run 'nope'"):
        load_comparison([parse_ref(f"{built[0]}:nope")])
    assert fmt_value(None) == "—" and fmt_value(25519.17) == "25,519" and fmt_value(0.0725) \
        == "0.0725"


def test_series_table_is_derived_for_old_files(built, tmp_path):
    """A file written before the derived table existed is read from its events the same."""
    import shutil
    import sqlite3
    old = tmp_path / "old.versus"
    shutil.copy(built[0], old)
    db = sqlite3.connect(old)
    db.execute("DROP TABLE derived"); db.execute("DROP TABLE derived_state")
    db.execute("DELETE FROM meta WHERE key = 'derive_version'"); db.commit()
    db.close()
    fresh = load_comparison([RunRef(str(built[0]))])
    legacy = load_comparison([RunRef(str(old))])
    assert legacy.phase_values(0, "measure") == fresh.phase_values(0, "measure")
    assert list(legacy.series(0, "cpu.user")[1]) == list(fresh.series(0, "cpu.user")[1])


def test_rows_of_an_older_derivation_are_never_read(built, tmp_path):
    """Derived rows written by another derivation version are a stale cache: a read-only
    reader derives from the events instead, a writer derives them again."""
    import shutil
    import sqlite3
    from app.store.session import SessionFile
    old = tmp_path / "stale.versus"
    shutil.copy(built[0], old)
    db = sqlite3.connect(old)
    db.execute('UPDATE derived SET "throughput" = -1, "cpu.user" = -1')
    db.execute("UPDATE meta SET value = 'old' WHERE key = 'derive_version'"); db.commit()
    db.close()
    fresh = load_comparison([RunRef(str(built[0]))])
    stale = load_comparison([RunRef(str(old))])
    assert list(stale.series(0, "cpu.user")[1]) == list(fresh.series(0, "cpu.user")[1])
    assert min(stale.series(0, "throughput")[1]) >= 0
    SessionFile(old, readonly=False).close()              # a writer rebuilds the cache
    db = sqlite3.connect(old)
    assert db.execute('SELECT MIN("throughput") FROM derived').fetchone()[0] >= 0
    db.close()


@pytest.mark.pg
def test_two_recorded_postgres_sessions(tmp_path, versus_home):
    p1, p2 = record_pg_sessions(tmp_path, versus_home, n=2, duration=2)
    comp = load_comparison([RunRef(str(p1)), RunRef(str(p2))], align="measure")
    assert [r.label for r in comp.runs][0].startswith("PostgreSQL")
    assert comp.runs[1].label.endswith("clients=2")          # same server: told apart
    v = [comp.phase_values(i, "measure") for i in range(2)]
    for x in v:
        assert x["throughput"] > 100 and 0 < x["latency.p50"] <= x["latency.p99"]
        assert x["eff.cpu_us"] > 0 and x["cpu.user"] > 0 and x["cs"] > 0
    t = comp.summary_table("measure")
    r, c = t.rows[0], t.classes[0]
    assert r[0] == "Throughput" and r[1] == "QPS"
    expect = v[1]["throughput"] / v[0]["throughput"]
    assert r[-1] == f"{expect:.2f}"
    assert c[-1] == ratio(v[1]["throughput"], v[0]["throughput"], False).cls
    assert not math.isnan(comp.series(0, "throughput")[1][0])
