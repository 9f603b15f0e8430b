"""Every registered workload has a golden stream (tests/fixtures/streams, recorded by
tests/fixtures/record_streams.py from real runs, or a tool's real logs imported where the
tool is not installed), so the readers of the event format run over each workload's output
(tests/analysis/test_streams.py; streams/tools/ holds the two they do not take yet), and
every stored event is one the format's checks accept."""
from __future__ import annotations

import pytest

from tests.recorded import STREAMS
from workloads import events as ev_format
from workloads.registry import WORKLOADS

ALL = sorted(STREAMS.glob("*.jsonl")) + sorted((STREAMS / "tools").glob("*.jsonl"))


def _events(path):
    return [ev_format.decode(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_every_registered_workload_has_a_golden_stream():
    recorded = {_events(p)[0]["workload"] for p in ALL}
    assert set(WORKLOADS) - recorded == set()
    assert recorded <= set(WORKLOADS)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_golden_event_passes_the_formats_checks(path):
    evs = _events(path)
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    assert [(e["seq"], ev_format.problem(e)) for e in evs
            if ev_format.problem(e) is not None] == []
