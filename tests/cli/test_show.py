"""`versus show` and `versus compare` as processes over sessions built from recorded real
streams (tests/fixtures/streams)."""
import json

from tests.recorded import load, session_of
from tests.dbs import versus


def test_show_text_prints_the_result_line_with_sources(tmp_path, versus_home):
    path = session_of("tpcc-pg", tmp_path)
    res = next(e for e in load("tpcc-pg") if e["kind"] == "summary"
               and e["phase"] == "measure")["result"]
    r = versus("show", str(path))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "result:" in x)
    assert f"{res['nopm']:,} NOPM · {res['tpm']:,} TPM" in line
    assert "SUM(d_next_o_id)" in line and "pg_stat_database" in line
    load_line = next(x for x in r.stdout.splitlines() if x.strip().startswith("load"))
    assert "rows/s" in load_line and "NOPM" not in load_line
    # the percentiles' precision: this recording's histograms are of event format 1
    assert "latency percentiles from histograms, within 1.57 % of the raw latencies' (max " \
        "within 3.13 %, never below)" in r.stdout


def test_show_json_carries_results_per_phase(tmp_path, versus_home):
    path = session_of("tpcc-mariadb", tmp_path)
    r = versus("show", str(path), "--json")
    assert r.returncode == 0, r.stderr
    (run,) = json.loads(r.stdout)["runs"]
    measure = next(p for p in run["phases"] if p["name"] == "measure")
    keys = {x["key"]: x for x in measure["results"]}
    assert keys["nopm"]["headline"] and keys["tpm"]["value"] == measure["result"]["tpm"]
    assert "Com_commit" in keys["tpm"]["source"]


def test_compare_markdown_has_a_tpm_row_and_rows_per_second_in_load(tmp_path, versus_home):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = session_of("tpcc-pg", tmp_path / "a"), session_of("tpcc-pg", tmp_path / "b")
    r = versus("compare", str(a), str(b), "--markdown")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert sum(x.startswith("| TPM | TPM |") for x in lines) == 1
    start = lines.index(next(x for x in lines if x.startswith("**load")))
    load_rows = lines[start:start + 6]
    assert any(x.startswith("| Throughput | rows/s |") for x in load_rows), load_rows


def test_duration_and_warmup_set_the_parameters_the_workload_declares(tmp_path, versus_home):
    from workloads.registry import WORKLOADS
    for spec in WORKLOADS.values():
        if spec.seconds_param("measured") is None:
            continue
        assert spec.seconds_param("measured") in {p.name for p in spec.params}
    assert WORKLOADS["tpcc"].seconds_param("warmup") == "rampup"
    assert WORKLOADS["point-query"].seconds_param("warmup") == "warmup"


def test_show_into_a_closed_pipe_ends_quietly(tmp_path, versus_home):
    """`versus show F | head`: the reader has gone before the output; no traceback."""
    import os
    import signal
    import subprocess
    import sys
    path = session_of("tpcc-pg", tmp_path)
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "app.main", "show", str(path)], stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(w)
    assert p.stderr == ""
    assert p.returncode == -signal.SIGPIPE
