"""The compiled event loop's parts that the end-to-end runs (test_micro.py) cannot isolate:
its ids drawn as values.py draws them, its structures, constants and histogram bucket as the
Python side has them, and the fallback when the host cannot build it."""
from __future__ import annotations

import ctypes as C
import random
from collections import Counter

import pytest

from workloads.engine.sql.db import DatabaseError, TargetInfo
from workloads.engine.loop import fastloop
from workloads.events import BUCKET_LUT, LUT_US, MAX_US, N_BUCKETS, SUB_BITS, bucket_of
from workloads.sbtest import runner
from workloads.sbtest.values import id_picker, zipf_constants


@pytest.fixture
def fresh_build(monkeypatch, tmp_path):
    """fastloop's module state as in a new agent, with its cache in tmp_path."""
    monkeypatch.setattr(fastloop, "_lib", None)
    monkeypatch.setattr(fastloop, "_why", "")
    monkeypatch.setenv("VERSUS_ROOT", str(tmp_path))
    return tmp_path


def _c_draws(lib, dist: str, size: int, n: int) -> list[int]:
    j = fastloop.VJob()
    j.dist, j.size = fastloop.DISTS[dist], size
    j.z_e, j.z_s, j.z_top, j.z_span = zipf_constants(size)
    rng = random.Random(7)
    for i in range(4):
        j.rng[i] = rng.getrandbits(64) | 1
    out = (C.c_int64 * n)()
    lib.fastloop_draw(C.byref(j), C.c_int64(n), out)
    return list(out)


@pytest.mark.parametrize("dist", ["uniform", "special", "zipfian"])
def test_the_compiled_loop_draws_ids_as_values_py_does(fresh_build, dist):
    lib = fastloop.library()
    assert lib is not None, fastloop.why()
    assert list(fresh_build.glob("cache/fastloop-*.so"))         # built into the cache
    size, n = 10_000, 200_000
    c_ids = _c_draws(lib, dist, size, n)
    pick = id_picker(dist, size, random.Random(11))
    py_ids = [pick() for _ in range(n)]
    assert min(c_ids) >= 1 and max(c_ids) <= size
    # the same distribution: the share of draws per tenth of the ids, and on the 1 % hottest
    # ids of each, agree within sampling noise
    for a, b in zip(_tenths(c_ids, size), _tenths(py_ids, size), strict=True):
        assert a == pytest.approx(b, abs=0.01), (dist, _tenths(c_ids, size),
                                                 _tenths(py_ids, size))
    assert _hottest(c_ids, size) == pytest.approx(_hottest(py_ids, size), abs=0.01), dist
    if dist == "special":
        assert _hottest(c_ids, size) > 0.7       # 75 % of the draws on 1 % of the ids


def _tenths(ids: list[int], size: int) -> list[float]:
    by = Counter((i - 1) * 10 // size for i in ids)
    return [by.get(k, 0) / len(ids) for k in range(10)]


def _hottest(ids: list[int], size: int) -> float:
    return sum(c for _, c in Counter(ids).most_common(size // 100)) / len(ids)


def test_without_a_compiler_the_python_loop_runs_and_says_why(fresh_build, monkeypatch):
    monkeypatch.setenv("PATH", str(fresh_build))                  # no cc, no gcc
    monkeypatch.delenv("CC", raising=False)
    target = TargetInfo(engine="postgres", address="127.0.0.1", port=5432, user="postgres",
                        database="postgres")
    loop, said = runner.loop_for(target, {"client-loop": "auto"})
    assert loop == "python"
    assert said == ("Python event loop: no C compiler (cc) on the host to build the compiled "
                    "loop (Debian: apt-get install gcc)")
    with pytest.raises(DatabaseError, match="client-loop=compiled, but no C compiler"):
        runner.loop_for(target, {"client-loop": "compiled"})


def test_the_compiled_loops_structures_and_constants_are_the_python_sides(fresh_build):
    lib = fastloop.library()
    assert lib is not None, fastloop.why()
    lib.fastloop_layout.restype = C.c_char_p
    c_side = dict(kv.split("=") for kv in lib.fastloop_layout().decode().split())
    c_side = {k: int(v) for k, v in c_side.items()}
    assert c_side == fastloop.layout()


def test_the_compiled_loops_histogram_bucket_is_bucket_of_from_1_us_to_2_to_the_37(
        fresh_build):
    lib = fastloop.library()
    assert lib is not None, fastloop.why()

    j = fastloop.VJob()
    j.lut = C.addressof((C.c_uint16 * len(BUCKET_LUT)).from_buffer(BUCKET_LUT))
    j.lut_us, j.sub_bits, j.max_us, j.n_buckets = LUT_US, SUB_BITS, MAX_US, N_BUCKETS
    # every value up to 2^16 µs, then every bucket edge ± 1 of each octave up to 2^37 (the
    # last bucket's edge) and a little beyond
    values = set(range(1, 1 << 16))
    half = 1 << (SUB_BITS - 1)
    for e in range(16, 39):
        base = 1 << e
        for k in range(half):
            edge = base + k * (base // half)
            values |= {edge - 1, edge, edge + 1}
    us = sorted(values)
    arr = (C.c_uint64 * len(us))(*us)
    out = (C.c_int64 * len(us))()
    lib.fastloop_buckets(C.byref(j), C.c_int64(len(us)), arr, out)
    differ = [(u, b, bucket_of(u)) for u, b in zip(us, out) if b != bucket_of(u)]
    assert not differ, differ[:10]
    assert max(out) == N_BUCKETS - 1 and bucket_of(MAX_US) == N_BUCKETS - 1
