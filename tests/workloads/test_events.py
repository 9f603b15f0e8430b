import json

import pytest

from workloads import events as E


def test_buckets_are_ordered_and_tight():
    values = sorted(set(range(0, 5000)) | {10**k + d for k in range(4, 11) for d in (-1, 0, 1)})
    prev = -1
    for us in values:
        b = E.bucket_of(us)
        assert b >= prev
        assert E.bucket_low(b) <= us < E.bucket_low(b + 1)
        if us >= E.SUB:     # relative width stays within the declared resolution
            assert (E.bucket_low(b + 1) - E.bucket_low(b)) / us <= 2.0 / E.SUB
        prev = b
    # the hot loops' lookup table is the same function
    assert [E.BUCKET_LUT[us] for us in range(E.LUT_US)] == [E.bucket_of(us)
                                                            for us in range(E.LUT_US)]


def test_percentiles_of_a_known_distribution():
    hist: dict[int, int] = {}
    for us in range(1, 1001):           # 1 µs .. 1000 µs, one each
        b = E.bucket_of(us)
        hist[b] = hist.get(b, 0) + 1
    p = E.percentiles(hist)
    assert p["p50"] == pytest.approx(0.5, rel=0.04)
    assert p["p95"] == pytest.approx(0.95, rel=0.04)
    assert p["p99"] == pytest.approx(0.99, rel=0.04)
    assert p["max"] >= 1.0


def test_empty_histogram_has_no_percentiles():
    assert E.percentiles({}) == {"p50": None, "p95": None, "p99": None, "max": None}


def test_merge_is_exact():
    a, b = [[3, 2], [70, 1]], [[3, 1], [80, 4]]
    assert E.merge_sparse({}, a + b) == {3: 3, 70: 1, 80: 4}


def test_decode_refuses_garbage_and_newer_versions_with_sentences():
    with pytest.raises(E.EventFormatError, match="not a JSON event line"):
        E.decode(b"Traceback (most recent call last):")
    with pytest.raises(E.EventFormatError, match="update Versus"):
        E.decode(json.dumps({"v": E.FORMAT_VERSION + 1, "seq": 1, "t": 0, "kind": "x"}))
    with pytest.raises(E.EventFormatError, match="seq"):
        E.decode(json.dumps({"v": 1, "t": 0, "kind": "log"}))


def test_decode_tolerates_unknown_fields():
    ev = E.decode(json.dumps({"v": 1, "seq": 1, "t": 0.5, "kind": "log", "future": [1]}))
    assert ev["future"] == [1]


def test_line_splitter_keeps_partial_lines():
    s = E.LineSplitter()
    assert s.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert s.pending == b'{"b"'
    assert s.feed(b':2}\n') == [b'{"b":2}']


def test_every_kind_has_its_field_types_so_no_kind_is_taken_for_damage():
    # a kind added without its entry made every stored event of it a "damaged row"
    assert set(E.FIELD_TYPES) == set(E.KINDS)
    for kind in E.KINDS:
        ev = {"v": 1, "seq": 1, "t": 0.0, "kind": kind, "name": "p", "state": "start", "id": 1}
        assert E.problem(ev) is None, kind


def test_the_builders_check_nested_fields_where_the_body_is_made():
    good = E.sample(phase="measure", interval=[1.0, 2.0], rate=10.5, unit="TPS",
                    ops={"NEWORD": 10}, errors={}, lat_ms={"NEWORD": {"p95": 1.2, "p99": None}},
                    hist={"NEWORD": [[3, 10]]})
    ev = E.stamp(7, 2.00004, "sample", good)
    assert (ev["v"], ev["seq"], ev["t"], ev["kind"]) == (E.FORMAT_VERSION, 7, 2.0, "sample")
    assert E.problem(ev) is None
    bad = [({"interval": [1.0]}, "'interval' is not a list of two numbers"),
           ({"ops": {"NEWORD": "10"}}, "'ops' is not an object of numbers"),
           ({"lat_ms": {"NEWORD": 1.2}}, "'lat_ms' is not an object of objects of numbers"),
           ({"hist": {"NEWORD": [[3]]}}, "'hist' is not a histogram"),
           ({"counters": {"statements": True}}, "'counters' is not an object of numbers")]
    for change, words in bad:
        with pytest.raises(E.EventFormatError, match=words):
            E.sample(**{**good, **change})
        assert words in E.problem(E.stamp(1, 0.0, "sample", {**good, **change}))
    with pytest.raises(E.EventFormatError, match="'rate' is not a number"):
        E.summary(phase="load", interval=[0, 1], duration_s=1, ops_total=5, rate="5",
                  unit="rows/s")
