"""`versus run --metrics-port`: the live run's figures scraped while it runs parse with
prometheus_client's text parser, and the operations counter equals the run's own count."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.store.session import SessionFile

pytestmark = pytest.mark.pg
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(port: int) -> dict[str, dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out: dict[str, dict] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def test_scraped_during_a_run(tmp_path, pg_db, versus_home):
    port = _free_port()
    out = tmp_path / "m.versus"
    env = {**os.environ, "VERSUS_HOME": str(versus_home)}
    p = subprocess.Popen([sys.executable, "-m", "app.main", "run", "--target", pg_db,
                          "--workload", "point-query", "--duration", "3", "--set",
                          "table-size=2000", "--out", str(out), "--metrics-port", str(port)],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    scrapes = []
    try:
        while p.poll() is None:
            try:
                got = _scrape(port)
            except OSError:
                got = None                    # not listening yet, or already closed
            if got and got.get("versus_operations_total"):
                scrapes.append(got)
            try:
                p.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
    finally:
        if p.poll() is None:
            p.kill()
        stdout, stderr = p.communicate()
    assert p.returncode == 0, stdout + stderr
    assert scrapes, "the endpoint served no operations while the run ran"
    with SessionFile(out) as s:
        [rec] = s.runs()
        samples = s.events(rec.id, kinds=("sample",))
    prefix, total = {0}, 0
    for e in samples:
        total += sum(e.get("ops", {}).values())
        prefix.add(total)
    for got in scrapes:
        counted = sum(got["versus_operations_total"].values())
        assert counted in prefix              # the run's own count up to one of its samples
        labels = dict(next(iter(got["versus_run_start_timestamp_seconds"])))
        assert labels["run_id"] == rec.id and labels["workload"] == "point-query"
    assert max(sum(g["versus_operations_total"].values()) for g in scrapes) > 0
