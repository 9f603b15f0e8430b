"""point-query at a fixed rate on PostgreSQL: the clients follow a schedule of intended
starts; latency is measured from the intended start, the service time apart."""
from __future__ import annotations

from tests.dbs import pg_db  # noqa: F401  (fixture)
from tests.workloads.agentrun import local_target, run_agent

BASE = {"table-size": 2000, "clients": 2}


def _measure(evs: list[dict]) -> dict:
    return next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")


def test_a_third_of_the_closed_loop_rate_is_held_within_1_percent(tmp_path, pg_db):  # noqa: F811
    target = local_target(pg_db.rsplit("/", 1)[1], "postgres")
    evs = run_agent(tmp_path, "point-query", {**BASE, "duration": 3}, target)
    assert evs[-1]["status"] == "ok", evs[-3:]
    closed = _measure(evs)
    assert "schedule" not in closed and "timings" not in closed
    rate = max(10, int(closed["rate"] / 3))

    evs = run_agent(tmp_path, "point-query", {**BASE, "duration": 5, "rate": rate}, target)
    assert evs[-1]["status"] == "ok", evs[-3:]
    s = _measure(evs)
    want = rate * s["duration_s"]
    assert abs(s["ops_total"] - want) <= 0.01 * want, (s["ops_total"], want, s["schedule"])
    sched = s["schedule"]
    assert sched["rate_per_s"] == rate
    assert sched["late_starts"] <= s["ops_total"] and sched["mean_lag_ms"] >= 0
    # every query waited at least its service time: from the intended start is never shorter
    svc = s["timings"]["service"]
    assert svc["n"] == s["ops_total"]
    lat = s["lat_ms"]["all"]
    assert lat["p50"] >= svc["p50"] and lat["p99"] >= svc["p99"]
    # each sample carries both latencies
    samples = [e for e in evs if e["kind"] == "sample" and e["phase"] == "measure"]
    assert samples and all("service" in e.get("timings", {}) for e in samples if e["ops"])
