"""One contract over every registered workload, on both real engines: a new workload gets
these tests by being in the registry.

The spec is complete and its files exist per dialect; a short real run (the spec's `quick`
parameters, 2 s measured) has exactly the declared phases in the declared order with their
roles; its events parse; the session reopened gives the same points as the live store; the
comparison, show and the table exports work on it; and the headline result is there (in the
measured phase, or a suite's first step); a suite's step table has a row per phase."""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
from pathlib import Path

import pytest

from app.analysis.compare import load_comparison
from app.analysis.results import new_store, result_values
from app.analysis.summary import summarize_run
from app.model.runset import RunRef
from app.store.export import tables_text, to_json
from app.store.session import SessionFile
from tests.dbs import versus
from workloads import events as ev_format
from workloads.params import ROLES, evaluate
from workloads.registry import WORKLOADS

SPECS = sorted(WORKLOADS)
ENGINES = {"postgres": "pg_db", "mysql": "mariadb_db"}
# HammerDB's CLI kit, where the workplace keeps it (its `hdb` is found on the PATH)
HDB_KIT = Path(__file__).resolve().parents[3] / "shared" / "peer-tools" / "hammerdb"
if not HDB_KIT.is_dir():
    HDB_KIT = Path("/work/shared/peer-tools/hammerdb")


def _probe(spec, values, monkeypatch) -> None:
    """Skip, with the reason, a workload whose external tool this machine lacks."""
    if not spec.probe:
        return
    if (HDB_KIT / "hdb").exists():
        monkeypatch.setenv("PATH", f"{HDB_KIT}{os.pathsep}{os.environ.get('PATH', '')}")
    mod, _, fn = spec.probe.partition(":")
    reason = getattr(importlib.import_module(mod), fn)(values)
    if reason:
        pytest.skip(reason)


def _folder(spec) -> Path:
    mod, _, _ = spec.runner.partition(":")
    return Path(importlib.import_module(mod.rsplit(".", 1)[0]).__file__).parent


@pytest.mark.parametrize("name", SPECS)
def test_spec_is_complete(name):
    spec = WORKLOADS[name]
    assert spec.title and spec.description and spec.params and spec.dialects
    assert spec.runner and ":" in spec.runner
    mod, _, fn = spec.runner.partition(":")
    assert callable(getattr(importlib.import_module(mod), fn))
    for hook in (spec.checker, spec.importer, spec.probe):
        if not hook:
            continue
        mod, _, fn = hook.partition(":")
        assert callable(getattr(importlib.import_module(mod), fn))
    for p in spec.params:
        assert p.help, p.name
        assert p.parse(p.default) == p.default, p.name           # defaults are in range
    values = spec.resolve(spec.quick)
    phases = spec.planned_phases(values)
    assert phases and all(p.role in ROLES for p in phases)
    assert any(p.role in ("measured", "step") for p in phases)
    for ph in spec.phase_specs(values):
        for expr in (ph.seconds, ph.when):
            if expr:
                evaluate(expr, values)                            # names real parameters
    assert spec.headline.unit and spec.headline.summary
    assert spec.seconds_param("measured") or spec.phase_plan
    folder = _folder(spec)
    for sub in ("schema", "procedures"):
        if (folder / sub).is_dir():
            for dialect in spec.dialects:
                assert (folder / sub / f"{dialect}.sql").is_file(), (sub, dialect)
    json.dumps(spec.to_json())
    # a metric key means one thing in every workload that declares it (keys are global: a
    # compare table has one row per key, so TPROC-C's NOPM and HammerDB's line up; each run
    # reads its value where its own spec says), and each chart draws metrics the app knows
    from app.analysis.metrics import CHARTS, METRICS
    def meaning(m):
        return (m.title, m.unit, m.role, m.lower_is_better)
    others = {m.key: meaning(m) for n, s in WORKLOADS.items() if n != name for m in s.metrics}
    clashes = {m.key for m in spec.metrics if m.key in others and others[m.key] != meaning(m)}
    assert not clashes, clashes
    for c in spec.charts:
        assert all(k in METRICS for k in CHARTS[c.name].metrics), (c.name, CHARTS[c.name])


CASES = [(n, d) for n in SPECS for d in WORKLOADS[n].dialects if d in ENGINES]


@pytest.mark.parametrize("name,dialect", CASES)
def test_short_real_run_meets_the_contract(request, name, dialect, tmp_path, versus_home,
                                           monkeypatch):
    spec = WORKLOADS[name]
    params = dict(spec.quick)
    measured = spec.seconds_param("measured")
    if measured:
        # 2 s, unless the quick parameters say the tool cannot measure less (HammerDB:
        # whole minutes)
        params.setdefault(measured, 2)
    _probe(spec, spec.resolve(params), monkeypatch)
    url = request.getfixturevalue(ENGINES[dialect])
    out = tmp_path / "run.versus"
    argv = ["run", "--target", url, "--workload", name, "--out", str(out)]
    for k, v in params.items():
        argv += ["--set", f"{k}={v}"]
    r = versus(*argv, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    with SessionFile(out) as s:
        (run,) = s.runs()
        evs = s.events(run.id)
        summ = summarize_run(s, run.id)
    # every event is one the format understands, numbered without gaps
    for e in evs:
        ev_format.decode(json.dumps(e))
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "ok"
    # exactly the declared phases, in order, with their roles
    planned = spec.planned_phases(spec.resolve(params))
    started = [(e["name"], e.get("role")) for e in evs
               if e["kind"] == "phase" and e["state"] == "start"]
    assert started == [(p.name, p.role) for p in planned], (started, planned)
    # live and reopened are the same points
    live = new_store()
    live.ingest(evs)
    comp = load_comparison([RunRef(str(out))])
    for key in ("throughput", "latency.p95", "cpu.user", "server.tps"):
        t, v = live.snapshot(key)
        ct, cv = comp.series(0, key)
        assert list(ct) == pytest.approx(t) and list(cv) == pytest.approx(v), key
    # the headline result of the measured phase (a suite's first step), with its source
    measured = next((p for p in planned if p.role == "measured"), None) \
        or next(p for p in planned if p.role == "step")
    values = result_values(spec, comp.runs[0].summaries[measured.name])
    head = next(v for v in values if v.headline)
    assert head.value is not None and head.value > 0 and head.source
    row = next(p for p in summ["phases"] if p["name"] == measured.name)
    assert row["throughput_unit"] == measured.unit and row["result_text"]
    if spec.step_table:
        assert [r["phase"] for r in summ["step_table"]["rows"]] == \
            [p.name for p in planned if p.role in ("load", "step", "measured")]
    # compare and the table exports
    # (a headline read from the summary's rate is the Throughput row, in its unit)
    for fmt in ("markdown", "csv", "html"):
        text = tables_text(comp.tables(0), fmt)
        assert spec.headline.title in text or (spec.headline.summary == "rate"
                                               and spec.headline.unit in text)
    json.loads(to_json(comp.to_json(0)))
    json.loads(to_json(comp.series_json()))
    # every chart this run has renders (not in the Qt-free job: charts are drawn with Qt)
    if importlib.util.find_spec("PySide6") is not None:
        from PySide6.QtWidgets import QApplication
        from app.ui.charts.render import render_png_bytes
        QApplication.instance() or QApplication([])
        charts = comp.charts()
        assert charts and "throughput" in charts
        for c in charts:
            assert render_png_bytes(comp, c, (800, 450)).startswith(b"\x89PNG"), c
