"""Open data: `versus export --parquet` writes runs, phases and series as documented, and the
notebook in resources/ loads them and draws the comparison, executed headless (nbclient)."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from tests.dbs import versus
from tests.recorded import build_run

NOTEBOOK = Path(__file__).resolve().parents[2] / "resources" / "notebooks" / "comparison.ipynb"


def _export(tmp_path, versus_home):
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2, idle=50, seconds=6)
    b = build_run(tmp_path / "b.versus", "rb", rate=1300, p95=1.5, idle=40, seconds=6,
                  version="PostgreSQL 18.1")
    out = tmp_path / "open"
    r = versus("export", str(a), str(b), "--parquet", str(out),
               env={"VERSUS_HOME": str(versus_home)})
    assert r.returncode == 0, r.stderr
    return out


def test_parquet_holds_runs_phases_and_series(tmp_path, versus_home):
    out = _export(tmp_path, versus_home)
    runs = pq.read_table(out / "runs.parquet").to_pylist()
    assert [(r["run"], r["run_id"], r["server_version"]) for r in runs] == [
        (1, "ra", "PostgreSQL 16.4"), (2, "rb", "PostgreSQL 18.1")]
    assert json.loads(runs[0]["params"]) == {"clients": 2} and runs[0]["unit"] == "QPS"
    phases = pq.read_table(out / "phases.parquet").to_pylist()
    tp = {p["run"]: p["value"] for p in phases
          if p["metric"] == "throughput" and p["phase"] == "measure"}
    assert tp == {1: 1000.0, 2: 1300.0}
    assert {p["role"] for p in phases if p["phase"] == "measure"} <= {"measured", ""}
    series = pq.read_table(out / "series.parquet")
    assert series.schema.names == ["run", "metric", "unit", "t", "value"]
    rows = [s for s in series.to_pylist() if s["metric"] == "throughput" and s["run"] == 2]
    assert [s["t"] for s in rows] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert {s["value"] for s in rows} == {1300.0}


def test_the_notebook_runs_headless_on_an_export(tmp_path, versus_home, monkeypatch):
    import nbformat
    from nbclient import NotebookClient
    out = _export(tmp_path, versus_home)
    monkeypatch.setenv("VERSUS_PARQUET", str(out))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert (out / "throughput.png").stat().st_size > 1000
    assert (out / "relative.png").stat().st_size > 1000
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.get("outputs", []))
    assert "2 {'measure': 1.3}" in printed
