"""Database connections for the agent: psycopg for PostgreSQL; mysqlclient, else PyMySQL.

mysqlclient is preferred because it costs less client CPU per query (bench/mysql_drivers.py);
PyMySQL is the pure-Python fallback and always runs with SSL off (a TLS context costs ~19 ms
per connect). MariaDB Connector/Python (`mariadb`), where installed, gives the hot loops
server-side prepared statements over the binary protocol, as sysbench uses them.
"""
from __future__ import annotations

import os
import tempfile
import time
import weakref
from dataclasses import dataclass

from .errors import MYSQL_RETRY, PG_RETRY, explain, mysql_lost
# the SQL access's own errors, defined with their classification
from .errors import ConnectionLost, DatabaseError, SqlFailed  # noqa: F401


@dataclass
class TargetInfo:
    engine: str          # postgres | mysql | mariadb
    address: str
    port: int
    user: str
    database: str
    password: str = ""

    @property
    def dialect(self) -> str:
        return "postgres" if self.engine == "postgres" else "mysql"

    @classmethod
    def from_spec(cls, spec: dict, password: str = "") -> "TargetInfo":
        return cls(spec["engine"], spec["address"], int(spec["port"]), spec.get("user") or "",
                   spec.get("database") or "", password)

    def describe(self) -> str:
        return f"{self.engine} {self.user}@{self.address}:{self.port}/{self.database}"


def mysql_driver() -> str:
    try:
        import MySQLdb  # noqa: F401
        return "mysqlclient"
    except ImportError:
        try:
            import pymysql  # noqa: F401
            return "pymysql"
        except ImportError:
            raise DatabaseError("no MySQL driver on this host: install mysqlclient or PyMySQL "
                                "(Versus can prepare the host for you)") from None


def have_mariadb_connector() -> bool:
    try:
        import mariadb  # noqa: F401
        return True
    except ImportError:
        return False


def connect_pg(target: TargetInfo, autocommit: bool = True):
    import psycopg
    try:
        conn = psycopg.connect(host=target.address, port=target.port, user=target.user or None,
                               dbname=target.database or None, password=target.password or None,
                               autocommit=autocommit, connect_timeout=10,
                               application_name="versus")
    except psycopg.Error as exc:
        raise explain(target, exc) from None
    me = os.getpid()
    if _PG_CONNS and _PG_CONNS[0][0] != me:      # a forked process: its parent's are not its own
        _PG_CONNS[:] = [c for c in _PG_CONNS if c[0] == me]
    _PG_CONNS.append((me, conn.info.backend_pid, weakref.ref(conn)))
    return conn


# Every PostgreSQL connection a process opens: (process id, backend pid, connection). A
# backend keeps the statistics of its last transactions for up to a second before it reports
# them, and reports them all as it exits, a moment after its client closed the connection.
# The phase edges use this to count the work of the phase and nothing else: a virtual user
# has its connections report before the phase starts (pg_report_stats), and the agent waits
# for the backends of connections it closed to end (pg_ended_backends).
_PG_CONNS: list[tuple[int, int, weakref.ref]] = []
# PostgreSQL 15+: the backend reports its statistics as this statement ends. Only when it
# has some pending for a table, though (the transaction counts alone wait for a later report):
# reading pg_database makes sure it has.
FLUSH_STATS = ("SELECT pg_stat_force_next_flush() FROM pg_database "
               "WHERE datname = current_database()")


def pg_ended_backends() -> list[int]:
    """The backend pids of the PostgreSQL connections this process opened and closed since
    the last call (their backends may still be ending)."""
    me = os.getpid()
    out, keep = [], []
    for entry in _PG_CONNS:
        pid, backend, ref = entry
        conn = ref()
        if pid != me:
            continue
        if conn is None or conn.closed:
            out.append(backend)
        else:
            keep.append(entry)
    _PG_CONNS[:] = keep
    return out


def pg_report_stats() -> list[int]:
    """Has each open PostgreSQL connection of this process report its statistics now, so
    that what it did so far (connecting, preparing statements) is counted before a phase
    starts, not in it; its backend pids. Only connections with no open transaction can
    report; a server older than 15 reports on its own schedule (at most every 500 ms)."""
    from psycopg import pq
    me = os.getpid()
    out = []
    for pid, backend, ref in _PG_CONNS:
        conn = ref()
        if pid != me or conn is None or conn.closed:
            continue
        out.append(backend)
        pg = conn.pgconn
        if pg.server_version < 150000 or pg.transaction_status != pq.TransactionStatus.IDLE:
            continue
        try:
            if pg.pipeline_status != pq.PipelineStatus.OFF:
                pg.send_query_params(FLUSH_STATS.encode(), None)
                pg.pipeline_sync()
                pg.flush()
                while True:
                    r = pg.get_result()
                    if r is not None and r.status == pq.ExecStatus.PIPELINE_SYNC:
                        break
            else:
                pg.exec_(FLUSH_STATS.encode())
        except Exception:       # a lost connection fails the virtual user's first statement
            pass
    return out


def connect_mysql_raw(target: TargetInfo, multi_statements: bool = False,
                      driver: str | None = None):
    """mysqlclient's low-level _mysql connection (query/store_result), or a PyMySQL one;
    with `multi_statements`, several statements may go in one query; `driver` picks one of
    the two, else the cheaper one installed."""
    kw = dict(host=target.address, port=target.port, user=target.user or "root",
              password=target.password, connect_timeout=10)
    if (driver or mysql_driver()) == "mysqlclient":
        import MySQLdb
        from MySQLdb import _mysql
        from MySQLdb.constants import CLIENT
        if multi_statements:
            kw["client_flag"] = CLIENT.MULTI_STATEMENTS | CLIENT.MULTI_RESULTS
        try:
            conn = _mysql.connect(database=target.database, **kw)
        except MySQLdb.Error as exc:
            raise explain(target, exc) from None
        conn.autocommit(True)
        return conn
    import pymysql
    from pymysql.constants import CLIENT as PCLIENT
    if multi_statements:
        kw["client_flag"] = PCLIENT.MULTI_STATEMENTS | PCLIENT.MULTI_RESULTS
    try:
        return pymysql.connect(database=target.database, autocommit=True, ssl_disabled=True, **kw)
    except pymysql.Error as exc:
        raise explain(target, exc) from None


def connect_mariadb(target: TargetInfo):
    """MariaDB Connector/Python (binary protocol, server-side prepared statements)."""
    import mariadb
    try:
        return mariadb.connect(host=target.address, port=target.port,
                               user=target.user or "root", password=target.password,
                               database=target.database, connect_timeout=10, autocommit=True)
    except mariadb.Error as exc:
        raise explain(target, exc) from None


class SqlText:
    """A lean connection for hot loops: SQL text in, one round trip per call, rows out.

    `run(sql)` sends one or more statements (separated by ';') in one round trip and returns
    per statement `(rows, count)`: the rows as tuples (values as the driver's text: int()
    them) or None for a statement without rows, and the rows returned or affected. A failed
    statement raises SqlFailed; the statements after it did not run, and an open
    transaction needs `rollback()`. PostgreSQL through libpq's simple query protocol
    (psycopg.pq), MySQL/MariaDB through mysqlclient's _mysql with multi-statements (PyMySQL
    as the fallback). Values go into the text as literals: only numbers and generated
    text, never user input.
    """

    def __init__(self, target: TargetInfo):
        self.target = target
        self.dialect = target.dialect
        if self.dialect == "postgres":
            from psycopg import OperationalError, pq
            self.conn = connect_pg(target)
            self._pg = self.conn.pgconn
            self._pq, self._operr = pq, OperationalError
            self._tuples, self._command = pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK
            self._sqlstate = pq.DiagnosticField.SQLSTATE
            self.run = self._run_pg
        else:
            self.conn = connect_mysql_raw(target, multi_statements=True)
            if mysql_driver() == "mysqlclient":
                import MySQLdb
                self._error, self._operr = MySQLdb.Error, MySQLdb.OperationalError
                self.run = self._run_mysqlclient
            else:
                import pymysql
                self._error, self._operr = pymysql.Error, pymysql.OperationalError
                self._cur = self.conn.cursor()
                self.run = self._run_pymysql

    def run(self, sql: str) -> list[tuple[list[tuple] | None, int]]:   # set per dialect
        raise NotImplementedError

    # PostgreSQL
    def _run_pg(self, sql: str) -> list[tuple[list[tuple] | None, int]]:
        pg = self._pg
        try:
            pg.send_query(sql.encode())
        except self._operr as exc:
            raise SqlFailed(str(exc).strip() or "the connection is gone", lost=True) from None
        out: list = []
        err = None
        get = pg.get_result
        while True:
            try:
                r = get()
            except self._operr as exc:
                raise SqlFailed(str(exc).strip() or "the connection is gone",
                                lost=True) from None
            if r is None:
                break
            st = r.status
            if st == self._tuples:
                n, nf, gv = r.ntuples, r.nfields, r.get_value
                out.append(([tuple(gv(i, j) for j in range(nf)) for i in range(n)], n))
            elif st == self._command:
                ct = r.command_tuples
                out.append((None, int(ct) if ct else 0))
            elif err is None:
                err = r
        if err is not None:
            code = (err.error_field(self._sqlstate) or b"").decode()
            msg = (err.error_message or b"").decode(errors="replace").strip()
            lost = pg.status != self._pq.ConnStatus.OK
            raise SqlFailed(msg or "the statement failed", code, code in PG_RETRY, lost)
        return out

    # MySQL / MariaDB
    def _failed(self, exc: Exception) -> SqlFailed:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        msg = exc.args[1] if len(exc.args) > 1 else str(exc)
        lost = mysql_lost(code, isinstance(exc, self._operr))
        return SqlFailed(f"{code}: {msg}", str(code), code in MYSQL_RETRY, lost)

    def _run_mysqlclient(self, sql: str) -> list[tuple[list[tuple] | None, int]]:
        conn = self.conn
        out: list = []
        try:
            conn.query(sql)
            while True:
                r = conn.store_result()
                if r is None:
                    out.append((None, conn.affected_rows()))
                else:
                    rows = r.fetch_row(0)
                    out.append((list(rows), len(rows)))
                if conn.next_result() != 0:
                    return out
        except self._error as exc:
            raise self._failed(exc) from None

    def _run_pymysql(self, sql: str) -> list[tuple[list[tuple] | None, int]]:
        cur = self._cur
        out: list = []
        try:
            cur.execute(sql)
            while True:
                if cur.description:
                    rows = cur.fetchall()
                    out.append((list(rows), len(rows)))
                else:
                    out.append((None, max(cur.rowcount, 0)))
                if not cur.nextset():
                    return out
        except self._error as exc:
            raise self._failed(exc) from None

    def rollback(self) -> None:
        """End a failed transaction; a lost connection has nothing to roll back."""
        try:
            self.run("ROLLBACK")
        except SqlFailed:
            pass

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:          # a connection the server already dropped
            pass


class SqlSession:
    """A small uniform cursor API for setup work (loads, checks, counters)."""

    def __init__(self, target: TargetInfo):
        self.target = target
        self.dialect = target.dialect
        self.statements = 0
        if self.dialect == "postgres":
            self.conn = connect_pg(target)
        else:
            self.driver = mysql_driver()
            if self.driver == "mysqlclient":
                import MySQLdb
                try:
                    self.conn = MySQLdb.connect(host=target.address, port=target.port,
                                                user=target.user or "root",
                                                password=target.password,
                                                database=target.database, connect_timeout=10,
                                                autocommit=True, local_infile=False)
                except MySQLdb.Error as exc:
                    raise explain(target, exc) from None
            else:
                self.conn = connect_mysql_raw(target)

    def execute(self, sql: str, args=None) -> list[tuple]:
        self.statements += 1        # each one transaction: the connection is in autocommit
        cur = self.conn.cursor()
        try:
            cur.execute(sql, args)
            return list(cur.fetchall()) if cur.description else []
        finally:
            cur.close()

    def scalar(self, sql: str, args=None):
        rows = self.execute(sql, args)
        return rows[0][0] if rows else None

    def version(self) -> str:
        if self.dialect == "postgres":
            return self.scalar("SELECT version()")
        return f"{self.scalar('SELECT @@version')} ({self.scalar('SELECT @@version_comment')})"

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


class BulkLoader:
    """One loader connection with a bulk `put(table, columns, tsv_bytes)`: COPY ... FROM
    STDIN on PostgreSQL, LOAD DATA LOCAL INFILE on MySQL/MariaDB (multi-row INSERTs when the
    server refuses local files). `relaxed` trades durability for speed in this session
    (synchronous_commit off; no unique or foreign-key checks) for loads whose speed is not
    what is measured."""

    def __init__(self, target: TargetInfo, relaxed: bool = False):
        self.dialect = target.dialect
        self.local_infile = True
        if self.dialect == "postgres":
            self.conn = connect_pg(target, autocommit=True)
            if relaxed:
                self.conn.execute("SET synchronous_commit = off")
                self.conn.execute("SET maintenance_work_mem = '256MB'")
        else:
            self._connect_mysql(target, relaxed)
        self.tmpdir = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) \
            else None

    def _connect_mysql(self, target: TargetInfo, relaxed: bool) -> None:
        kw = dict(host=target.address, port=target.port, user=target.user or "root",
                  password=target.password, database=target.database, connect_timeout=10,
                  autocommit=True, local_infile=True)
        if mysql_driver() == "mysqlclient":
            import MySQLdb as drv
        else:
            import pymysql as drv
            kw["ssl_disabled"] = True
        try:
            self.conn = drv.connect(**kw)
        except drv.Error as exc:
            raise explain(target, exc) from None
        if relaxed:
            self.execute("SET unique_checks = 0")
            self.execute("SET foreign_key_checks = 0")

    def execute(self, sql: str) -> None:
        if self.dialect == "postgres":
            self.conn.execute(sql)
            return
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
        finally:
            cur.close()

    def put(self, table: str, columns: str, data: bytes) -> None:
        if not data:
            return
        if self.dialect == "postgres":
            with self.conn.cursor() as cur:
                with cur.copy(f"COPY {table} ({columns}) FROM STDIN") as cp:
                    cp.write(data)
            return
        if self.local_infile:
            fd, path = tempfile.mkstemp(prefix="versus-load-", suffix=".tsv", dir=self.tmpdir)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                self.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table} "
                             f"CHARACTER SET latin1 ({columns})")
                return
            except Exception as exc:
                low = str(exc).lower()
                if "local" not in low and "not allowed" not in low and "1148" not in low \
                        and "3948" not in low and "2068" not in low:
                    raise
                self.local_infile = False      # the server refuses local files: INSERTs
            finally:
                try:
                    os.unlink(path)
                except OSError:
                    pass
        self._insert(table, columns, data)

    def put_stream(self, table: str, columns: str, chunks) -> None:
        """Stream byte chunks into one table: one COPY whose writes go out on a background
        thread while the next chunk is generated (PostgreSQL); one load per chunk (MySQL)."""
        if self.dialect != "postgres":
            for data in chunks:
                self.put(table, columns, data)
            return
        from psycopg.copy import QueuedLibpqWriter
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY {table} ({columns}) FROM STDIN",
                          writer=QueuedLibpqWriter(cur)) as cp:
                for data in chunks:
                    cp.write(data)

    def _insert(self, table: str, columns: str, data: bytes) -> None:
        rows = data.decode().split("\n")
        batch: list[str] = []
        size = 0
        for line in rows:
            if not line:
                continue
            vals = ",".join("NULL" if v == "\\N" else f"'{v}'" for v in line.split("\t"))
            batch.append(f"({vals})")
            size += len(vals)
            if size > 1 << 20:
                self.execute(f"INSERT INTO {table} ({columns}) VALUES {','.join(batch)}")
                batch, size = [], 0
        if batch:
            self.execute(f"INSERT INTO {table} ({columns}) VALUES {','.join(batch)}")

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


def check_conditions(db: SqlSession, conditions) -> list[dict]:
    """A consistency check's conditions, each `(id, name, what offends, SQL counting the
    offenders)`: [{'id', 'name', 'ok', 'offending', 'of', 'seconds'}], or 'error' instead of
    the count when the query failed."""
    out = []
    for cid, name, of, sql in conditions:
        t0 = time.monotonic()
        try:
            n = int(db.scalar(sql) or 0)
            out.append({"id": cid, "name": name, "ok": n == 0, "offending": n, "of": of,
                        "seconds": round(time.monotonic() - t0, 3)})
        except Exception as exc:
            out.append({"id": cid, "name": name, "ok": False, "offending": None, "of": of,
                        "error": str(exc).strip().splitlines()[0] if str(exc).strip() else
                        repr(exc)})
            if db.dialect == "postgres" and not db.conn.autocommit:
                db.conn.rollback()
    return out


def condition_lines(conditions: list[dict]) -> list[str]:
    """One line per condition (PASS/FAIL, offenders), its note indented under it."""
    lines = []
    for c in conditions:
        if c.get("error"):
            lines.append(f"condition {c['id']}: FAIL  {c['name']}: {c['error']}")
        else:
            lines.append(f"condition {c['id']}: {'PASS' if c['ok'] else 'FAIL'}  {c['name']}"
                         f" ({c['offending']} offending {c['of']})")
        if c.get("note"):
            lines.append(f"  note: {c['note']}")
    return lines
