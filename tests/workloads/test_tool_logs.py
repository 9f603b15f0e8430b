"""The external tools' parsers (workloads/<tool>/parse.py) on every real log in
../shared/peer-logs and the logs recorded in tests/fixtures/tool-logs: each becomes the
events of a run, and the figures of its summary equal what the log itself states (read here
with a regex of the test's own on the log's result line)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from workloads.events import LogFormatError
from workloads.hammerdb import parse as hdb
from workloads.pgbench import parse as pgb
from workloads.sysbench import parse as sb

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT.parent / "shared" / "peer-logs"
if not PEER.is_dir():
    PEER = Path("/work/shared/peer-logs")
FIX = ROOT / "tests" / "fixtures" / "tool-logs"
PEER_FILES = sorted(PEER.glob("*.log"))


def files(*paths: Path):
    return [(str(p), (lambda p=p: open(p, encoding="utf-8", newline=""))) for p in paths]


def summaries(run):
    return [e for e in run["events"] if e["kind"] == "summary"]


def check_run_shape(run):
    kinds = [e["kind"] for e in run["events"]]
    assert kinds[0] == "hello" and kinds[-1] == "end"
    assert [e["seq"] for e in run["events"]] == list(range(1, len(kinds) + 1))
    hello = run["events"][0]
    assert hello["tool"]["name"] == run["workload"]
    assert set(hello["unknown"]) == {k for k, v in hello["params"].items() if v is None}
    starts = [e["name"] for e in run["events"] if e["kind"] == "phase" and e["state"] == "start"]
    ends = [e["name"] for e in run["events"] if e["kind"] == "phase" and e["state"] == "end"]
    assert starts == ends
    for s in summaries(run):
        assert s["source"]


def test_there_are_peer_logs():
    assert len(PEER_FILES) >= 40, PEER


@pytest.mark.parametrize("path", [p for p in PEER_FILES if p.name.startswith("sysbench")],
                         ids=lambda p: p.name)
def test_sysbench_peer_logs_state_their_qps(path):
    text = path.read_text()
    qps = float(re.search(r"^\s+queries:\s+\d+\s+\(([\d.]+) per sec\.\)", text, re.M).group(1))
    tps = float(re.search(r"^\s+transactions:\s+\d+\s+\(([\d.]+) per sec\.\)", text, re.M)
                .group(1))
    (run,) = sb.import_logs(files(path))
    check_run_shape(run)
    (s,) = summaries(run)
    assert s["result"]["qps"] == qps and s["rate"] == qps and s["result"]["tps"] == tps
    assert s["unit"] == "QPS" and s["phase"] == "measure"
    hello = run["events"][0]
    assert hello["tool"]["version"] == "1.0.20"
    assert hello["params"]["threads"] == 2 and "test" in hello["unknown"]


@pytest.mark.parametrize("path", [p for p in PEER_FILES if p.name.startswith("pgbench")],
                         ids=lambda p: p.name)
def test_pgbench_peer_logs_state_their_tps(path):
    text = path.read_text()
    (run,) = pgb.import_logs(files(path))
    check_run_shape(run)
    (s,) = summaries(run)
    m = re.search(r"^tps = ([\d.]+) \(without initial connection time\)", text, re.M)
    if m:
        assert s["result"]["tps"] == float(m.group(1)) == s["rate"]
        assert s["ops_total"] == int(re.search(r"actually processed: (\d+)", text).group(1))
    else:        # pgbench -i
        done = float(re.search(r"^done in ([\d.]+) s", text, re.M).group(1))
        assert s["phase"] == "load" and s["duration_s"] == done
        assert s["ops_total"] == int(re.findall(r"of (\d+) tuples", text)[-1])


def _hdb_pairs():
    return [p for p in PEER_FILES if p.name.startswith("hammerdb-") and "build" not in p.name]


@pytest.mark.parametrize("path", _hdb_pairs(), ids=lambda p: p.name)
def test_hammerdb_peer_logs_state_their_nopm_and_tpm(path):
    text = path.read_text()
    m = re.search(r"TEST RESULT : System achieved (\d+) NOPM from (\d+) (\w+) TPM", text)
    counter = PEER / path.name.replace("hammerdb-", "hdbtcount-")
    (run,) = hdb.import_logs(files(path, counter))
    check_run_shape(run)
    assert run["files"] == [str(path), str(counter)]       # the counter log joined its run
    (s,) = summaries(run)
    assert s["result"]["nopm"] == int(m.group(1))
    assert s["result"]["tpm"] == int(m.group(2)) == s["rate"]
    assert s["unit"] == "TPM"           # the phase's throughput: TPM, as its samples
    phases = [(e["name"], e["t"]) for e in run["events"] if e["kind"] == "phase"]
    assert phases == [("rampup", 0.0), ("rampup", 60.0), ("measure", 60.0), ("measure", 240.0)]
    # every counter reading after the first is a TPM figure of the server
    stamps = re.findall(r"^(\d+) \w+ tpm @ \w+ \w+ \d+ (\d+):(\d+):(\d+)", counter.read_text(),
                        re.M)
    t0 = [int(x) for x in re.findall(r"^Timestamp \d+ @ \w+ \w+ \d+ (\d+):(\d+):(\d+)", text,
                                     re.M)[0]]
    t0 = t0[0] * 3600 + t0[1] * 60 + t0[2]
    inside = [int(n) for n, h, mi, se in stamps[1:]
              if 0 < int(h) * 3600 + int(mi) * 60 + int(se) - t0 <= 240]
    samples = [e for e in run["events"] if e["kind"] == "sample"]
    assert [e["tpm"] for e in samples] == [e["rate"] for e in samples] == inside
    assert {e["phase"] for e in samples} == {"rampup", "measure"}
    hello = run["events"][0]
    assert hello["params"]["vus"] == 2 and hello["params"]["warehouses"] == 4
    assert hello["params"]["rampup"] == 60 and hello["params"]["duration"] == 180
    assert hello["target"]["engine"] == {"PostgreSQL": "postgres", "MariaDB": "mariadb"}[m.group(3)]


@pytest.mark.parametrize("path", [p for p in PEER_FILES if "build" in p.name],
                         ids=lambda p: p.name)
def test_hammerdb_build_logs_are_load_runs(path):
    text = path.read_text()
    (run,) = hdb.import_logs(files(path))
    check_run_shape(run)
    (s,) = summaries(run)
    stamps = re.findall(r"^Timestamp \d+ @ \w+ \w+ \d+ (\d+):(\d+):(\d+)", text, re.M)
    first = next(i for i, ln in enumerate(text.splitlines()) if "CREATING TPCC SCHEMA" in ln)
    h, mi, se = (int(x) for x in re.findall(r"@ \w+ \w+ \d+ (\d+):(\d+):(\d+)",
                                            text.splitlines()[first - 1])[0])
    h2, m2, s2 = (int(x) for x in stamps[-1])
    assert s["phase"] == "load"
    assert s["duration_s"] == (h2 * 3600 + m2 * 60 + s2) - (h * 3600 + mi * 60 + se)
    assert s["result"]["warehouses"] == 4
    assert run["events"][0]["params"]["stored-procedures"] == ("functions" not in path.name)


def test_hammerdb_counter_and_profile_alone_are_runs_without_phases():
    runs = hdb.import_logs(files(PEER / "hdbtcount-pg15-vu2-w4-storedprocs-r1.log",
                                 FIX / "hdbxtprofile-pg15-format.log"))
    assert len(runs) == 2
    for run in runs:
        check_run_shape(run)
        assert not [e for e in run["events"] if e["kind"] == "phase"]
    assert len([e for e in runs[0]["events"] if e["kind"] == "sample"]) == 24


def test_xtprof_joins_its_run_with_latency_per_transaction_type():
    log = PEER / "hammerdb-pg15-vu2-w4-storedprocs-r1.log"
    (run,) = hdb.import_logs(files(FIX / "hdbxtprofile-pg15-format.log", log))
    assert len(run["files"]) == 2
    (s,) = summaries(run)
    assert s["result"]["nopm"] == 51303
    assert s["lat_ms"]["new-order"] == {"p50": 1.101, "p95": 2.001, "p99": 3.201,
                                        "max": 25.112, "min": 0.812, "avg": 1.201}
    assert s["ops"]["payment"] == 144000                   # the summary block, not a VU's
    assert s["profile"]["vus"] == 2


def test_sysbench_report_interval_lines_are_samples():
    path = FIX / "sysbench-1.0.20-mariadb-read_write-interval1-p99.log"
    text = path.read_text()
    (run,) = sb.import_logs(files(path))
    check_run_shape(run)
    samples = [e for e in run["events"] if e["kind"] == "sample"]
    stated = re.findall(r"^\[ (\d+)s \] thds: \d+ tps: ([\d.]+) qps: ([\d.]+).* lat \(ms,99%\): "
                        r"([\d.]+)", text, re.M)
    assert [(s["interval"][1], s["rate"], s["lat_ms"]["all"]["p99"]) for s in samples] == \
        [(float(t), float(q), float(lat)) for t, _, q, lat in stated]
    assert samples[0]["counters"]["transactions"] == float(stated[0][1])
    (s,) = summaries(run)
    assert s["result"]["percentile"] == 99 and s["lat_ms"]["all"]["p99"] == 10.09


def test_sysbench_json_report():
    path = FIX / "sysbench-1.0.20-pg-point_select-json.log"
    (run,) = sb.import_logs(files(path))
    check_run_shape(run)
    assert [e["rate"] for e in run["events"] if e["kind"] == "sample"] == \
        [35111.51, 40786.51, 39214.95]
    (s,) = summaries(run)
    assert s["result"]["qps"] == 38320.99 and s["duration_s"] == 3.0
    assert s["result"]["percentile_source"].startswith("not stated")


def test_sysbench_1_1_format_with_warmup():
    (run,) = sb.import_logs(files(FIX / "sysbench-1.1-format-warmup-interval1.log"))
    check_run_shape(run)
    phases = [(e["name"], e["state"], e["t"]) for e in run["events"] if e["kind"] == "phase"]
    assert phases == [("warmup", "start", 0.0), ("warmup", "end", 5.0),
                      ("measure", "start", 5.0), ("measure", "end", 8.0001)]
    samples = [e for e in run["events"] if e["kind"] == "sample"]
    assert [s["interval"] for s in samples] == [[5.0, 6.0], [6.0, 7.0], [7.0, 8.0]]
    (s,) = summaries(run)
    assert s["result"]["qps"] == 41232.53 and s["duration_s"] == 3.0001
    assert run["events"][0]["tool"]["version"] == "1.1.0-2ca9e3f"


def test_pgbench_progress_and_transaction_logs():
    (run,) = pgb.import_logs(files(FIX / "pgbench-15-S-progress.log"))
    check_run_shape(run)
    assert [e["rate"] for e in run["events"] if e["kind"] == "sample"] == \
        [29022.5, 27986.4, 28220.5]
    assert run["events"][0]["params"]["progress"] == 1.0
    logs = sorted((FIX / "pgbench-l").iterdir())
    (run,) = pgb.import_logs(files(*logs))                  # one run from both threads' files
    check_run_shape(run)
    lines = [ln for p in logs for ln in p.read_text().splitlines()]
    (s,) = summaries(run)
    assert s["ops_total"] == len(lines) == 3835
    assert sum(e["ops"]["transactions"] for e in run["events"] if e["kind"] == "sample") == 3835
    assert run["events"][0]["params"]["clients"] == 2
    # pgbench itself reported 1280.255423 tps for this run (pgbench-15-tpcb-progress-l.log)
    assert abs(s["rate"] - 1280.255423) / 1280.255423 < 0.01
    (run,) = pgb.import_logs(files(*(FIX / "pgbench-agg").iterdir()))
    (s,) = summaries(run)
    assert s["ops_total"] == 428 + 1621 + 1512


def test_live_line_parsers():
    rec = sb.parse_interval("[ 7s ] thds: 4 tps: 10.50 qps: 210.00 (r/w/o: 147.00/42.00/21.00) "
                            "lat (ms,95%): 12.08 err/s: 0.00 reconn/s: 0.00")
    assert rec["t"] == 7 and rec["qps"] == 210.0 and rec["percentile"] == 95
    assert sb.parse_interval("[ 7s ] queue length: 0, concurrency: 0") is None
    rec = pgb.parse_progress("progress: 5.0 s, 1234.5 tps, lat 1.234 ms stddev 0.567, "
                             "lag 0.020 ms, 3 failed")
    assert rec == {"t": 5.0, "tps": 1234.5, "lat_ms": 1.234, "stddev_ms": 0.567,
                   "failed": 3, "lag_ms": 0.02}
    assert hdb.parse_result("Vuser 1:TEST RESULT : System achieved 10 NOPM from 23 MariaDB TPM") \
        == {"nopm": 10, "tpm": 23, "engine": "MariaDB"}
    assert hdb.parse_result("TEST RESULT : System achieved 28863 SQL Server TPM at 6234 NOPM") \
        == {"nopm": 6234, "tpm": 28863, "engine": "SQL Server"}
    # seen on a shared server where another database was dropped during the run
    assert hdb.parse_result("Vuser 1:TEST RESULT : System achieved 10048 NOPM from -331184 "
                            "PostgreSQL TPM") == {"nopm": 10048, "tpm": -331184,
                                                  "engine": "PostgreSQL"}
    assert hdb.parse_tcount("12 PostgreSQL tpm")["tpm"] == 12
    p = pgb.Parser()
    p.feed("pgbench (16.1 (Debian 16.1-1), server 15.20 (Debian 15.20-0+deb12u1))")
    assert (p.version, p.server) == ("16.1", "15.20 (Debian 15.20-0+deb12u1)")


# --- bad input ----------------------------------------------------------------------------
ALL = [*PEER_FILES, *sorted(p for p in FIX.glob("*.log"))]


def _import_any(path):
    out = []
    for mod in (sb, pgb, hdb):
        out += mod.import_logs(files(path))
    return out


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_truncated_logs_give_a_sentence_naming_file_and_line(path, tmp_path):
    """Cut every log at a quarter, at half, and in the middle of its result line: each cut
    either still holds the complete report (the same figures) or is refused with a sentence
    that names the file and a line."""
    data = path.read_bytes()
    result_at = max(data.rfind(k) for k in (b"queries:", b"tps = ", b"TEST RESULT",
                                             b"done in", b"SCHEMA COMPLETE", b" tpm @",
                                             b"SUMMARY OF"))
    for cut in sorted({len(data) // 4, len(data) // 2, result_at + 8}):
        part = tmp_path / path.name
        part.write_bytes(data[:cut])
        try:
            runs = _import_any(part)
        except LogFormatError as exc:
            assert str(exc).startswith(f"{part} line ") or str(exc).startswith(f"{part}:")
            assert "\n" not in str(exc) and "Traceback" not in str(exc)
            continue
        # a cut that left a whole report (for example a counter log cut between lines)
        assert cut != result_at + 8 or not runs, f"{path.name} cut mid-result was accepted"


@pytest.mark.parametrize("text", [
    "", "hello\nworld\n", "\x00\x01binary", "[\n  {\"time\": 1}\n",
    "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nThreads started!\n",
    "pgbench (15.20)\nprogress: 1.0 s, 5.0 tps, lat 1.0 ms stddev 0.1, 0 failed\n",
    "Hammerdb Log @ Sat Nov 21 10:44:46 UTC 2026\nVuser 1:Beginning rampup time of 1 minutes\n",
    "Hammerdb Transaction Counter Log @ Sat Nov 21 10:44:46 UTC 2026\nnot a number tpm\n",
    "0 1 2054 0 1795379619 633909\n0 2 x\n",
])
def test_hostile_files_are_refused_or_ignored_never_crash(text, tmp_path):
    p = tmp_path / "hostile.log"
    p.write_text(text)
    try:
        runs = _import_any(p)
    except LogFormatError as exc:
        assert str(exc).startswith(str(p))
        return
    assert runs == []
