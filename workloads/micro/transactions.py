"""Run the suite: one phase per test (workloads/sbtest/runner.py runs each)."""
from __future__ import annotations

from ..sbtest import load, suite
from ..sbtest.runner import loop_for, run_test
from ..engine.api import clients


def run(agent) -> None:
    p = agent.params
    kind = clients.driver_for(agent.target, p.get("mysql-driver", "auto"))
    loop = loop_for(agent.target, p)[1]          # client-loop=compiled without it: refused now
    with agent.phase("prepare"):
        load.prepare(agent)
    agent.log(f"clients: {kind}; {loop}")
    for step in suite.steps(p):
        run_test(agent, step.test, step.phase, p[step.seconds_param],
                 warmup=p.get("warmup", 0), warmup_name=suite.warmup_phase(step))
