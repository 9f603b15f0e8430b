"""A run of sysbench driven by Versus and an imported sysbench log compare side by side in
`versus compare` (JSON and Markdown), each with the QPS that sysbench itself reported and
its source (the Compare view: tests/ui/test_compare_tools_view.py)."""
from __future__ import annotations

import json
import re

import pytest

from app.store.session import SessionFile
from tests.dbs import versus
from tests.recorded import record_native_and_imported


@pytest.fixture(scope="module")
def native_and_imported(tmp_path_factory):
    return record_native_and_imported(tmp_path_factory.mktemp("cmp"))


def _qps(path):
    with SessionFile(path) as s:
        (rec,) = s.runs()
        return [e for e in s.events(rec.id, ["summary"]) if e["phase"] == "measure"][-1][
            "result"]["qps"]


def test_versus_compare_native_and_imported(native_and_imported):
    native, imported, log = native_and_imported
    stated = float(re.search(r"queries:\s+\d+\s+\(([\d.]+) per sec", log.read_text()).group(1))
    r = versus("compare", str(native), str(imported), "--json")
    assert r.returncode == 0, r.stderr
    comp = json.loads(r.stdout)
    qps = comp["phases"]["measure"]["qps"]
    assert qps["values"] == [_qps(native), stated]
    assert any("sysbench's final report" in str(s) for s in qps["sources"])
    md = versus("compare", str(native), str(imported), "--markdown")
    assert md.returncode == 0 and "57,817" in md.stdout
