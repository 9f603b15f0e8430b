"""The effective settings a server reports, read by the agent at run start.

PostgreSQL: every row of pg_settings as {name: {"setting", "unit", "source"}}.
MySQL/MariaDB: SHOW GLOBAL VARIABLES as {name: {"setting"}}.
"""
from __future__ import annotations

from ..sql.db import SqlSession


def read_settings(db: SqlSession) -> tuple[str, dict[str, dict]]:
    """(source, settings) of the connected server."""
    if db.dialect == "postgres":
        rows = db.execute("SELECT name, setting, unit, source FROM pg_settings ORDER BY name")
        return "pg_settings", {str(n): {"setting": s, "unit": u, "source": src}
                               for n, s, u, src in rows}
    rows = db.execute("SHOW GLOBAL VARIABLES")
    out = {_text(n): {"setting": _text(v)} for n, v in rows}
    # where each value came from: MariaDB's GLOBAL_VALUE_ORIGIN, MySQL 8's variables_info
    for sql in ("SELECT VARIABLE_NAME, GLOBAL_VALUE_ORIGIN FROM information_schema.SYSTEM_VARIABLES",
                "SELECT VARIABLE_NAME, VARIABLE_SOURCE FROM performance_schema.variables_info"):
        try:
            origin = db.execute(sql)
        except Exception:
            continue
        for n, o in origin:
            rec = out.get(_text(n).lower())
            if rec is not None:
                rec["source"] = _text(o).lower().replace("_", "-")
        break
    return "SHOW GLOBAL VARIABLES", out


def _text(v) -> str:
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    return "" if v is None else str(v)


def emit_settings(em, db: SqlSession, **extra) -> None:
    """One `setting` event with every effective setting; a failure to read them is a warning,
    not a failed run."""
    try:
        source, settings = read_settings(db)
    except Exception as exc:  # e.g. a user without access to pg_settings columns
        em.emit("log", level="warning", message=f"could not read the server's settings: {exc}")
        return
    em.emit("setting", source=source, settings=settings, **extra)
