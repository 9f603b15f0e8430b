"""Apply a profile to an existing (not managed) server, on the benchmark host (stdlib plus the
database drivers, like the agent).

PostgreSQL: ALTER SYSTEM SET for each setting, then pg_reload_conf(); a setting the server
takes only at start (context 'postmaster') is listed in needs_restart.
MySQL 8+: SET PERSIST; a read-only variable is written with SET PERSIST_ONLY and listed in
needs_restart.
MariaDB has no SET PERSIST: SET GLOBAL for dynamic variables (the value is lost when the server
restarts unless it is also written to the server's option file, which Versus does not touch);
read-only variables are listed in needs_restart.

The restart command is the user's own, run through the host's shell only when asked for
(restart=true); Versus passes it no password.

    python -m workloads.engine.servers.profile_apply   # stdin: one JSON line, then the password line
    -> {"ok": true, "version", "applied": [names], "needs_restart": [names],
        "rejected": [{name, value, error}], "restarted": bool, "persisted": bool, "notes": [...]}
       or {"ok": false, "error": "sentence"}
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from ...profiles import ProfileError, host_context, norm_mysql_name, render
from .settings_check import _MY_SUFFIX, _NUM, _text, setting_lines

_PG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_MY_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
MARIADB_NOTE = ("MariaDB has no SET PERSIST: the values set with SET GLOBAL are lost when the "
                "server restarts unless they are also written to its option file (Versus does "
                "not change option files)")


def _first_line(exc: Exception) -> str:
    diag = getattr(exc, "diag", None)          # psycopg: the server's own primary message
    msg = getattr(diag, "message_primary", None) if diag is not None else None
    if not msg:
        args = getattr(exc, "args", ())
        # MySQL drivers: (errno, message)
        msg = args[1] if len(args) >= 2 and isinstance(args[0], int) else str(exc)
    return str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__


def _errno(exc: Exception) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


# --- PostgreSQL ------------------------------------------------------------------------------

def _apply_pg(db, settings: list[tuple[int, str, str | None]], report: dict) -> None:
    from psycopg import sql
    accepted: list[str] = []
    for _line, name, value in settings:
        if not _PG_NAME.match(name):
            report["rejected"].append({"name": name, "value": value,
                                       "error": f"{name!r} is not a setting name"})
            continue
        stmt = sql.SQL("ALTER SYSTEM SET {} = {}").format(
            sql.SQL(name.lower()), sql.Literal(value or ""))
        try:
            db.execute(stmt)
        except Exception as exc:  # the server's refusal, in its own words
            report["rejected"].append({"name": name, "value": value, "error": _first_line(exc)})
            continue
        if name.lower() not in accepted:
            accepted.append(name.lower())
    if not accepted:
        return
    db.execute("SELECT pg_reload_conf()")
    # pg_file_settings reads the files now: a start-only setting that differs from the running
    # value says 'setting could not be applied'
    restart = {str(n).lower() for n, in db.execute(
        "SELECT name FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf' "
        "AND error IS NOT NULL")}
    # the reload is asynchronous: wait (briefly) until this session has read the new values
    deadline = time.monotonic() + 5
    while True:
        rows = db.execute("SELECT name, context, pending_restart, sourcefile FROM pg_settings "
                          "WHERE name = ANY(%s)", (accepted,))
        info = {str(n).lower(): (c, p, f or "") for n, c, p, f in rows}
        restart |= {n for n, (_c, pending, _f) in info.items() if pending}
        waiting = [n for n, (c, _p, f) in info.items()
                   if c != "postmaster" and n not in restart
                   and not f.endswith("postgresql.auto.conf")]
        if not waiting or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for n in accepted:
        (report["needs_restart"] if n in restart else report["applied"]).append(n)
    report["persisted"] = True


# --- MySQL / MariaDB -------------------------------------------------------------------------

def _my_literal(value: str) -> str | None:
    """A number (with K/M/G… suffix) as an SQL literal, or None when it is not one."""
    m = _NUM.match(value)
    if not m or m.group(2).lower() not in _MY_SUFFIX:
        return None
    number = float(m.group(1)) * _MY_SUFFIX[m.group(2).lower()]
    if number == int(number) and ("." not in m.group(1) or m.group(2)):
        return str(int(number))
    return repr(number)


def _apply_my(db, settings: list[tuple[int, str, str | None]], report: dict,
              mariadb: bool) -> None:
    for _line, raw, value in settings:
        name = norm_mysql_name(raw)
        if value is None:                     # a bare flag: skip-x is x = OFF, x is x = ON
            if name.startswith("skip_"):
                name, value = name[5:], "OFF"
            else:
                value = "ON"
        if not _MY_NAME.match(name):
            report["rejected"].append({"name": raw, "value": value,
                                       "error": f"{raw!r} is not a variable name"})
            continue
        lit = _my_literal(value)
        rhs, args = (lit, None) if lit is not None else ("%s", (value,))
        scope = "GLOBAL" if mariadb else "PERSIST"
        try:
            db.execute(f"SET {scope} {name} = {rhs}", args)
            report["applied"].append(name)
            continue
        except Exception as exc:
            err, errno = _first_line(exc), _errno(exc)
        if errno == 1238 or "read only" in err.lower():    # ER_INCORRECT_GLOBAL_LOCAL_VAR
            if mariadb:
                report["needs_restart"].append(name)
                continue
            try:
                db.execute(f"SET PERSIST_ONLY {name} = {rhs}", args)
                report["needs_restart"].append(name)
                continue
            except Exception as exc:
                err = _first_line(exc)
        report["rejected"].append({"name": raw, "value": value, "error": err})
    if mariadb:
        report["persisted"] = False
        if report["needs_restart"]:
            report["notes"].append("the read-only variables take effect only if they are set "
                                   "in the server's option file before it restarts")
        report["notes"].append(MARIADB_NOTE)
    else:
        report["persisted"] = True


# --- the whole step --------------------------------------------------------------------------

def run_restart(command: str, timeout: float = 600) -> tuple[bool, str]:
    """The user's restart command through the host's shell: (succeeded, last output)."""
    try:
        c = subprocess.run(command, shell=True, capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"the restart command did not finish within {timeout:.0f} s"
    out = (c.stdout + c.stderr).decode("utf-8", "replace").strip()[-500:]
    if c.returncode != 0:
        return False, f"the restart command exited with {c.returncode}: {out}"
    return True, out


def apply(target, profile_text: str, context: dict, restart_command: str | None = None,
          restart: bool = False) -> dict:
    """Apply a rendered-for-this-host profile to a running server. Raises ProfileError (the
    profile cannot be rendered) or DatabaseError (no connection)."""
    from ..sql.db import SqlSession
    rendered = render(profile_text, context)
    engine = "postgres" if target.dialect == "postgres" else "mysql"
    settings = setting_lines(engine, rendered)
    report: dict = {"applied": [], "needs_restart": [], "rejected": [], "restarted": False,
                    "persisted": False, "notes": []}
    db = SqlSession(target)
    try:
        version = db.version()
        report["version"] = version
        if engine == "postgres":
            _apply_pg(db, settings, report)
        else:
            mariadb = "mariadb" in version.lower()
            if not mariadb:
                major = re.match(r"(\d+)", _text(db.scalar("SELECT @@version")) or "")
                if major and int(major.group(1)) < 8:
                    raise ProfileError("MySQL before 8.0 has no SET PERSIST; apply the profile "
                                       "through the server's option file")
            _apply_my(db, settings, report, mariadb)
    finally:
        db.close()
    if restart and restart_command:
        ok, out = run_restart(restart_command)
        report["restarted"] = ok
        report["restart_output"] = out
    elif report["needs_restart"] and restart_command:
        report["notes"].append("not restarted: ask for the restart to run the restart command")
    return report


def main() -> int:
    from ..sql.db import DatabaseError, TargetInfo
    req = json.loads(sys.stdin.readline() or "{}")
    password = sys.stdin.readline().rstrip("\n")
    try:
        out = apply(TargetInfo.from_spec(req["target"], password), req["config"],
                    host_context(req.get("clients")), req.get("restart_command") or None,
                    bool(req.get("restart")))
    except (DatabaseError, ProfileError) as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 1
    print(json.dumps({"ok": True, **out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
