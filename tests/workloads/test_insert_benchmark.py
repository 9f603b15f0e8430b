"""The insert benchmark end to end on the machine's PostgreSQL and MariaDB: the CLI and the
agent as real processes, the real servers, a few seconds per step. Row counts and keys are
read from the server by the test itself."""
from __future__ import annotations

import json
import pytest

from app.store.session import SessionFile
from tests.dbs import query, versus

BASE = ("clients=2", "load-rows=4000", "write-rows=1000", "rows-per-commit=5")


def _run(url, out, *sets):
    args = ["run", "--target", url, "--workload", "insert-benchmark", "--out", str(out)]
    for s in BASE + sets:
        args += ["--set", s]
    r = versus(*args, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _summaries(path) -> dict[str, dict]:
    with SessionFile(path) as s:
        evs = s.events(s.runs()[-1].id, kinds=("summary",))
    return {e["phase"]: e for e in evs}


def _table_state(url) -> dict[str, tuple[int, int, int]]:
    """(rows, smallest key, largest key) per table, counted by the server."""
    return {t: tuple(int(x) for x in query(url, f"SELECT COUNT(*), MIN(transactionid), "
                                                  f"MAX(transactionid) FROM {t}")[0])
            for t in ("pi1", "pi2")}


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_steps_sizes_rates_and_missed_sla(request, db, versus_home, tmp_path):
    url = request.getfixturevalue(db)
    # l.i0 and l.x: each client's table loaded in key order, then indexed
    load = tmp_path / "load.versus"
    _run(url, load, "steps=l.i0,l.x")
    after_load = _table_state(url)
    for rows, lo, hi in after_load.values():
        # InnoDB may leave gaps in an auto-increment key after LOAD DATA
        assert rows == 4000 and lo == 1 and hi >= 4000
    s = _summaries(load)
    assert s["l.i0"]["role"] == "load" and s["l.i0"]["unit"] == "inserts/s"
    assert s["l.i0"]["ops_total"] == 8000 and s["l.i0"]["counters"]["rows_inserted"] == 8000
    assert s["l.x"]["ops_total"] == 8000 and s["l.x"]["unit"] == "rows/s"
    assert query(url, "SELECT COUNT(*) FROM pi1 WHERE price >= 0")[0][0] == 4000

    # l.i1 and l.i2 insert 800 + 200 rows per client and delete as many: the table size is
    # constant; then a query step asked for an impossible background rate is flagged
    writes = tmp_path / "writes.versus"
    _run(url, writes, "steps=l.i1,l.i2,qp", "rates=1000000", "query-seconds=1")
    s = _summaries(writes)
    for t, (rows, lo, hi) in _table_state(url).items():
        assert rows == 4000, t
        assert lo > after_load[t][1] + 1000 - 1     # the 1000 oldest rows went, and more in qp
    for step, n in (("l.i1", 1600), ("l.i2", 400)):
        c = s[step]["counters"]
        assert c["rows_inserted"] == c["rows_deleted"] == n, (step, c)
        assert s[step]["ibench"]["server_rows_inserted"] == n        # keys handed out
        assert "flags" not in s[step]
    qp = s["qp1000000"]
    assert qp["flags"][0]["name"] == "missed SLA" and qp["background"]["pct"] < 95
    assert qp["ibench"]["rows_per_query"] > 9 and qp["ibench"]["queries_per_s"] > 0
    shown = versus("show", str(writes))
    assert "flag: missed SLA" in shown.stdout and "per step:" in shown.stdout
    table = versus("compare", str(writes), "--markdown").stdout
    assert "per step" in table and "missed SLA" in table
    js = json.loads(versus("show", str(writes), "--json").stdout)
    rows = js["runs"][0]["step_table"]["rows"]
    assert [r["phase"] for r in rows] == ["l.i1", "l.i2", "qp1000000"]
    assert rows[2]["flags"][0]["name"] == "missed SLA"
    assert all(r["values"]["ib-db-size"] > 0 for r in rows)

    # qr100 and qp100: the background writers hold 100 rows/s each, counted by the server
    before = _table_state(url)
    rate = tmp_path / "rate.versus"
    _run(url, rate, "steps=qr,qp", "rates=100", "query-seconds=4")
    after = _table_state(url)
    s = _summaries(rate)
    seconds = s["qr100"]["duration_s"] + s["qp100"]["duration_s"]
    inserted = sum(after[t][2] - before[t][2] for t in after)
    assert abs(inserted / seconds - 200) <= 0.05 * 200, (inserted, seconds)
    assert all(after[t][0] == 4000 for t in after)
    for step in ("qr100", "qp100"):
        assert "flags" not in s[step], s[step]["flags"]
        assert s[step]["ibench"]["server_rows_inserted"] == s[step]["counters"]["rows_inserted"]
        assert s[step]["unit"] == "QPS" and s[step]["ops_total"] == s[step]["counters"]["queries"]
