"""Fits a laptop (issue 20, item 3): on a 1366x768 screen the first window opens no larger
than the screen, and opening a saved micro-suite run, the Plan view and Compare leaves the
window's minimum size within the screen, and the live TPROC-C screen shows every column of
its virtual users' table (a saved micro run raised it to 930x1057, the window
grew past the screen and never shrank back). The window is a process of its own
(tests/ui/laptop_probe.py) because the screen's size is chosen before Qt starts."""
import json
import subprocess
import sys
from pathlib import Path

from tests.recorded import build_run
from tests.ui.test_suite_matrix import PHASES

ROOT = Path(__file__).resolve().parents[2]


def test_every_view_fits_a_1366x768_screen(tmp_path):
    runs = [build_run(tmp_path / f"{n}.versus", n, rate=1000, p95=1, idle=50, phases=PHASES,
                      workload="micro", version=v,
                      rates={"point-query.pre": 1000, "update-index": 200, "scan": 10})
            for n, v in (("a", "PostgreSQL 15.8"), ("b", "MariaDB 11.4.2"))]
    home = tmp_path / "home"
    home.mkdir()
    r = subprocess.run([sys.executable, "-m", "tests.ui.laptop_probe", str(home),
                        *map(str, runs)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    steps = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    live = next(s for s in steps if s["step"] == "live tpcc")
    assert live["vu_visible"] >= live["vu_columns"], live      # no column cut off
    assert live["titles_cut"] == [], live                      # nor a chart's legend
    steps = [s for s in steps if s["step"] != "live tpcc"]
    assert [s["step"] for s in steps] == ["start", "saved run", "plan", "compare"], r.stdout
    for s in steps:
        assert s["screen"] == [1366, 768]
        assert s["frame"][0] <= 1366 and s["frame"][1] <= 768, s
        assert s["min"][0] <= 1366 and s["min"][1] <= 768, s
