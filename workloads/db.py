"""Database connections for the agent: psycopg for PostgreSQL; mysqlclient, else PyMySQL.

mysqlclient is preferred because it costs less client CPU per query (bench/mysql_drivers.py);
PyMySQL is the pure-Python fallback and always runs with SSL off (a TLS context costs ~19 ms
per connect).
"""
from __future__ import annotations

from dataclasses import dataclass


class DatabaseError(Exception):
    """A database problem said as a sentence for the user."""


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


def _explain(target: TargetInfo, exc: Exception) -> DatabaseError:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = text.lower()
    if "password" in low or "access denied" in low or "authentication" in low:
        hint = "check the user and the password stored for this target"
    elif "does not exist" in low or "unknown database" in low:
        hint = "create the database or pick another one in the target"
    elif "refused" in low or "can't connect" in low or "could not connect" in low or "timeout" in low:
        hint = "is the server running and listening on that address and port?"
    else:
        hint = "check the target's settings"
    return DatabaseError(f"cannot connect to {target.describe()}: {text} ({hint})")


def connect_pg(target: TargetInfo, autocommit: bool = True):
    import psycopg
    try:
        conn = psycopg.connect(host=target.address, port=target.port, user=target.user or None,
                               dbname=target.database or None, password=target.password or None,
                               autocommit=autocommit, connect_timeout=10,
                               application_name="versus")
    except psycopg.Error as exc:
        raise _explain(target, exc) from None
    return conn


def connect_mysql_raw(target: TargetInfo):
    """mysqlclient's low-level _mysql connection (query/store_result), or a PyMySQL one."""
    kw = dict(host=target.address, port=target.port, user=target.user or "root",
              password=target.password, connect_timeout=10)
    if mysql_driver() == "mysqlclient":
        import MySQLdb
        from MySQLdb import _mysql
        try:
            conn = _mysql.connect(database=target.database, **kw)
        except MySQLdb.Error as exc:
            raise _explain(target, exc) from None
        conn.autocommit(True)
        return conn
    import pymysql
    try:
        return pymysql.connect(database=target.database, autocommit=True, ssl_disabled=True, **kw)
    except pymysql.Error as exc:
        raise _explain(target, exc) from None


class SqlSession:
    """A small uniform cursor API for setup work (loads, checks, counters)."""

    def __init__(self, target: TargetInfo):
        self.target = target
        self.dialect = target.dialect
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
                    raise _explain(target, exc) from None
            else:
                self.conn = connect_mysql_raw(target)

    def execute(self, sql: str, args=None) -> list[tuple]:
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


PG_COUNTERS = ("xact_commit", "xact_rollback", "tup_returned", "tup_fetched", "tup_inserted",
               "tup_updated", "tup_deleted", "blks_read", "blks_hit")
MYSQL_COUNTERS = ("Com_select", "Com_insert", "Com_update", "Com_delete", "Com_commit",
                  "Com_rollback", "Questions", "Innodb_rows_read", "Innodb_rows_inserted",
                  "Innodb_data_reads", "Innodb_data_writes")


class ServerCounters:
    """Reads the server's own cumulative counters on a separate monitoring connection.

    PostgreSQL: pg_stat_database for the target database (each poll is itself one
    committed transaction there, which `own_xacts` reports so it can be subtracted).
    MySQL/MariaDB: SHOW GLOBAL STATUS (server-wide).
    """

    def __init__(self, target: TargetInfo):
        self.session = SqlSession(target)
        self.dialect = target.dialect
        self.source = "pg_stat_database" if self.dialect == "postgres" else "SHOW GLOBAL STATUS"
        self.polls = 0

    def read(self) -> dict[str, int]:
        self.polls += 1
        if self.dialect == "postgres":
            rows = self.session.execute(
                f"SELECT {', '.join(PG_COUNTERS)} FROM pg_stat_database "
                f"WHERE datname = current_database()")
            return {k: int(v or 0) for k, v in zip(PG_COUNTERS, rows[0])} if rows else {}
        names = ", ".join(f"'{n}'" for n in MYSQL_COUNTERS)
        rows = self.session.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
        return {str(k): int(v) for k, v in rows}

    def close(self) -> None:
        self.session.close()


def delta(cur: dict[str, int], prev: dict[str, int]) -> dict[str, int]:
    return {k: cur[k] - prev.get(k, 0) for k in cur}
