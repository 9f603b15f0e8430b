"""Scales for every chart: ranges that hold all the data from zero, at most eight round
steps, clock steps, and phase marks that neither share a label nor get clipped."""
import math

from app.model.scale import clock_step, fmt_clock, fmt_tick, log_range, nice_step, \
    phase_labels, value_range


def test_value_range_round_top_and_few_steps():
    assert value_range([[9000, 27000]]) == (0.0, 30000.0, 5000.0)
    assert value_range([[1.3, 3.5]]) == (0.0, 4.0, 1.0)
    lo, hi, step = value_range([[0.0002, 0.0007]])
    assert lo == 0 and hi >= 0.0007 and (hi - lo) / step <= 7
    assert value_range([[20, 95]], fixed_top=100) == (0.0, 100, 20.0)
    assert value_range([[20, 130]], fixed_top=100)[1] >= 130     # data above a fixed top
    assert value_range([[math.nan]]) == (0.0, 1.0, nice_step(1.0))
    for span in (1, 7, 13, 99, 12345, 0.003):
        assert span / nice_step(span) <= 7 + 1e-9


def test_phase_labels_merge_close_marks_and_keep_right_labels_inside():
    marks = [(0.22, "prepare"), (0.49, "measure"), (30.0, "check")]
    out = phase_labels(marks, 0.0, 31.0)
    assert [(round(x, 2), label) for x, label, _ in out] == [(0.49, "prepare · measure"),
                                                              (30.0, "check")]
    assert out[0][2] is False and out[1][2] is True     # the late label sits left of its line


def test_clock_steps_ticks_and_labels():
    assert clock_step(31) == 5 and clock_step(7200) == 1800 and clock_step(3) == 1
    assert fmt_clock(75) == "1:15" and fmt_clock(3725) == "1:02:05" and fmt_clock(-10) == "−0:10"
    assert fmt_tick(25000, 5000) == "25,000" and fmt_tick(0.25, 0.25) == "0.25"
    assert log_range([[0.02, 0.3]]) == (-2.0, 0.0)
