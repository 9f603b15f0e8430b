"""Random values as sysbench draws them: ids by distribution, c and pad strings.

Distributions (sysbench's --rand-type): `uniform`; `special` as sysbench 1.0's
sb_rand_special with its defaults (rand-spec-pct=1, rand-spec-res=75, rand-spec-iter=12:
75 % of the draws on 1 % of the ids around the middle, the rest bell-shaped); `zipfian` as
sysbench 1.1's sb_rand_zipfian (rejection-inversion sampling, exponent 0.8).
"""
from __future__ import annotations

import math
import random
from typing import Any, Callable

DISTRIBUTIONS = ("uniform", "special", "zipfian")
ZIPF_EXPONENT = 0.8          # sysbench's --rand-zipfian-exp default


def id_picker(distribution: str, size: int, rng: random.Random) -> Callable[[], int]:
    """A function returning ids in 1..size drawn as sysbench's sysbench.rand.default does."""
    rr = rng.random
    if distribution == "uniform":
        return lambda: int(rr() * size) + 1
    if distribution == "zipfian":
        return _zipfian(size, ZIPF_EXPONENT, rr)
    t = size - 1
    hot = max(1, t * 1 // 100)
    hot_base = t // 2 - t * 1 // 200

    def special() -> int:
        res = int(rr() * 4 * t) if t else 0        # range widened by 100 / (100 - 75)
        if res < t:
            return 1 + int(sum(rr() for _ in range(12)) * t / 12)
        return 1 + hot_base + res % hot
    return special


def _helper1(x: float) -> float:                 # log(1 + x) / x
    return math.log1p(x) / x if abs(x) > 1e-8 else 1 - x * (0.5 - x * (1 / 3 - 0.25 * x))


def _helper2(x: float) -> float:                 # (exp(x) - 1) / x
    return math.expm1(x) / x if abs(x) > 1e-8 else 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x))


def _h_integral(x: float, e: float) -> float:
    lx = math.log(x)
    return _helper2((1 - e) * lx) * lx


def _h_integral_inverse(x: float, e: float) -> float:
    t = max(-1.0, x * (1 - e))
    return math.exp(_helper1(t) * x)


def zipf_constants(n: int, e: float = ZIPF_EXPONENT) -> tuple[float, float, float, float]:
    """(e, s, top, span) of sb_rand_zipfian over 1..n (the compiled loop takes them too)."""
    s = 2 - _h_integral_inverse(_h_integral(2.5, e) - math.exp(-e * math.log(2)), e)
    top = _h_integral(n + 0.5, e)
    return e, s, top, _h_integral(1.5, e) - 1 - top


def _zipfian(n: int, e: float, rr) -> Callable[[], int]:
    _, s, top, span = zipf_constants(n, e)

    def zipf() -> int:
        while True:
            u = top + rr() * span
            x = _h_integral_inverse(u, e)
            k = int(x + 0.5)
            k = 1 if k < 1 else n if k > n else k
            if k - x <= s or u >= _h_integral(k + 0.5, e) - math.exp(-e * math.log(k)):
                return k
    return zipf


class Strings:
    """c and pad values: random digits in sysbench's groups of 11 joined by '-', cut from a
    1 MB block of random digits at random offsets (a fresh value per call, no Python loop
    per digit); as str, or as bytes for a client that sends bytes (`kind=bytes`)."""

    SIZE = 1 << 20

    def __init__(self, rng: random.Random, kind: type = str):
        digits = "".join("%0300d" % rng.getrandbits(1000) for _ in range(self.SIZE // 300 + 2))
        self._pool = digits[:self.SIZE + 120]
        self._rr = rng.random
        if kind is bytes:
            self._pool = self._pool.encode()
            self.c, self.pad = self._c_bytes, self._pad_bytes

    def c(self) -> str:
        o = int(self._rr() * self.SIZE)
        d = self._pool[o:o + 110]
        return (f"{d[:11]}-{d[11:22]}-{d[22:33]}-{d[33:44]}-{d[44:55]}-{d[55:66]}-"
                f"{d[66:77]}-{d[77:88]}-{d[88:99]}-{d[99:]}")

    def pad(self) -> str:
        o = int(self._rr() * self.SIZE)
        d = self._pool[o:o + 55]
        return f"{d[:11]}-{d[11:22]}-{d[22:33]}-{d[33:44]}-{d[44:]}"

    def made(self, make: Callable[[], Any], n: int = 1 << 14) -> list:
        """n values made ahead, for `drawn` (and the compiled loop, which draws alike)."""
        return [make() for _ in range(n)]

    def drawn(self, pool: list) -> Callable[[], Any]:
        """A drawer from values made ahead (a statement's value costs a random index, not
        a string build: writes stay cheap for the client, the server sees no difference)."""
        rr, n = self._rr, len(pool)
        return lambda: pool[int(rr() * n)]

    def _c_bytes(self) -> bytes:
        o = int(self._rr() * self.SIZE)
        d = self._pool[o:o + 110]
        return b"-".join((d[:11], d[11:22], d[22:33], d[33:44], d[44:55], d[55:66], d[66:77],
                          d[77:88], d[88:99], d[99:]))

    def _pad_bytes(self) -> bytes:
        o = int(self._rr() * self.SIZE)
        d = self._pool[o:o + 55]
        return b"-".join((d[:11], d[11:22], d[22:33], d[33:44], d[44:]))
