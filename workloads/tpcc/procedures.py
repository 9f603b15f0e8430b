"""TPROC-C's server-side routines (procedures/*.sql): installed once per schema version."""
from __future__ import annotations

from ..engine.api import DatabaseError, SqlSession

PROC_VERSION = 1
PROC_NAMES = ("vs_neword", "vs_payment", "vs_ostat", "vs_delivery", "vs_slev")


def install_procedures(agent) -> None:
    """Create the vs_* routines unless this version is there; a clear sentence when the
    user may not create them."""
    from pathlib import Path
    target = agent.target
    text = (Path(__file__).with_name("procedures") / f"{target.dialect}.sql").read_text()
    db = SqlSession(target)
    try:
        if _procedures_current(db):
            agent.log("reusing the TPROC-C stored procedures (vs_*)")
            return
        try:
            if db.dialect == "postgres":
                db.execute(text)
            else:
                for stmt in _split_mysql(text):
                    db.execute(stmt)
        except Exception as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            low = msg.lower()
            what = "PL/pgSQL functions" if db.dialect == "postgres" else "stored procedures"
            if "denied" in low or "permission" in low or "1044" in low or "1142" in low \
                    or "1370" in low:
                grant = ("GRANT CREATE ON SCHEMA public TO " + (target.user or "the user")
                         if db.dialect == "postgres" else
                         f"GRANT CREATE ROUTINE, ALTER ROUTINE, EXECUTE ON "
                         f"`{target.database}`.* TO '{target.user}'@'...'")
                raise DatabaseError(
                    f"cannot create the TPROC-C {what} in {target.database!r}: user "
                    f"{target.user!r} may not ({msg}). Run with stored-procedures=false, or "
                    f"have an administrator {grant} (or create them once as a user who "
                    f"may)") from None
            raise DatabaseError(f"cannot create the TPROC-C {what}: {msg}") from None
        agent.log("created the TPROC-C stored procedures (vs_*)")
    finally:
        db.close()


def _split_mysql(text: str) -> list[str]:
    stmts, buf = [], []
    for line in text.splitlines():
        if line.strip() == "//":
            s = "\n".join(buf).strip()
            if s:
                stmts.append(s)
            buf = []
        elif not line.startswith("--"):
            buf.append(line)
    return stmts


def _procedures_current(db: SqlSession) -> bool:
    try:
        if db.dialect == "postgres":
            n = db.scalar("SELECT COUNT(*) FROM pg_proc p JOIN pg_namespace n ON "
                          "n.oid = p.pronamespace WHERE n.nspname = current_schema() "
                          "AND p.proname = ANY(%s)", (list(PROC_NAMES),))
        else:
            n = db.scalar("SELECT COUNT(*) FROM information_schema.routines WHERE "
                          "routine_schema = DATABASE() AND routine_name IN (%s)"
                          % ",".join(f"'{x}'" for x in PROC_NAMES))
        if int(n or 0) != len(PROC_NAMES):
            return False
        return int(db.scalar("SELECT vs_tpcc_version()") or 0) == PROC_VERSION
    except Exception:
        if db.dialect == "postgres":
            db.conn.rollback() if not db.conn.autocommit else None
        return False
