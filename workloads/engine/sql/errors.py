"""The one classification of database errors, for every client of the engine: which
errors mean try the transaction again, which mean the connection is lost, which sysbench
ignores and goes on after, the class of an outage from an error's text, and the sentence for
a failed connection. (Each client had its own copy, and they disagreed: MySQL's 2055, lost
connection to the server at a read, counted as lost in two of five.)"""
from __future__ import annotations

import re

# try the transaction again: PostgreSQL's deadlock detected, serialization failure (SQLSTATE
# as text and as libpq's bytes); MySQL/MariaDB's deadlock, lock wait timeout
PG_RETRY = frozenset({"40P01", "40001", b"40P01", b"40001"})
MYSQL_RETRY = frozenset({1213, 1205})
# the connection is gone: server has gone away, lost connection during a query, lost
# connection at a read
MYSQL_LOST = frozenset({2006, 2013, 2055})
# errors sysbench ignores and goes on after: its pgsql driver's deadlock and unique
# violation, its mysql driver's default --mysql-ignore-errors=1213,1020,1205
PG_IGNORABLE = frozenset({b"40P01", b"23505", "40P01", "23505"})
MYSQL_IGNORABLE = frozenset({1213, 1020, 1205})


class DatabaseError(Exception):
    """A database problem said as a sentence for the user."""


class ConnectionLost(DatabaseError):
    """A virtual user's connection is gone (server restarted, backend terminated, network):
    the run fails with this sentence, or with reconnect=on the user reconnects
    (workloads.engine.measure.outage)."""

    def __init__(self, detail: str = ""):
        super().__init__("lost the database connection" + (f": {detail}" if detail else ""))


class SqlFailed(Exception):
    """A statement sent through SqlText failed. `code` is the SQLSTATE (PostgreSQL) or the
    error number (MySQL/MariaDB) as text; `retry`: a deadlock or serialization failure (roll
    back and try again); `lost`: the connection is gone."""

    def __init__(self, message: str, code: str = "", retry: bool = False, lost: bool = False):
        super().__init__(message)
        self.code, self.retry, self.lost = code, retry, lost


def mysql_lost(code: int, operational: bool = False) -> bool:
    """A MySQL/MariaDB error that ends the connection: the lost ones, or any client error
    (2000 and up) the driver raised as an OperationalError."""
    return code in MYSQL_LOST or (operational and code >= 2000)


def explain(target, exc: Exception) -> DatabaseError:
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


# (class, words or MySQL error numbers that say it), first match wins; said by PostgreSQL,
# MySQL/MariaDB and their drivers. A number counts as "(2003," or "2003:" (the drivers' and
# SqlFailed's forms), never inside a port or a time.
_CLASSES = (
    ("admin shutdown", ("administrator command", "57p01", "server shutdown in progress",
                        "#1053", "connection was killed", "#1927")),
    ("server crash restart", ("crash of another server process", "57p02")),
    ("server starting or stopping", ("starting up", "shutting down", "57p03",
                                     "recovery mode", "not yet accepting")),
    ("connection refused", ("refused", "can't connect", "#2002", "#2003")),
    ("timeout", ("timeout", "timed out")),
    ("connection lost", ("server closed the connection", "gone away", "lost connection",
                         "#2006", "#2013", "#2055", "connection reset", "broken pipe",
                         "unexpectedly", "consuming input failed", "terminat", "eof",
                         "connection is gone", "stopped answering", "bad connection",
                         "connection already closed", "not connected")),
)
def classify(message: str) -> str:
    """The class of a connection error from its text ("connection refused", "timeout" …)."""
    low = message.lower()
    codes = {f"#{m}" for m in re.findall(r"(?:^|\()(\d{4})[,:]", low)}
    for name, words in _CLASSES:
        if any(w in codes if w.startswith("#") else w in low for w in words):
            return name
    return "other"
