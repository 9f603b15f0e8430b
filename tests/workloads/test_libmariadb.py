"""The micro suite's MySQL/MariaDB client through MariaDB Connector/C (ctypes), against the
machine's MariaDB: what each call returns, what the server counted, and how each failure
reads (a sysbench-ignorable error, a lost connection, a bad statement, a wrong password)."""
from __future__ import annotations

import pymysql
import pytest

from tests.dbs import MY, unique
from workloads.engine.sql.db import DatabaseError, TargetInfo
from workloads.engine.sql import libmariadb
from workloads.engine.sql.clients import LibmariadbClient, StatementFailed

pytestmark = pytest.mark.skipif(libmariadb.load() is None, reason="needs libmariadb3")


def _target(db: str, password: str = "", user: str = "root") -> TargetInfo:
    return TargetInfo("mariadb", MY["host"], MY["port"], user, db, password)


def _db(mariadb_db: str) -> str:
    return mariadb_db.rsplit("/", 1)[1]


@pytest.fixture
def c(mariadb_db):
    client = LibmariadbClient(_target(_db(mariadb_db)))
    yield client
    client.close()


def test_statements_return_rows_and_changes_and_the_server_counts_them(c, mariadb_db):
    c.prepare("CREATE TABLE t (id INT PRIMARY KEY, k INT, c CHAR(120))")(())
    ins = c.prepare("INSERT INTO t VALUES (?, ?, ?)", "iis", count=True)
    assert [ins((i, i * 10, b"x" * i)) for i in range(1, 6)] == [1] * 5
    count = c.prepare("SELECT c FROM t WHERE id BETWEEN ? AND ?", "ii", count=True)
    assert count((2, 4)) == 3
    quiet = c.prepare("SELECT c FROM t WHERE id = ?", "i")
    assert quiet((3,)) == 0                       # rows read and freed, not counted
    upd = c.prepare("UPDATE t SET c = ? WHERE id IN (?, ?)", "sii", count=True)
    assert upd((b"y" * 120, 1, 2)) == 2
    before = c.session_statements()
    for i in range(1, 6):
        quiet((i,))
    assert c.session_statements() - before == 5
    check = pymysql.connect(**MY, database=_db(mariadb_db))
    with check.cursor() as cur:
        cur.execute("SELECT id, c FROM t WHERE id <= 3 ORDER BY id")
        assert cur.fetchall() == ((1, "y" * 120), (2, "y" * 120), (3, "xxx"))
    check.close()


def test_failures_say_what_happened(c):
    c.prepare("CREATE TABLE t (id INT PRIMARY KEY)")(())
    ins = c.prepare("INSERT INTO t VALUES (?)", "i", count=True)
    ins((1,))
    with pytest.raises(StatementFailed) as dup:
        ins((1,))
    # 1062: not among the errors sysbench's mysql driver ignores (1213, 1020, 1205)
    assert not dup.value.ignorable and not dup.value.lost
    assert "Duplicate entry" in str(dup.value)
    with pytest.raises(DatabaseError, match="cannot prepare SELECT nothing FROM"):
        c.prepare("SELECT nothing FROM nowhere WHERE id = ?", "i")
    big = c.prepare("INSERT INTO t SELECT ? FROM DUAL WHERE ? = ''", "is")
    with pytest.raises(libmariadb.LibError, match="longer than 1024"):
        big((2, b"z" * 2000))
    # the server ends the connection: the next statement says it is lost
    victim = c.conn.rows("SELECT CONNECTION_ID()")[0][0]
    killer = pymysql.connect(**MY, autocommit=True)
    killer.cursor().execute(f"KILL {int(victim)}")
    killer.close()
    with pytest.raises(StatementFailed) as lost:
        ins((3,))
    assert lost.value.lost


def test_a_wrong_password_reads_as_a_sentence():
    user = unique("versus_u")
    admin = pymysql.connect(**MY, autocommit=True)
    admin.cursor().execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'right-one'")
    try:
        with pytest.raises(DatabaseError) as exc:
            LibmariadbClient(_target("", password="wrong-one", user=user))
        text = str(exc.value)
        assert "Access denied" in text and "password" in text
        assert "wrong-one" not in text
    finally:
        admin.cursor().execute(f"DROP USER '{user}'@'%'")
        admin.close()
