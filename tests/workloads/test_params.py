import pytest

from workloads.params import ParamError
from workloads.registry import UnknownWorkload, get


def test_resolve_parses_and_checks_ranges():
    spec = get("point-query")
    v = spec.resolve({"clients": "4", "table-size": "10_000", "rebuild": "yes"})
    assert v["clients"] == 4 and v["table-size"] == 10000 and v["rebuild"] is True
    assert v["duration"] == spec.param("duration").default


@pytest.mark.parametrize("given,msg", [
    ({"clients": "zero"}, "clients takes a int value"),
    ({"clients": "0"}, "clients must be at least 1"),
    ({"nope": "1"}, "has no parameter 'nope'"),
    ({"rebuild": "maybe"}, "rebuild takes a bool"),
])
def test_bad_values_are_sentences(given, msg):
    with pytest.raises(ParamError, match=msg):
        get("point-query").resolve(given)


def test_unknown_workload_lists_known_ones():
    with pytest.raises(UnknownWorkload) as ei:
        get("tpcz")
    assert "point-query" in str(ei.value)
