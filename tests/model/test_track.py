"""Track: a live series at bounded memory, peaks kept, redraw data independent of run length."""
import numpy as np
import pytest

from app.model.track import Track

HOUR = 3_600


def fill(track, seconds, stall_at=None, value=1000.0):
    """1-s points of a steady ``value``; a 1-s stall (0) at ``stall_at``."""
    for i in range(1, seconds + 1):
        track.append(float(i), 0.0 if i == stall_at else value)


def test_a_one_second_stall_of_hour_two_is_in_the_full_zoom_out_of_ten_hours():
    tr = Track()
    fill(tr, 10 * HOUR, stall_at=2 * HOUR + 17)
    x, y = tr.window(0.0, 10 * HOUR, points=1_200)
    assert len(x) <= 2 * 1_200 + 4
    assert y.min() == 0.0 and y.max() == 1000.0
    at = x[y == 0.0]
    assert len(at) and abs(at[0] - (2 * HOUR + 17)) < 60      # drawn where it happened
    t, v = tr.arrays()                  # the whole run for other readers: the stall too
    assert v.min() == 0.0 and len(t) <= tr.recent + tr.recent // 4 + 1 + 2 * tr.buckets


def test_memory_stops_growing_after_the_first_hours():
    tr = Track()
    fill(tr, 2 * HOUR)
    at_two = tr.nbytes
    for i in range(2 * HOUR + 1, 10 * HOUR + 1):
        tr.append(float(i), 5.0)
    assert tr.nbytes == at_two
    assert tr.nbytes < 200_000
    assert len(tr) == 10 * HOUR


def test_window_size_does_not_grow_with_the_run():
    sizes = []
    tr = Track()
    done = 0
    for hours in (1, 3, 10):
        fill_to = hours * HOUR
        for i in range(done + 1, fill_to + 1):
            tr.append(float(i), float(i % 97))
        done = fill_to
        sizes.append(len(tr.window(0.0, float(done), points=1_000)[0]))
        # the followed tail (last 10 minutes) is full resolution whatever came before
        x, _y = tr.window(done - 600.0, float(done), points=1_000)
        assert np.all(np.diff(x) == 1.0) and x[-1] == done
    assert max(sizes) <= 2 * 1_000 + 4
    assert sizes[2] <= sizes[0] * 2


def test_mean_over_a_long_phase_matches_the_exact_one():
    tr = Track(recent=600, buckets=64)
    rng = np.random.default_rng(7)
    values = rng.uniform(100, 200, 5 * HOUR)
    for i, v in enumerate(values, start=1):
        tr.append(float(i), float(v))
    mean, covered = tr.mean(1.0, None)         # the points after t=1, each weighing 1 s
    assert mean == pytest.approx(values[1:].mean(), rel=1e-9)
    assert covered == pytest.approx(5 * HOUR - 1)
    # a phase inside the full-resolution window is exact
    mean, covered = tr.mean(5 * HOUR - 300.0, 5 * HOUR - 100.0)
    assert mean == pytest.approx(values[5 * HOUR - 300:5 * HOUR - 100].mean(), rel=1e-12)
    assert covered == pytest.approx(200.0)


def test_missing_values_neither_hide_peaks_nor_count_in_the_mean():
    tr = Track(recent=100, buckets=8)
    for i in range(1, 1001):
        tr.append(float(i), float("nan") if i % 10 == 0 else (50.0 if i == 333 else 1.0))
    _x, y = tr.window(0.0, 1000.0, points=10)
    assert np.nanmax(y) == 50.0 and np.nanmin(y) == 1.0
    mean, _covered = tr.mean(0.0, None)
    assert 1.0 < mean < 1.2


def test_a_saved_run_keeps_every_point():
    tr = Track(recent=None)
    fill(tr, 2 * HOUR, stall_at=100)
    t, v = tr.arrays()
    assert len(t) == 2 * HOUR and v[99] == 0.0
    x, y = tr.window(0.0, 2.0 * HOUR, points=500)
    assert len(x) <= 1_000 and y.min() == 0.0
