"""TPROC-C input generation (TPC-C 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1): home warehouses per
virtual user, and each transaction's inputs drawn ahead in batches."""
from __future__ import annotations

import math

from .load import C_ID, C_LAST_RUN, C_OL_I_ID, CUSTOMERS, DISTRICTS, ITEMS, LAST_NAMES, nurand
from .mix import WEIGHTS

_LOG_99 = math.log(0.99)           # remote order lines drawn by geometric jumps


def home_warehouses(index: int, nvu: int, warehouses: int, all_warehouses: bool) -> list[int]:
    if all_warehouses and warehouses > nvu:
        return [w for w in range(1, warehouses + 1) if (w - 1) % nvu == index]
    return [index % warehouses + 1]


def vu_info(nvu: int, warehouses: int, all_warehouses: bool) -> list[dict]:
    """What the virtual-user table shows: each user's home warehouse(s)."""
    out = []
    for i in range(nvu):
        homes = home_warehouses(i, nvu, warehouses, all_warehouses)
        out.append({"vu": i + 1, "home": ",".join(map(str, homes[:8]))
                    + ("…" if len(homes) > 8 else "")})
    return out


class Inputs:
    def __init__(self, rng, index: int, nvu: int, warehouses: int, all_warehouses: bool):
        self.rng = rng
        self.rr = rng.random
        self.bits = rng.getrandbits
        self.W = warehouses
        self.homes = home_warehouses(index, nvu, warehouses, all_warehouses)
        # the cumulative mix
        acc, self.cum = 0, []
        for wt in WEIGHTS:
            acc += wt
            self.cum.append(acc)
        self.total = acc

    def pick_type(self) -> int:
        x = self.rr() * self.total
        for i, c in enumerate(self.cum):
            if x < c:
                return i
        return len(self.cum) - 1

    def home(self) -> int:
        h = self.homes
        return h[0] if len(h) == 1 else h[int(self.rr() * len(h))]

    def other_w(self, w: int) -> int:
        o = 1 + int(self.rr() * (self.W - 1))
        return o + 1 if o >= w else o

    def new_order(self):
        """(w, d, c, items, supply warehouses, quantities, all_local); items distinct and in
        ascending order, so every order locks its stock rows in one global order."""
        rr, bits = self.rr, self.bits
        w = self.home()
        d = 1 + int(rr() * DISTRICTS)
        c = ((bits(10) | (1 + int(rr() * CUSTOMERS))) + C_ID) % CUSTOMERS + 1
        cnt = 5 + int(rr() * 11)
        n = cnt - 1 if rr() < 0.01 else cnt               # 1 %: the last item is unused
        # NURand(8191, 1, ITEMS), inlined; drawn again while two lines share an item
        seen = {((bits(13) | (1 + int(rr() * ITEMS))) + C_OL_I_ID) % ITEMS + 1
                for _ in range(n)}
        while len(seen) < n:
            seen.add(((bits(13) | (1 + int(rr() * ITEMS))) + C_OL_I_ID) % ITEMS + 1)
        items = sorted(seen)
        if n < cnt:
            items.append(ITEMS + 1)
        qty = [1 + int(rr() * 10) for _ in range(cnt)]
        supply = [w] * cnt
        all_local = 1
        if self.W > 1:
            # 1 % remote lines, a Bernoulli process: jump from one remote line to the next
            k = int(math.log(1.0 - rr()) / _LOG_99)
            while k < cnt:
                supply[k] = self.other_w(w)
                all_local = 0
                k += 1 + int(math.log(1.0 - rr()) / _LOG_99)
        return w, d, c, items, supply, qty, all_local

    def customer(self, w: int, d: int):
        """(c_w_id, c_d_id) for Payment: 85 % home, 15 % a remote warehouse."""
        rr = self.rr
        if self.W > 1 and rr() >= 0.85:
            return self.other_w(w), 1 + int(rr() * DISTRICTS)
        return w, d

    def by_name(self):
        """(c_id, c_last): 60 % by last name (c_id 0), else by id (c_last '')."""
        rr = self.rr
        if rr() < 0.6:
            return 0, LAST_NAMES[nurand(rr, 255, 0, 999, C_LAST_RUN)]
        return nurand(rr, 1023, 1, CUSTOMERS, C_ID), ""

    def amount(self) -> str:
        return "%d.%02d" % divmod(100 + int(self.rr() * 499901), 100)


def pay_input(inp: Inputs):
    rr = inp.rr

    def gen():
        w = inp.home()
        d = 1 + int(rr() * DISTRICTS)
        cw, cd = inp.customer(w, d)
        c, last = inp.by_name()
        return w, d, cw, cd, c, last, inp.amount()
    return gen


def os_input(inp: Inputs):
    rr = inp.rr

    def gen():
        c, last = inp.by_name()
        return inp.home(), 1 + int(rr() * DISTRICTS), c, last
    return gen


def dlv_input(inp: Inputs):
    rr = inp.rr
    return lambda: (inp.home(), 1 + int(rr() * 10))


def sl_input(inp: Inputs):
    rr = inp.rr
    return lambda: (inp.home(), 1 + int(rr() * DISTRICTS), 10 + int(rr() * 11))
