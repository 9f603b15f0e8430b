"""One connection of a virtual user and its statements, at the least client cost per call.

`prepare(sql, types, count)` takes sysbench-style SQL (`?` placeholders; `types` one letter
per placeholder: `i` integer, `s` string) and returns `run(params) -> rows`; with `count`,
rows is the number of rows the statement changed (writes) or returned (reads), else 0 (not
asking saves a call per statement). A failed statement raises
StatementFailed, which says whether the connection is lost and whether sysbench would ignore
the error (deadlock, duplicate key, lock wait timeout) and go on.

Clients, measured in bench/mysql_drivers.py and bench/pg_drivers.py:
- PostgreSQL: libpq through psycopg.pq, PQprepare once and PQexecPrepared per call (what
  sysbench's pgsql driver does), results left in libpq, never turned into Python objects.
- MySQL/MariaDB `libmariadb`: MariaDB Connector/C through ctypes (workloads/engine/sql/libmariadb),
  statements prepared once on the server and executed over the binary protocol
  (mysql_stmt_execute) with their parameters bound once to buffers, rows read and freed in
  C: what sysbench's mysql driver does.
- MySQL/MariaDB `mariadb`: MariaDB Connector/Python, the same protocol at about 4 µs more
  client CPU per statement (it rebinds every parameter on every execute).
- MySQL/MariaDB `mysqlclient` / `pymysql`: statements as text with the values in (the
  server parses each one), for hosts without the connector; PyMySQL is pure Python.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .db import (DatabaseError, TargetInfo, connect_mariadb, connect_mysql_raw, connect_pg,
                 have_mariadb_connector, mysql_driver)
from .errors import MYSQL_IGNORABLE, PG_IGNORABLE, explain, mysql_lost
from . import libmariadb

# Per-connection statement counters of MySQL/MariaDB (SHOW SESSION STATUS): what the server
# executed for this connection, which no other client of a shared server disturbs.
SESSION_COUNTERS = ("Com_select", "Com_insert", "Com_update", "Com_delete", "Com_begin",
                    "Com_commit", "Com_rollback")
_SESSION_SQL = ("SHOW SESSION STATUS WHERE Variable_name IN ("
                + ", ".join(f"'{c}'" for c in SESSION_COUNTERS) + ")")

Run = Callable[[Sequence], int]


class StatementFailed(Exception):
    def __init__(self, message: str, lost: bool = False, ignorable: bool = False):
        super().__init__(message)
        self.lost, self.ignorable = lost, ignorable
        self.sent = 1                 # statements the event sent, the failed one included


def driver_for(target: TargetInfo, choice: str = "auto") -> str:
    """The client a run uses: "postgres", "libmariadb", "mariadb", "mysqlclient" or
    "pymysql"."""
    if target.dialect == "postgres":
        return "postgres"
    if choice == "auto":
        if libmariadb.load() is not None:
            return "libmariadb"
        return "mariadb" if have_mariadb_connector() else mysql_driver()
    if choice == "libmariadb":
        if libmariadb.load() is None:
            raise DatabaseError(f"{libmariadb.why()} on this host (Debian: apt-get install "
                                f"libmariadb3); set mysql-driver=auto to use the client it "
                                f"has")
        return choice
    missing = {"mariadb": "MariaDB Connector/Python (pip install mariadb; it builds against "
                          "libmariadb-dev)", "mysqlclient": "mysqlclient", "pymysql": "PyMySQL"}
    try:
        __import__({"mariadb": "mariadb", "mysqlclient": "MySQLdb", "pymysql": "pymysql"}[choice])
    except ImportError:
        raise DatabaseError(f"{missing[choice]} is not installed on this host; set "
                            f"mysql-driver=auto to use the client it has") from None
    return choice


def connect(target: TargetInfo, choice: str = "auto") -> "Client":
    return CLIENTS[driver_for(target, choice)](target)


class Client:
    kind = ""
    protocol = ""
    strings = str                            # the type of the c and pad values it takes
    conn = None

    def prepare(self, sql: str, types: str = "", count: bool = False) -> Run:
        raise NotImplementedError

    def session_statements(self) -> int | None:
        """The server's count of statements this connection ran (None: not available)."""
        return None

    def settle(self) -> None:
        """Before the phase starts: make the server count the set-up work now."""

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


class _CursorCounts:
    """MySQL/MariaDB per-connection statement counts through a DB-API cursor."""
    conn = None

    def session_statements(self) -> int | None:
        cur = self.conn.cursor()
        try:
            cur.execute(_SESSION_SQL)
            return sum(int(v) for _, v in cur.fetchall())
        finally:
            cur.close()



# --- PostgreSQL ---------------------------------------------------------------------------
def _dollar(sql: str) -> str:
    out, n = [], 0
    for part in sql.split("?"):
        out.append(part)
        n += 1
        out.append(f"${n}")
    return "".join(out[:-1])


def _wire_tuple(types: str) -> Callable[[Sequence], tuple]:
    """params -> libpq's text parameters in one generated expression (no per-value call):
    integers formatted, strings as they are (bytes: Strings hands PostgreSQL bytes)."""
    parts = "".join(f"b'%d' % p[{i}], " if t == "i" else f"p[{i}], "
                    for i, t in enumerate(types) if t in "is")
    return eval(f"lambda p: ({parts})")      # noqa: S307 - built from the letters i and s


class PgClient(Client):
    kind = "postgres"
    strings = bytes                          # c and pad values go to libpq as they are
    protocol = "libpq extended protocol, server-side prepared statements"
    # binary results as sysbench asks for them (bench/pg_drivers.py --best measured the
    # same server CPU per point query for text ones); what costs the server most is an
    # unprepared statement (1.6x) and uniform ids against sysbench's default special
    # distribution (1.1-1.2x, more cache misses: bench/point_query.py)
    RESULT_FORMAT = 1

    def __init__(self, target: TargetInfo):
        from psycopg import pq
        self._pq = pq
        self.conn = connect_pg(target)
        self.pg = self.conn.pgconn
        self._n = 0

    def settle(self) -> None:
        # Each PQprepare is a transaction of its own, which a backend reports to
        # pg_stat_database up to a second later, inside the measured phase; PostgreSQL 15+
        # flushes at once when asked, before the phase's first counter reading.
        if self.pg.server_version >= 150000:
            self.pg.exec_(b"SELECT pg_stat_force_next_flush()")

    def failed(self, message: bytes | None, sqlstate: bytes | None) -> StatementFailed:
        """A failed statement's error from its result's message and SQLSTATE (the Python
        client's and the compiled loop's alike)."""
        msg = (message or b"").decode(errors="replace").strip()
        lost = self.pg.status != self._pq.ConnStatus.OK
        if lost:    # the server's last words (FATAL … administrator command, 57P01) are the
            # connection's message, not the result's ("server closed the connection")
            msg = (self.pg.error_message or b"").decode(errors="replace").strip() or msg
        return StatementFailed(msg or "the statement failed", lost=lost,
                               ignorable=sqlstate in PG_IGNORABLE)

    def prepare(self, sql: str, types: str = "", count: bool = False) -> Run:
        pq = self._pq
        pg = self.pg
        self._n += 1
        name = b"s%d" % self._n
        oids = [23 if t == "i" else 0 for t in types]
        res = pg.prepare(name, _dollar(sql).encode(), oids)
        if res.status != pq.ExecStatus.COMMAND_OK:
            raise DatabaseError(f"cannot prepare {sql}: "
                                f"{(res.error_message or b'').decode(errors='replace').strip()}")
        ex, fmt = pg.exec_prepared, self.RESULT_FORMAT
        tuples_ok, command_ok = pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK
        sqlstate = pq.DiagnosticField.SQLSTATE

        def fail(res):
            raise self.failed(res.error_message, res.error_field(sqlstate))

        if types == "":
            def run(params=()):
                res = ex(name, None, None, fmt)
                if res.status != command_ok and res.status != tuples_ok:
                    fail(res)
                return 0
        elif types == "i" and not count:
            def run(params):
                res = ex(name, (b"%d" % params[0],), None, fmt)
                st = res.status
                if st != tuples_ok and st != command_ok:
                    fail(res)
                return 0
        else:
            conv = _wire_tuple(types)

            def run(params):
                res = ex(name, conv(params), None, fmt)
                st = res.status
                if st == tuples_ok:
                    return res.ntuples if count else 0
                if st != command_ok:
                    fail(res)
                return (res.command_tuples or 0) if count else 0
        run.handle = name                    # what the compiled loop executes
        return run


# --- MySQL / MariaDB: MariaDB Connector/C through ctypes, binary protocol ------------------
class LibmariadbClient(Client):
    kind = "libmariadb"
    protocol = ("MariaDB Connector/C (libmariadb through ctypes), server-side prepared "
                "statements (binary protocol)")
    strings = bytes

    def __init__(self, target: TargetInfo):
        try:
            self.conn = libmariadb.Connection(target.address, target.port,
                                              target.user or "root", target.password,
                                              target.database)
        except libmariadb.LibError as exc:
            raise explain(target, exc) from None

    def failed(self, exc: libmariadb.LibError) -> StatementFailed:
        lost = mysql_lost(exc.errno) or not self.conn.alive()
        return StatementFailed(str(exc), lost=lost, ignorable=exc.errno in MYSQL_IGNORABLE)

    def session_statements(self) -> int | None:
        return sum(int(v) for _, v in self.conn.rows(_SESSION_SQL))

    def prepare(self, sql: str, types: str = "", count: bool = False) -> Run:
        try:
            stmt = self.conn.statement(sql, types)
        except libmariadb.LibError as exc:
            raise DatabaseError(f"cannot prepare {sql}: {exc}") from None
        lib, st = stmt.lib, stmt.st
        put, execute, free = stmt.setter(), lib.mysql_stmt_execute, lib.mysql_stmt_free_result
        store, nrows = lib.mysql_stmt_store_result, lib.mysql_stmt_num_rows
        affected = lib.mysql_stmt_affected_rows
        fail = self.failed

        if stmt.results and not count:
            def run(params=()):
                put(params)
                if execute(st):
                    raise fail(stmt.error())
                free(st)          # reads the rows off the wire and frees them
                return 0
        elif stmt.results:
            def run(params=()):
                put(params)
                if execute(st) or store(st):
                    raise fail(stmt.error())
                n = nrows(st)
                free(st)
                return n
        else:
            def run(params=()):
                put(params)
                if execute(st):
                    raise fail(stmt.error())
                return affected(st) if count else 0
        run.handle, run.results = stmt, stmt.results      # what the compiled loop executes
        return run


# --- MySQL / MariaDB: MariaDB Connector/Python, binary protocol ---------------------------
class MariadbClient(_CursorCounts, Client):
    kind = "mariadb"
    protocol = "MariaDB Connector/Python, server-side prepared statements (binary protocol)"

    def __init__(self, target: TargetInfo):
        import mariadb
        self._mariadb = mariadb
        self.conn = connect_mariadb(target)
        self._cursors: list = []

    def _failed(self, exc) -> StatementFailed:
        errno = getattr(exc, "errno", None)
        lost = mysql_lost(errno) or not self._alive()
        return StatementFailed(str(exc), lost=lost, ignorable=errno in MYSQL_IGNORABLE)

    def _alive(self) -> bool:
        try:
            self.conn.ping()
            return True
        except Exception:
            return False

    def prepare(self, sql: str, types: str = "", count: bool = False) -> Run:
        error = self._mariadb.Error
        cur = self.conn.cursor(prepared=True, binary=True)
        self._cursors.append(cur)
        first = [True]
        # The connector re-prepares a statement on every execute() unless told it is
        # prepared (_reprepare); after the first call the C methods run the prepared
        # statement directly: bind, mysql_stmt_execute, mysql_stmt_store_result.
        fast = all(hasattr(cur, a) for a in ("_execute_binary", "_initresult",
                                             "_clear_result", "_reprepare"))
        clear, execute, init = (getattr(cur, a, None) for a in
                                ("_clear_result", "_execute_binary", "_initresult"))

        def run(params=()):
            try:
                if first[0] or not fast:
                    cur.execute(sql, tuple(params))
                    if fast:
                        cur._reprepare = False
                    first[0] = False
                else:
                    if cur.field_count:
                        clear()
                    cur._data = params
                    execute()
                    init()
            except error as exc:
                raise self._failed(exc) from None
            if count:
                return cur.rowcount if cur.field_count else cur.affected_rows
            return 0
        return run


# --- MySQL / MariaDB: text protocol -------------------------------------------------------
def _text_failed(exc: Exception, op_error: type) -> StatementFailed:
    code = exc.args[0] if exc.args else None
    return StatementFailed(str(exc), lost=mysql_lost(code, isinstance(exc, op_error)),
                           ignorable=code in MYSQL_IGNORABLE)


def _text_template(sql: str, types: str) -> str:
    parts = sql.replace("%", "%%").split("?")
    out = [parts[0]]
    for t, rest in zip(types, parts[1:]):
        out.append("%d" if t == "i" else "'%s'")
        out.append(rest)
    return "".join(out)


class MysqlclientClient(Client):
    kind = "mysqlclient"
    protocol = "mysqlclient, statements as text"

    def __init__(self, target: TargetInfo):
        import MySQLdb
        self._error, self._op_error = MySQLdb.Error, MySQLdb.OperationalError
        self.conn = connect_mysql_raw(target, driver="mysqlclient")

    def prepare(self, sql: str, types: str = "", count: bool = False) -> Run:
        tmpl = _text_template(sql, types)
        conn = self.conn
        # discard_result reads the rows off the wire and frees them in C
        query, discard, affected = conn.query, conn.discard_result, conn.affected_rows
        store = conn.store_result
        error, op_error = self._error, self._op_error
        reads = sql.lstrip().upper().startswith("SELECT")

        def run(params=()):
            try:
                query(tmpl % tuple(params) if types else tmpl)
                if not count:
                    discard()
                    return 0
                if reads:
                    r = store()
                    return r.num_rows() if r is not None else 0
                discard()
                return affected()
            except error as exc:
                raise _text_failed(exc, op_error) from None
        return run

    def session_statements(self) -> int | None:
        self.conn.query(_SESSION_SQL)
        return sum(int(v) for _, v in self.conn.store_result().fetch_row(maxrows=0))


class PymysqlClient(_CursorCounts, Client):
    kind = "pymysql"
    protocol = "PyMySQL (pure Python), statements as text"

    def __init__(self, target: TargetInfo):
        import pymysql
        self._error, self._op_error = pymysql.Error, pymysql.OperationalError
        self.conn = connect_mysql_raw(target, driver="pymysql")

    def prepare(self, sql: str, types: str = "", count: bool = False) -> Run:
        tmpl = _text_template(sql, types)
        conn = self.conn
        error, op_error = self._error, self._op_error

        def run(params=()):
            try:
                return conn.query(tmpl % tuple(params) if types else tmpl)
            except error as exc:
                raise _text_failed(exc, op_error) from None
        return run


# kind (driver_for) -> client class
CLIENTS: dict[str, type[Client]] = {c.kind: c for c in (
    PgClient, LibmariadbClient, MariadbClient, MysqlclientClient, PymysqlClient)}
