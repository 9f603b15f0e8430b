"""Every registered workload has a golden stream (tests/fixtures/streams, recorded by
tests/fixtures/record_streams.py from real runs, or a tool's real logs imported where the
tool is not installed), so every reader of the event format runs over each workload's
output (tests/analysis/test_streams.py)."""
from __future__ import annotations

from tests.recorded import STREAMS, load
from workloads.registry import WORKLOADS


def test_every_registered_workload_has_a_golden_stream():
    recorded = {load(p.stem)[0]["workload"] for p in STREAMS.glob("*.jsonl")}
    assert set(WORKLOADS) - recorded == set()
    assert recorded <= set(WORKLOADS)
