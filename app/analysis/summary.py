"""Per-phase summaries of a recorded run (``versus show``, the saved-run view).

The numbers are the comparison's own (app.analysis.compare: the agent's phase summary, the
merged histograms, host means over the phase) and the workload's declared result metrics
(app.analysis.results), so ``show`` and ``compare`` can never disagree. Each figure carries
its source.
"""
from __future__ import annotations

from typing import Any

from app.model.outages import describe as describe_outage
from app.store.session import SessionFile
from workloads import events as ev_format

from .compare import Comparison, load_run
from .cpu import describe_phase
from .results import flags_text, missing_text, result_parts

CPU_KEYS = ("user", "system", "iowait", "idle")


def summarize_run(session: SessionFile, run_id: str) -> dict[str, Any]:
    run = load_run(session, run_id, 0, str(session.path))
    comp = Comparison([run])
    out_phases = []
    for span in run.phases:
        name = span.name
        v = comp.phase_values(0, name)
        summ = run.summaries.get(name)
        rows = [i for i, p in enumerate(run.sample.phase) if p == name]
        t1 = span.t1 if span.t1 is not None else run.last_t
        hosts = [i for i, (a, b) in enumerate(zip(run.hosts.t0, run.hosts.t1))
                 if a is not None and b is not None and span.t0 <= (a + b) / 2 <= t1]
        has_rate = bool(rows or (summ is not None and summ.rate is not None))
        phase: dict[str, Any] = {
            "name": name, "role": run.phase_role(name),
            "duration_s": summ.duration_s if summ is not None and summ.duration_s is not None
            else round(t1 - span.t0, 3),
            "samples": len(rows), "host_samples": len(hosts),
            "throughput_mean": v.get("throughput") if has_rate else None,
            "throughput_unit": run.phase_unit(name),
            "throughput_source": "client count" if has_rate else None,
            "latency_ms": {q: v.get(f"latency.{q}") for q in ("p50", "p95", "p99")}
            | {"max": summ.latency_max if summ is not None else None},
            # how far the percentiles can be from the raw latencies' (the histograms of the
            # summary's event format); None where no histogram gave them
            "latency_precision": ({"pct": ev_format.precision_pct(summ.format_version),
                                   "text": ev_format.precision_text(summ.format_version)}
                                  if summ is not None and summ.has_histograms
                                  and summ.format_version is not None else None),
            "cpu": {k: v.get(f"cpu.{k}") for k in CPU_KEYS},
            "cpu_source": "/proc/stat, mean over the phase"}
        if summ is not None:
            phase["ops_total"] = summ.ops_total
            phase["errors_total"] = summ.errors_total or 0
            srv = summ.server
            if srv:
                phase["server"] = {"source": srv.get("source"), "counter": srv.get("counter"),
                                   "delta": srv.get("delta"), "rate": srv.get("rate")}
            if summ.lookup("driver_cpu"):
                phase["driver_cpu_us_per_op"] = summ.driver_cpu_us_per_op
            if summ.result:
                phase["result"] = summ.result
            if summ.missing:                    # a measurement source stopped: from when, why
                phase["missing"] = summ.missing
                phase["missing_text"] = missing_text(summ.missing)
            if summ.clients_lost:               # which virtual users, when, why
                phase["clients_asked"] = summ.clients_asked
                phase["clients_lost"] = summ.clients_lost
            results = run.results(name)
            if results:
                phase["results"] = [{"key": r.key, "title": r.title, "unit": r.unit,
                                     "value": r.value, "source": r.source, "role": r.role,
                                     "headline": r.headline} for r in results]
                head, sources, checks = result_parts(results, summ.duration_s)
                if head:
                    phase["result_text"] = (f"{head} ({sources})"
                                            + (f"; cross-check: {'; '.join(checks)}"
                                               if checks else ""))
            fl = run.flags(name)
            if fl:
                phase["flags"] = [vars(f) for f in fl]
                phase["flags_text"] = flags_text(fl)
        outs = [o.body for o in run.outages if o.phase == name and o.t_end is not None]
        if outs:
            phase["outages"] = outs
            phase["outages_text"] = [describe_outage(o) for o in outs]
        phase.update(describe_phase(run, name))
        out_phases.append(phase)
    columns, step_rows = comp.step_rows(0)
    errors = [e.get("message", "") for e in session.events(run_id, kinds=("error",))]
    end = next(iter(session.events(run_id, kinds=("end",))), None)
    return {"phases": out_phases, "status": end.get("status") if end else "incomplete",
            "step_table": {"columns": columns, "rows": step_rows} if step_rows else None,
            "reason": (end or {}).get("reason", ""), "errors": errors[:20],
            "server_version": run.server_version}
