"""The server's counters per operation in the efficiency table (issue 13), on real recorded
streams: a point select by primary key is one row fetched by PostgreSQL's own count and at
least one buffer pool read request by InnoDB's, and changes no row."""
from __future__ import annotations

import pytest

from app.analysis.compare import load_comparison
from app.model.runset import RunRef
from tests.recorded import session_of


def _rows(path):
    """The measure phase's values and its efficiency table."""
    comp = load_comparison([RunRef(str(path))])
    vals = comp.phase_values(0, "measure")
    t = comp.efficiency_table("measure")
    return vals, t


def test_point_selects_cost_one_row_each_by_postgresqls_own_count(tmp_path):
    vals, t = _rows(session_of("point-query-pg", tmp_path))
    # pg_stat_database is flushed by backends about once a second: the edges of a 3 s
    # phase lose a little of it
    assert vals["srv.tup_fetched"] == pytest.approx(1.0, rel=0.10)
    assert vals["srv.tup_changed"] == 0
    assert vals["srv.blks_hit"] >= 1.0
    assert vals.get("srv.bp_read_requests") is None
    assert any(r[0].startswith("Rows fetched (pg_stat_database)") for r in t.rows)
    assert any("server counters" in n and "pg_stat_database" in n for n in t.notes)


def test_point_selects_read_the_buffer_pool_by_innodbs_own_count(tmp_path):
    vals, t = _rows(session_of("point-query-mariadb", tmp_path))
    assert vals["srv.bp_read_requests"] >= 1.0
    assert vals.get("srv.tup_fetched") is None
    titles = [r[0] for r in t.rows]
    assert "InnoDB buffer pool read requests per op" in titles
    assert not any("pg_stat_database" in x for x in titles)


def test_a_write_workload_counts_its_changed_rows(tmp_path):
    # TPROC-C on PostgreSQL: every new order inserts and updates rows (about 10 order lines,
    # stock updates …), so rows changed per new order is well above one
    vals, _ = _rows(session_of("tpcc-pg", tmp_path))
    assert vals["srv.tup_changed"] > 5 and vals["srv.wal_bytes"] > 1000
