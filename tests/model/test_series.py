"""SeriesStore: events map onto the right series, memory stays bounded, readers are safe."""
import threading

from app.model.series import Ring, SeriesStore


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


def test_capacity_is_bounded_and_keeps_the_newest_points_in_order():
    s = SeriesStore(capacity=1000)
    s.ingest(sample(i, float(i), float(i)) for i in range(1, 5001))
    ts, vs = s.snapshot("throughput")
    assert len(ts) == 1000 and len(vs) == 1000
    assert ts == [float(i) for i in range(4001, 5001)]
    assert vs == ts
    assert s.last("throughput") == (5000.0, 5000.0)


def test_ring_storage_does_not_grow_past_capacity():
    r = Ring(100)
    for i in range(10_000):
        r.append(i, i)
    assert len(r) == 100
    assert r._t.buffer_info()[1] == 100      # the backing array itself stopped growing
    t, v = r.arrays()
    assert list(t) == list(range(9900, 10_000))


def test_notes_carry_log_error_and_end_lines_once():
    s = SeriesStore()
    s.ingest([{"seq": 1, "t": 0.1, "kind": "log", "level": "warning", "message": "slow"},
              {"seq": 2, "t": 0.2, "kind": "error", "message": "boom", "fatal": True}])
    notes = s.notes_after(0)
    assert [(n.level, n.text) for n in notes] == [("warning", "slow"), ("error", "boom")]
    assert s.notes_after(notes[-1].id) == []


def test_writer_thread_and_reader_thread_share_the_store():
    s = SeriesStore(capacity=500)
    done = threading.Event()

    def write():
        for i in range(1, 20_001):
            s.ingest([sample(i, float(i), float(i))])
        done.set()

    w = threading.Thread(target=write)
    w.start()
    while not done.is_set():
        ts, vs = s.snapshot("throughput")
        assert len(ts) == len(vs) <= 500
        assert ts == sorted(ts)
    w.join(10)
    assert s.snapshot("throughput")[0][-1] == 20_000.0
