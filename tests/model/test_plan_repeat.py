"""Plans with repeat = N: rounds of every configuration, interleaved or shuffled by a seed."""
from __future__ import annotations

import pytest

from app.model.plan import PlanError, parse_plan

PLAN = """
name = "15 vs 18"
workload = "point-query"
{extra}
profiles = ["defaults"]

[[targets]]
name = "pg15"
managed = "/usr/lib/postgresql/15/bin"

[[targets]]
name = "pg18"
managed = "/usr/lib/postgresql/18/bin"
"""


def _plan(extra: str):
    return parse_plan(PLAN.format(extra=extra))


def test_interleaved_rounds():
    runs = _plan("repeat = 3").expand()
    assert [r.target for r in runs] == ["pg15", "pg18"] * 3
    assert [r.round for r in runs] == [1, 1, 2, 2, 3, 3]
    assert [r.config for r in runs] == [0, 1] * 3
    assert [r.index for r in runs] == list(range(6))
    assert runs[2].label == "pg15 / defaults #2"


def test_one_run_each_without_repeat():
    runs = _plan("").expand()
    assert [r.label for r in runs] == ["pg15 / defaults", "pg18 / defaults"]


def test_shuffled_blocks_follow_the_seed():
    text = "repeat = 8\norder = \"shuffled\"\nseed = {}"
    a = [r.target for r in _plan(text.format(7)).expand()]
    assert a == [r.target for r in _plan(text.format(7)).expand()]      # same seed, same order
    # every round holds each configuration once
    for i in range(0, 16, 2):
        assert sorted(a[i:i + 2]) == ["pg15", "pg18"]
    orders = {tuple(a[i:i + 2]) for i in range(0, 16, 2)}
    assert orders == {("pg15", "pg18"), ("pg18", "pg15")}                # shuffled, not fixed
    b = [r.target for r in _plan(text.format(8)).expand()]
    assert a != b


def test_round_trip_keeps_repeats():
    import tomli_w
    plan = _plan("repeat = 4\norder = \"shuffled\"\nseed = 3")
    again = parse_plan(tomli_w.dumps(plan.to_dict()))
    assert (again.repeat, again.order, again.seed) == (4, "shuffled", 3)
    assert [r.label for r in again.expand()] == [r.label for r in plan.expand()]


@pytest.mark.parametrize("extra, words", [
    ("repeat = 0", "repeat is how many times"),
    ("repeat = true", "repeat is how many times"),
    ("repeat = 3\norder = \"random\"", "order is"),
    ("repeat = 3\norder = \"shuffled\"\nseed = 1.5", "seed is a whole number"),
])
def test_bad_repeat_settings(extra, words):
    with pytest.raises(PlanError, match=words):
        _plan(extra)
