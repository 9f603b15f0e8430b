"""`versus import` as a real process: every peer log becomes a run of a session file whose
stored summary states the log's own figures; files that are not logs, or are cut short, get
a sentence naming the file and the line, and the good files are imported all the same."""
from __future__ import annotations

import json
import re

from app.store.session import SessionFile
from tests.dbs import versus
from tests.workloads.test_tool_logs import FIX, PEER_FILES


def test_every_peer_log_imports_with_its_stated_figures(tmp_path):
    out = tmp_path / "imported.versus"
    r = versus("import", *map(str, PEER_FILES), "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["problems"] == []
    claimed = {f for run in rep["runs"] for f in run["files"]}
    assert claimed == {str(p) for p in PEER_FILES}
    with SessionFile(out) as s:
        runs = {tuple(r.info["imported"]): r for r in s.runs()}
        for files, rec in runs.items():
            text = open(files[0]).read()
            summ = [e for e in s.events(rec.id, ["summary"])][-1]
            res = summ["result"]
            if m := re.search(r"achieved (\d+) NOPM from (\d+) \w+ TPM", text):
                assert (res["nopm"], res["tpm"]) == (int(m.group(1)), int(m.group(2)))
            elif m := re.search(r"queries:\s+\d+\s+\(([\d.]+) per sec", text):
                assert res["qps"] == float(m.group(1))
            elif m := re.search(r"^tps = ([\d.]+)", text, re.M):
                assert res["tps"] == float(m.group(1))
            else:
                assert summ["phase"] == "load"
            assert rec.host == "imported" and rec.status == "ok"
    shown = versus("show", str(out))
    assert shown.returncode == 0 and shown.stdout.count("via imported") == len(runs)


def test_bad_files_get_sentences_and_good_ones_are_imported(tmp_path):
    good = FIX / "pgbench-15-S-progress.log"
    cut = tmp_path / "cut.log"
    data = (FIX / "sysbench-1.0.20-pg-point_select-interval1.log").read_bytes()
    cut.write_bytes(data[:data.find(b"Latency")])
    junk = tmp_path / "notes.txt"
    junk.write_text("my benchmark notes\n")
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\x00")
    out = tmp_path / "s.versus"
    r = versus("import", str(good), str(cut), str(junk), str(binary),
               str(tmp_path / "missing.log"), "--out", str(out))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 4, r.stderr
    assert any(f"{cut} line " in ln and "truncated" in ln for ln in lines)
    assert any(f"{junk} line 1: is not a log" in ln for ln in lines)
    assert any(f"{binary} line 1: holds binary data" in ln for ln in lines)
    assert any("missing.log does not exist" in ln for ln in lines)
    assert "imported pgbench-15-S-progress.log" in r.stdout
    with SessionFile(out) as s:
        assert len(s.runs()) == 1


def test_imported_runs_compare(tmp_path):
    out = tmp_path / "s.versus"
    a, b = [p for p in PEER_FILES if "oltp_point_select" in p.name and "pg15" in p.name]
    assert versus("import", str(a), str(b), "--out", str(out)).returncode == 0
    r = versus("compare", f"{out}:1", f"{out}:2", "--json")
    assert r.returncode == 0, r.stderr
    assert "measure" in r.stdout
