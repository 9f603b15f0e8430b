"""SeriesStore: events map onto the right series, memory stays bounded, readers are safe."""
import threading

from app.model.series import SeriesStore


def sample(seq, t, rate, p50=0.2, p95=0.5, p99=0.9, errors=None, phase="measure"):
    return {"v": 1, "seq": seq, "t": t, "kind": "sample", "phase": phase,
            "interval": [t - 1.0, t], "ops": {"point": int(rate)}, "errors": errors or {},
            "rate": rate, "unit": "QPS", "clients": 2,
            "lat_ms": {"point": {"p50": p50, "p95": p95, "p99": p99, "max": 3.0},
                       "all": {"p50": p50, "p95": p95, "p99": p99, "max": 3.0}},
            "hist": {"point": [[100, 5]]}}


def host(seq, t, user=30.0, system=10.0, iowait=1.0, idle=59.0):
    return {"v": 1, "seq": seq, "t": t, "kind": "host", "interval": [t - 1.0, t],
            "source": "/proc", "cpu": {"user": user, "nice": 0, "system": system,
                                       "iowait": iowait, "irq": 0, "softirq": 0, "steal": 0,
                                       "idle": idle}, "cs_per_s": 1000, "runq": 1}


def test_sample_maps_to_throughput_latency_and_errors_at_interval_end():
    s = SeriesStore()
    s.ingest([sample(1, 1.02, 1500.0, errors={"deadlock": 2}),
              sample(2, 2.01, 1700.0, p50=0.3)])
    assert s.snapshot("throughput") == ([1.02, 2.01], [1500.0, 1700.0])
    assert s.snapshot("latency.p50") == ([1.02, 2.01], [0.2, 0.3])
    assert s.snapshot("latency.p99")[1] == [0.9, 0.9]
    assert s.snapshot("errors")[1] == [2.0, 0.0]       # per second over a 1 s interval


def test_host_maps_to_cpu_series():
    s = SeriesStore()
    s.ingest([host(1, 1.0), host(2, 2.0, user=50, idle=39)])
    assert s.snapshot("cpu.user") == ([1.0, 2.0], [30.0, 50.0])
    assert s.snapshot("cpu.idle")[1] == [59.0, 39.0]
    assert s.snapshot("cpu.iowait")[1] == [1.0, 1.0]
    assert s.snapshot("throughput") == ([], [])


def test_interval_without_operations_has_no_latency_point():
    s = SeriesStore()
    ev = sample(1, 1.0, 0.0)
    ev["lat_ms"]["all"] = {"p50": None, "p95": None, "p99": None, "max": None}
    s.ingest([ev])
    assert s.snapshot("throughput")[1] == [0.0]
    assert s.count("latency.p50") == 0


def test_phases_are_spans_and_stop_closes_the_open_one():
    s = SeriesStore()
    s.ingest([{"seq": 1, "t": 0.0, "kind": "phase", "name": "prepare", "state": "start"},
              {"seq": 2, "t": 3.0, "kind": "phase", "name": "prepare", "state": "end"},
              {"seq": 3, "t": 3.0, "kind": "phase", "name": "measure", "state": "start"}])
    assert s.phases() == [("prepare", 0.0, 3.0), ("measure", 3.0, None)]
    st = s.state()
    assert st.phase == "measure" and st.phase_t0 == 3.0 and not st.ended
    s.ingest([{"seq": 4, "t": 7.5, "kind": "end", "status": "stopped", "reason": "user"}])
    assert s.phases()[-1] == ("measure", 3.0, 7.5)
    st = s.state()
    assert st.ended and st.status == "stopped" and st.phase is None


def test_version_bumps_on_change_only_and_repeats_are_skipped():
    s = SeriesStore()
    v0 = s.version
    assert s.ingest([sample(1, 1.0, 10.0)]) == 1
    v1 = s.version
    assert v1 > v0
    assert s.ingest([sample(1, 1.0, 10.0)]) == 0      # same seq again: no double point
    assert s.version == v1
    assert s.count("throughput") == 1


def test_recent_points_at_full_resolution_and_older_ones_as_min_max_pairs():
    s = SeriesStore(recent=1000, buckets=64)
    s.ingest(sample(i, float(i), float(i)) for i in range(1, 5001))
    ts, vs = s.snapshot("throughput")
    assert ts == sorted(ts) and ts[0] == 1.0 and ts[-1] == 5000.0
    assert ts[-1000:] == [float(i) for i in range(4001, 5001)]
    assert vs[-1000:] == ts[-1000:]
    assert len(ts) <= 1000 + 1000 // 4 + 1 + 2 * 64
    assert s.count("throughput") == 5000
    assert s.last("throughput") == (5000.0, 5000.0)


def test_notes_carry_log_error_and_end_lines_once():
    s = SeriesStore()
    s.ingest([{"seq": 1, "t": 0.1, "kind": "log", "level": "warning", "message": "slow"},
              {"seq": 2, "t": 0.2, "kind": "error", "message": "boom", "fatal": True}])
    notes = s.notes_after(0)
    assert [(n.level, n.text) for n in notes] == [("warning", "slow"), ("error", "boom")]
    assert s.notes_after(notes[-1].id) == []


def test_writer_thread_and_reader_thread_share_the_store():
    s = SeriesStore(recent=500, buckets=64)
    done = threading.Event()

    def write():
        for i in range(1, 20_001):
            s.ingest([sample(i, float(i), float(i))])
        done.set()

    w = threading.Thread(target=write)
    w.start()
    while not done.is_set():
        ts, vs = s.snapshot("throughput")
        assert len(ts) == len(vs) <= 500 + 500 // 4 + 1 + 2 * 64
        assert ts == sorted(ts)
    w.join(10)
    assert s.snapshot("throughput")[0][-1] == 20_000.0


def tpcc_sample(seq, t, vus, phase="measure", ops=None):
    ops = ops or {"new-order": 45, "payment": 43, "order-status": 4, "delivery": 4,
                  "stock-level": 4}
    lat = {name: {"p50": 1.0 + i, "p95": 2.0 + i, "p99": 3.0 + i, "max": 9.0}
           for i, name in enumerate(ops)}
    return {"v": 1, "seq": seq, "t": t, "kind": "sample", "phase": phase,
            "interval": [t - 1.0, t], "rate": ops["new-order"] * 60.0, "unit": "NOPM",
            "clients": len(vus or ()), "vus": vus, "ops": ops, "errors": {},
            "lat_ms": {**lat, "all": lat["new-order"]},
            "counters": {"new_orders": ops["new-order"], "commits": 100, "rollbacks": 0}}


def test_server_tpm_is_commits_plus_rollbacks_per_minute_minus_own_polls():
    s = SeriesStore()
    s.ingest([{"v": 1, "seq": 1, "t": 1.0, "kind": "db", "interval": [0.0, 1.0],
               "source": "pg_stat_database", "own_xacts": 1,
               "counters": {"xact_commit": 301, "xact_rollback": 3, "blks_hit": 9}},
              {"v": 1, "seq": 2, "t": 3.0, "kind": "db", "interval": [1.0, 3.0],
               "source": "SHOW GLOBAL STATUS",
               "counters": {"Com_commit": 500, "Com_rollback": 10, "Com_select": 999}},
              {"v": 1, "seq": 3, "t": 4.0, "kind": "db", "interval": [3.0, 4.0],
               "source": "pg_stat_database", "own_xacts": 1,
               "counters": {"xact_commit": 0, "xact_rollback": 0}}])
    assert s.snapshot("server.tpm") == ([1.0, 3.0, 4.0], [303 * 60.0, 255 * 60.0, 0.0])
    assert s.snapshot("server.tps") == ([1.0, 3.0, 4.0], [303.0, 255.0, 0.0])
    assert s.server_source() == "pg_stat_database xact_commit + xact_rollback"


def test_per_type_series_come_from_samples_with_several_types_only():
    s = SeriesStore()
    s.ingest([sample(1, 1.0, 1500.0), tpcc_sample(2, 2.0, [[10, 0, "running"]])])
    assert s.snapshot("throughput")[1] == [1500.0, 2700.0]
    assert s.types() == ["new-order", "payment", "order-status", "delivery", "stock-level"]
    assert s.snapshot("latency.payment.p95") == ([2.0], [3.0])
    assert s.snapshot("latency.stock-level.p99") == ([2.0], [7.0])
    assert s.snapshot("ops.new-order") == ([2.0], [45.0])
    assert "latency.point.p95" not in s.names()             # one type: "all" says it


def test_virtual_user_table_is_the_latest_snapshot_and_restarts_with_each_phase():
    s = SeriesStore()
    info = [{"vu": 1, "home": "1"}, {"vu": 2, "home": "2"}]
    s.ingest([{"v": 1, "seq": 1, "t": 0.5, "kind": "phase", "name": "rampup",
               "state": "start", "vus": info}])
    assert [(v.vu, v.state, v.home, v.transactions) for v in s.virtual_users()] == \
        [(1, "starting", "1", None), (2, "starting", "2", None)]
    s.ingest([tpcc_sample(2, 1.5, [[5, 0, "running"], [7, 1, "running"]], phase="rampup"),
              tpcc_sample(3, 2.5, [[15, 0, "ended"], [17, 1, "ended"]], phase="rampup"),
              {"v": 1, "seq": 4, "t": 2.6, "kind": "phase", "name": "measure",
               "state": "start", "vus": info}])
    assert [v.state for v in s.virtual_users()] == ["starting", "starting"]
    s.ingest([tpcc_sample(5, 3.6, [[4, 0, "running"], [6, 0, "running"]])])
    rows = s.virtual_users()
    assert [(v.vu, v.state, v.home, v.transactions, v.errors, v.phase) for v in rows] == \
        [(1, "running", "1", 4, 0, "measure"), (2, "running", "2", 6, 0, "measure")]
    # Too many users for per-user totals: the rows stay, without numbers, and end with it.
    s.ingest([{**tpcc_sample(6, 4.6, None), "clients": 2},
              {"v": 1, "seq": 7, "t": 5.0, "kind": "phase", "name": "measure",
               "state": "end"}])
    assert [(v.state, v.transactions) for v in s.virtual_users()] == \
        [("ended", None), ("ended", None)]


def test_virtual_user_rows_are_bounded():
    from app.model.series import MAX_VUS
    s = SeriesStore()
    s.ingest([tpcc_sample(1, 1.0, [[1, 0, "running"]] * (MAX_VUS + 50))])
    assert len(s.virtual_users()) == MAX_VUS


def test_users_of_a_finished_test_wait_while_the_suite_goes_on():
    """Issue 20, item 10: the live table said "ended" while a suite ran its next test."""
    s = SeriesStore()
    info = [{"vu": 1, "home": ""}, {"vu": 2, "home": ""}]
    s.ingest([{"v": 1, "seq": 1, "t": 0.5, "kind": "phase", "name": "point-query",
               "state": "start", "vus": info},
              tpcc_sample(2, 1.5, [[5, 0, "running"], [7, 0, "running"]], phase="point-query"),
              tpcc_sample(3, 2.5, [[9, 0, "ended"], [11, 0, "ended"]], phase="point-query"),
              {"v": 1, "seq": 4, "t": 2.6, "kind": "phase", "name": "point-query",
               "state": "end"},
              {"v": 1, "seq": 5, "t": 2.7, "kind": "phase", "name": "scan.load",
               "state": "start"}])
    assert [v.state for v in s.virtual_users()] == ["waiting", "waiting"]
    s.ingest([{"v": 1, "seq": 6, "t": 3.0, "kind": "phase", "name": "scan.load",
               "state": "end"},
              {"v": 1, "seq": 7, "t": 3.1, "kind": "end", "status": "ok"}])
    assert [v.state for v in s.virtual_users()] == ["ended", "ended"]
