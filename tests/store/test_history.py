"""The history index: runs found by their facts across folders, kept current as files come
and go, a damaged file named and skipped; the trend of a figure with Otava's change points."""
from __future__ import annotations

import os

from app.analysis.trend import trend
from app.store.history import HistoryIndex, IndexedRun, PhaseFigures
from tests.dbs import versus
from tests.recorded import session_of


def _three_folders(tmp_path):
    dirs = [tmp_path / n for n in ("lab", "archive", "laptop")]
    for d in dirs:
        d.mkdir()
    session_of("point-query-pg", dirs[0])            # PostgreSQL 15.20
    session_of("point-query-mariadb", dirs[1])       # MariaDB 10.11.19
    session_of("tpcc-pg", dirs[2])                   # PostgreSQL 15.20
    (dirs[1] / "broken.versus").write_bytes(b"SQLite format 3\x00" + os.urandom(600))
    return dirs


def test_finds_runs_by_version_across_three_folders(tmp_path, versus_home):
    dirs = _three_folders(tmp_path)
    with HistoryIndex(tmp_path / "index.sqlite", include_sessions_dir=False) as idx:
        for d in dirs:
            idx.add_folder(d)
        problems = idx.refresh()
        assert len(problems) == 1 and "broken.versus" in problems[0]
        assert "skipped" in problems[0] and "Traceback" not in problems[0]
        pg = idx.runs(version="15")
        assert {r.workload for r in pg} == {"point-query", "tpcc"}
        assert {os.path.dirname(r.file) for r in pg} == {str(dirs[0]), str(dirs[2])}
        assert all(r.engine == "postgres" and r.version == "15.20" for r in pg)
        maria = idx.runs(version="10.11")
        assert [r.engine for r in maria] == ["mariadb"]
        assert idx.runs(version="1") == []                       # not a prefix of 15 or 10
        assert [r.workload for r in idx.runs(engine="postgres", workload="tpcc")] == ["tpcc"]
        q = idx.runs(workload="point-query", engine="postgres")[0]
        assert q.figure("throughput") and q.figure("p95")
        assert idx.runs(params={"clients": str(q.params["clients"])}, engine="postgres")
        assert not idx.runs(params={"clients": "999"})
        assert idx.values("version") == ["10.11.19", "15.20"]


def test_kept_current_as_files_come_and_go(tmp_path, versus_home):
    d = tmp_path / "runs"
    d.mkdir()
    with HistoryIndex(tmp_path / "index.sqlite", include_sessions_dir=False) as idx:
        idx.add_folder(d)
        assert idx.refresh() == [] and idx.runs() == []
        p = session_of("point-query-pg", d)
        idx.refresh()
        assert len(idx.runs()) == 1
        session_of("transfers-mariadb", d)
        idx.refresh()
        assert len(idx.runs()) == 2
        p.unlink()
        idx.refresh()
        assert [r.workload for r in idx.runs()] == ["transfers"]


def test_versus_runs_command(tmp_path, versus_home):
    dirs = _three_folders(tmp_path)
    env = {"VERSUS_HOME": str(versus_home)}
    for d in dirs:
        assert versus("runs", "--add-folder", str(d), "--folders", env=env).returncode == 0
    r = versus("runs", "--version", "15", "--engine", "postgres", env=env)
    assert r.returncode == 3                       # a damaged file was skipped, and said
    assert "broken.versus" in r.stderr and "Traceback" not in r.stderr
    assert "2 runs" in r.stdout and "tpcc" in r.stdout and "point-query" in r.stdout
    assert "mariadb" not in r.stdout
    r = versus("runs", "--version", "15", "--param", "nonsense", env=env)
    assert r.returncode == 2 and "NAME=VALUE" in r.stderr


def _run(i: int, version: str, value: float) -> IndexedRun:
    return IndexedRun(f"/s/{i}.versus", f"r{i}", 1.7e9 + i * 86400, "point-query", "postgres",
                      version, f"PostgreSQL {version}", "", "db1", "pg", {"clients": 4}, "ok",
                      [PhaseFigures("measure", "measured", "QPS", value, 1.0, 2.0, 1e5, 0)])


def test_trend_marks_the_change_point():
    # versions 15.1 … 15.12, throughput 10 % lower from 15.7 on (0.5 % noise around each level)
    runs = [_run(i, f"15.{i}", (10000 if i < 7 else 9000) * (1 + 0.005 * ((-1) ** i)))
            for i in range(12, 0, -1)]
    t = trend(runs, "throughput", by="version")
    assert [p.label for p in t.points] == [f"15.{i}" for i in range(1, 13)]
    assert len(t.changes) == 1 and t.points[t.changes[0].index].label == "15.7"
    assert t.changes[0].change_pct < -5
    table = t.table()
    assert any("%" in row[2] for row in table.rows)
    flat = trend([_run(i, f"15.{i}", 10000 * (1 + 0.005 * ((-1) ** i))) for i in range(1, 13)])
    assert flat.changes == []
