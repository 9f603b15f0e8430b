"""The virtual user's event loops: the compiled one (fastloop.c runs the events and comes back
only for a failed statement) and the Python one (an event function, timed and counted here).
Both count an event in the VU's histogram slot of its first type and the statements it sent in
the workload counter `statements_slot`; a failed statement rolls its transaction back and is
told once per kind of error."""
from __future__ import annotations

import time
from typing import Callable

from ...events import BUCKET_LUT, LUT_US, bucket_of
from ..sql.clients import StatementFailed
from .fastloop import Job


def failed(vu, exc: StatementFailed, reported: set[str], rollback, statements_slot: int) -> bool:
    """Roll a failed transaction back, count the failed event and say why, once per kind
    of error; False when the connection is lost (the VU ends)."""
    if rollback is not None and not exc.lost:
        try:
            rollback(())
            exc.sent += 1
        except StatementFailed:
            pass
    vu.arr[vu.base(0) + 1] += 1
    vu.carr[statements_slot] += exc.sent
    msg = str(exc).split("\n")[0]
    if exc.lost:
        vu.connection_lost(msg)
        return False
    if msg not in reported and len(reported) < 5:     # once per kind, not a flood
        reported.add(msg)
        vu.report_error(("ignored as sysbench does: " if exc.ignorable else "") + msg)
    return True


def compiled_loop(vu, job: Job, rollback, statements_slot: int) -> bool:
    """fastloop.c runs the events; a failed statement comes back here to be told (and its
    transaction rolled back), as in the Python loop."""
    reported: set[str] = set()
    while True:
        rc = job.run(job.ref)
        if rc == 0:
            return True
        if rc < 0:
            raise RuntimeError("the compiled loop refused the event (too many steps)")
        if not failed(vu, job.failure(), reported, rollback, statements_slot):
            return False


def python_loop(vu, event: Callable[[], int], rollback, statements_slot: int) -> bool:
    """Run events until told to stop; False when the connection was lost."""
    arr, base = vu.arr, vu.base(0)
    hb = base + 2
    carr, cs = vu.carr, statements_slot
    stop = vu.stop
    clock = time.perf_counter_ns
    lut, lut_us = BUCKET_LUT, LUT_US
    reported: set[str] = set()
    while not stop.value:
        t0 = clock()
        try:
            n = event()
        except StatementFailed as exc:
            if not failed(vu, exc, reported, rollback, cs):
                return False
            continue
        us = (clock() - t0) // 1000
        arr[hb + (lut[us] if us < lut_us else bucket_of(us))] += 1
        arr[base] += 1
        carr[cs] += n
    return True


LATE_NS = 10_000_000        # a start this late (10 ms) counts as late


def paced_loop(vu, event: Callable[[], int], rollback, statements_slot: int, per_s: float,
               offset: float, service: int, late_slot: int, lag_slot: int) -> bool:
    """Run events at `per_s` a second on a schedule of evenly spaced intended starts (the
    first `offset` of a spacing after the go), never skipping one: a VU behind its schedule
    sends at once until it has caught up. The histogram of the VU's first type holds the
    latency from the intended start (what a user waits), the one at vu.base(service) the
    service time (from the actual send); the workload counters at late_slot and lag_slot
    count the events that started more than 10 ms late and their total lag in µs."""
    arr, base = vu.arr, vu.base(0)
    hb = base + 2
    sb = vu.base(service)
    carr, cs = vu.carr, statements_slot
    stop = vu.stop
    clock = time.perf_counter_ns
    sleep = time.sleep
    lut, lut_us = BUCKET_LUT, LUT_US
    reported: set[str] = set()
    step = 1e9 / per_s
    start = clock()
    k = 0
    while not stop.value:
        intended = start + int((k + offset) * step)
        k += 1
        now = clock()
        while now < intended:          # short sleeps: the phase's end is seen within 50 ms
            sleep(min(intended - now, 50_000_000) / 1e9)
            if stop.value:
                return True
            now = clock()
        lag = now - intended
        try:
            n = event()
        except StatementFailed as exc:
            if not failed(vu, exc, reported, rollback, cs):
                return False
            continue
        t1 = clock()
        us = (t1 - intended) // 1000
        arr[hb + (lut[us] if us < lut_us else bucket_of(us))] += 1
        arr[base] += 1
        us = (t1 - now) // 1000
        arr[sb + 2 + (lut[us] if us < lut_us else bucket_of(us))] += 1
        arr[sb] += 1
        carr[cs] += n
        if lag > LATE_NS:
            carr[late_slot] += 1
        carr[lag_slot] += lag // 1000
    return True
