"""Check a profile's settings against a running server, on the benchmark host (stdlib plus the
database drivers, like the agent).

The profile is rendered for this host, each setting line is read with its line number, and
every name and value is checked against what the server itself describes: pg_settings
(type, unit, range, allowed values) or SHOW GLOBAL VARIABLES plus MariaDB's
information_schema.SYSTEM_VARIABLES / MySQL's performance_schema.variables_info.

    python -m workloads.engine.servers.settings_check     # stdin: one JSON line, then the password line
    -> {"ok": true, "version": "...", "checked": 12, "problems": [{line, name, value, kind,
        message}]}      or {"ok": false, "error": "sentence"}

kind is "unknown" (the server has no such setting) or "rejected" (it would refuse the value).
"""
from __future__ import annotations

import json
import re
import sys

from ...profiles import (MYSQL_SERVER_GROUPS, ProfileError, _strip_pg_comment, host_context,
                       norm_mysql_name, pg_assignment, render)

_NUM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*$")
_PG_MEMORY = {"B": 1, "kB": 1024, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
_PG_TIME = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_PG_BOOL = ("on", "off", "true", "false", "yes", "no", "1", "0")
_MY_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50,
              "e": 1 << 60}
# my.cnf options that configure the server but have no global variable of the same name
_MY_OPTIONS = {"plugin_load", "plugin_load_add", "early_plugin_load", "user", "disable_log_bin",
               "log_bin", "skip_log_bin", "skip_grant_tables", "skip_networking",
               "transaction_isolation", "character_set_server", "collation_server"}


def setting_lines(engine: str, text: str) -> list[tuple[int, str, str | None]]:
    """(line number, name, value) of every setting in a rendered postgresql.conf or my.cnf
    fragment (my.cnf: only the server's groups)."""
    out: list[tuple[int, str, str | None]] = []
    group = "mysqld"
    for lineno, raw in enumerate(text.splitlines(), 1):
        if engine == "postgres":
            s = _strip_pg_comment(raw)
            if not s:
                continue
            out.append((lineno, *pg_assignment(s)))
            continue
        s = raw.strip()
        if not s or s[0] in "#;" or s.startswith("!"):
            continue
        if s.startswith("[") and s.endswith("]"):
            group = s[1:-1].strip().lower()
            continue
        if group not in MYSQL_SERVER_GROUPS and not group.startswith(("mariadb-", "mysqld-")):
            continue
        name, sep, value = s.partition("=")
        if not sep:
            out.append((lineno, name.strip(), None))
            continue
        value = value.split(" #", 1)[0].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append((lineno, name.strip(), value))
    return out


# --- PostgreSQL ------------------------------------------------------------------------------

def _pg_base(unit: str) -> tuple[dict[str, float], float] | None:
    """(the unit family, the size of one base unit) for pg_settings.unit ('8kB', 'ms', …)."""
    m = re.fullmatch(r"(\d*)(\w+)", unit or "")
    if not m:
        return None
    mult = int(m.group(1) or 1)
    for family in (_PG_MEMORY, _PG_TIME):
        if m.group(2) in family:
            return family, family[m.group(2)] * mult
    return None


def check_pg_value(info: dict, value: str) -> str | None:
    """Why PostgreSQL would refuse this value for the setting, or None."""
    vartype, v = info.get("vartype"), value.strip()
    if vartype == "bool":
        low = v.lower()
        # PostgreSQL takes any unambiguous prefix: t, fa, y, n, on, of, …
        ok = low in _PG_BOOL or bool(low) and (
            any(w.startswith(low) for w in ("true", "false", "yes", "no"))
            or len(low) >= 2 and any(w.startswith(low) for w in ("on", "off")))
        return None if ok else f"{v!r} is not a boolean (use on or off)"
    if vartype == "enum":
        allowed = [str(x) for x in info.get("enumvals") or []]
        if v.lower() in (a.lower() for a in allowed):
            return None
        return f"{v!r} is not one of {', '.join(allowed)}"
    if vartype not in ("integer", "real"):
        return None
    m = _NUM.match(v)
    if not m:
        return f"{v!r} is not a number"
    number, unit = float(m.group(1)), m.group(2)
    base = _pg_base(info.get("unit") or "")
    if unit:
        if base is None:
            return f"{v!r} has a unit, and this setting takes a plain number"
        family, size = base
        if unit not in family:
            return (f"{unit!r} is not a unit for this setting (use "
                    f"{', '.join(family)})")
        number = number * family[unit] / size
    lo, hi = info.get("min_val"), info.get("max_val")
    try:
        lo_f = float(lo) if lo not in (None, "") else None
        hi_f = float(hi) if hi not in (None, "") else None
    except ValueError:
        lo_f = hi_f = None
    if vartype == "integer":
        number = round(number)
    shown = info.get("unit") or ""
    if lo_f is not None and number < lo_f or hi_f is not None and number > hi_f:
        return (f"{v} is outside the allowed range {lo}..{hi}"
                + (f" (in units of {shown})" if shown else ""))
    return None


def check_pg(settings: list[tuple[int, str, str | None]], known: dict[str, dict]) -> list[dict]:
    problems = []
    for line, name, value in settings:
        info = known.get(name.lower())
        if info is None:
            if "." in name:          # a custom (extension) placeholder: the server takes it
                continue
            near = _nearest(name.lower(), known)
            problems.append({"line": line, "name": name, "value": value, "kind": "unknown",
                             "message": f"the server has no setting named {name!r}"
                                        + (f" (did you mean {near}?)" if near else "")})
            continue
        why = check_pg_value(info, value or "")
        if why:
            problems.append({"line": line, "name": name, "value": value, "kind": "rejected",
                             "message": f"{name}: {why}"})
    return problems


# --- MySQL / MariaDB -------------------------------------------------------------------------

def check_my_value(info: dict, value: str) -> str | None:
    vtype = (info.get("type") or "").upper()
    v = value.strip()
    if vtype in ("BOOLEAN",):
        return None if v.upper() in ("ON", "OFF", "TRUE", "FALSE", "1", "0") else \
            f"{v!r} is not a boolean (use ON or OFF)"
    if vtype == "ENUM" and info.get("enum"):
        allowed = info["enum"]
        if v.upper() in (a.upper() for a in allowed) or v.isdigit() and int(v) < len(allowed):
            return None
        return f"{v!r} is not one of {', '.join(allowed)}"
    if vtype == "SET" and info.get("enum"):
        bad = [x for x in v.split(",") if x.strip() and x.strip().upper() not in
               (a.upper() for a in info["enum"])]
        return f"{', '.join(bad)} not in {', '.join(info['enum'])}" if bad else None
    numeric = any(t in vtype for t in ("INT", "DOUBLE", "DECIMAL")) or \
        (not vtype and (info.get("min") not in (None, "") or info.get("max") not in (None, "")))
    if not numeric:
        return None
    m = _NUM.match(v)
    if not m or m.group(2).lower() not in _MY_SUFFIX:
        return f"{v!r} is not a number (suffixes K, M, G are allowed)"
    number = float(m.group(1)) * _MY_SUFFIX[m.group(2).lower()]
    lo, hi = info.get("min"), info.get("max")
    try:
        if lo not in (None, "") and number < float(lo) or \
                hi not in (None, "") and number > float(hi):
            return f"{v} is outside the allowed range {lo}..{hi}"
    except ValueError:
        pass
    return None


def check_my(settings: list[tuple[int, str, str | None]], known: dict[str, dict]) -> list[dict]:
    problems = []
    for line, name, value in settings:
        raw = name.strip().lower().replace("-", "_")
        loose = raw.startswith("loose_")
        n = norm_mysql_name(name)
        info = known.get(n)
        if info is None and n.startswith("skip_"):
            info = known.get(n[5:])
            value = None                       # skip-x means x = OFF
        if info is None:
            if loose or n in _MY_OPTIONS:
                continue
            near = _nearest(n, known)
            problems.append({"line": line, "name": name, "value": value, "kind": "unknown",
                             "message": f"the server has no variable named {n!r}"
                                        + (f" (did you mean {near}?)" if near else "")
                                        + "; prefix a startup-only option with loose- if it "
                                          "has none"})
            continue
        if value is None:
            continue
        why = check_my_value(info, value)
        if why:
            problems.append({"line": line, "name": name, "value": value, "kind": "rejected",
                             "message": f"{n}: {why}"})
    return problems


def _nearest(name: str, known: dict) -> str:
    import difflib
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.8)
    return close[0] if close else ""


# --- reading the server ----------------------------------------------------------------------

def read_known(db) -> dict[str, dict]:
    if db.dialect == "postgres":
        rows = db.execute("SELECT name, vartype, unit, min_val, max_val, enumvals "
                          "FROM pg_settings")
        return {str(n).lower(): {"vartype": t, "unit": u, "min_val": lo, "max_val": hi,
                                 "enumvals": list(e or [])} for n, t, u, lo, hi, e in rows}
    known: dict[str, dict] = {}
    for n, _v in db.execute("SHOW GLOBAL VARIABLES"):
        known[_text(n).lower()] = {}
    try:
        rows = db.execute("SELECT VARIABLE_NAME, VARIABLE_TYPE, NUMERIC_MIN_VALUE, "
                          "NUMERIC_MAX_VALUE, ENUM_VALUE_LIST "
                          "FROM information_schema.SYSTEM_VARIABLES")
        for n, t, lo, hi, enum in rows:
            rec = known.setdefault(_text(n).lower(), {})
            rec.update(type=_text(t), min=_text(lo), max=_text(hi),
                       enum=[x for x in _text(enum).split(",") if x])
    except Exception:
        try:
            for n, lo, hi in db.execute("SELECT VARIABLE_NAME, MIN_VALUE, MAX_VALUE "
                                        "FROM performance_schema.variables_info"):
                rec = known.setdefault(_text(n).lower(), {})
                if _text(lo) != "0" or _text(hi) != "0":
                    rec.update(min=_text(lo), max=_text(hi))
        except Exception:
            pass
    return known


def _text(v) -> str:
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    return "" if v is None else str(v)


def check_text(engine: str, config: str, known: dict[str, dict],
               clients: int | None = None) -> list[dict]:
    rendered = render(config, host_context(clients))
    lines = setting_lines(engine, rendered)
    return check_pg(lines, known) if engine == "postgres" else check_my(lines, known)


def main() -> int:
    from ..sql.db import DatabaseError, SqlSession, TargetInfo
    req = json.loads(sys.stdin.readline() or "{}")
    password = sys.stdin.readline().rstrip("\n")
    try:
        db = SqlSession(TargetInfo.from_spec(req["target"], password))
        try:
            version = db.version()
            known = read_known(db)
        finally:
            db.close()
        problems = check_text(req["engine"], req["config"], known, req.get("clients"))
        count = len(setting_lines(req["engine"], render(req["config"],
                                                         host_context(req.get("clients")))))
    except (DatabaseError, ProfileError) as exc:
        print(json.dumps({"ok": False, "error": str(exc)}))
        return 1
    print(json.dumps({"ok": True, "version": version, "checked": count, "problems": problems}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
