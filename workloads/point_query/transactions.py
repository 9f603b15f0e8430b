"""point-query: the micro suite's first test (SELECT c FROM sbtest<N> WHERE id=?) as a
workload of its own, with a warm-up and one measured phase. One code path: the tables,
loader, clients and virtual-user loop are the micro suite's (workloads.sbtest)."""
from __future__ import annotations

from ..sbtest import load
from ..sbtest.runner import run_test
from ..sbtest.suite import BY_NAME
from ..sbtest.values import id_picker  # noqa: F401  (the ids the test draws)


def run(agent) -> None:
    p = agent.params
    with agent.phase("prepare"):
        load.prepare(agent)
    test = BY_NAME["point-query"]
    if p["warmup"] > 0:
        run_test(agent, test, "warmup", p["warmup"])
    run_test(agent, test, "measure", p["duration"])
