"""TPROC-C input generation (TPC-C 2.4.1): pure functions, no server needed."""
import random
from collections import Counter

from workloads.tpcc.load import CUSTOMERS, ITEMS
from workloads.tpcc.inputs import Inputs


def test_new_order_inputs_follow_the_standard_shape():
    inp = Inputs(random.Random(7), 0, 2, 4, True)
    n = 40_000
    rollbacks = remote = lines = not_local = 0
    cnts = Counter()
    item_hits = Counter()
    for _ in range(n):
        w, d, c, items, supply, qty, all_local = inp.new_order()
        assert w in (1, 3) and 1 <= d <= 10 and 1 <= c <= CUSTOMERS
        assert len(items) == len(supply) == len(qty) and 5 <= len(items) <= 15
        cnts[len(items)] += 1
        if items[-1] == ITEMS + 1:                 # the unused item: always the last line
            rollbacks += 1
            valid = items[:-1]
        else:
            valid = items
        assert valid == sorted(set(valid)) and all(1 <= i <= ITEMS for i in valid)
        assert all(1 <= q <= 10 for q in qty)
        r = sum(1 for sw in supply if sw != w)
        assert all(1 <= sw <= 4 for sw in supply)
        remote += r
        lines += len(items)
        not_local += r > 0
        assert all_local == (0 if r else 1)
        item_hits.update(valid)
    assert set(cnts) == set(range(5, 16))
    assert 0.007 < rollbacks / n < 0.013                     # 1 % rolled back
    assert 0.008 < remote / lines < 0.012                    # 1 % remote lines
    assert not_local > 0
    # NURand skews towards some items: the most frequent is far above the mean
    mean = sum(item_hits.values()) / ITEMS
    assert item_hits.most_common(1)[0][1] > 5 * mean


def test_one_warehouse_has_no_remote_lines_and_payments():
    inp = Inputs(random.Random(3), 0, 2, 1, False)
    for _ in range(2_000):
        w, d, c, items, supply, qty, all_local = inp.new_order()
        assert w == 1 and set(supply) == {1} and all_local == 1
        assert inp.customer(w, d) == (w, d)
