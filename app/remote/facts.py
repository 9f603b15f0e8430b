"""What a host is: OS, CPU, memory, disks, Python, database drivers, servers and tools.

One POSIX sh script does all the probing in a single round trip (a login over a slow
link costs more than the probes), printing `@@section` headers that `_parse` splits.
Works on any `Transport`, `local` included.
"""
from __future__ import annotations

import json
import re

from .transport import Transport

# cc: builds the micro suite's compiled client loop (workloads/engine/loop/fastloop.c)
TOOLS = ("sysbench", "pgbench", "perf", "vmstat", "iostat", "cc")
SERVERS = ("postgres", "pg_ctl", "mysqld", "mariadbd")
PORTS = ("5432", "3306")
DRIVERS = ("psycopg", "pymysql", "MySQLdb", "mariadb", "libmariadb")

# Runs under the host's chosen interpreter; stdlib only, and Python 3.6 syntax.
_DRIVER_PROBE = r"""
import importlib, json, sys
out = {"_python": {"executable": sys.executable,
                   "version": "%d.%d.%d" % tuple(sys.version_info[:3])}}
for name in ("psycopg", "pymysql", "MySQLdb", "mariadb"):
    try:
        m = importlib.import_module(name)
    except Exception:
        out[name] = None
        continue
    v = getattr(m, "__version__", None) or getattr(m, "version_info", None)
    d = {"version": ".".join(str(x) for x in v[:3]) if isinstance(v, tuple) else v}
    if name == "psycopg":
        try:
            from psycopg import pq
            d["impl"] = pq.__impl__
            v = pq.version()
            d["libpq"] = "%d.%d" % (v // 10000, v % 100) if v >= 100000 else str(v)
        except Exception as e:
            d["error"] = str(e)
    out[name] = d
try:
    import ctypes
    lib = ctypes.CDLL("libmariadb.so.3")
    if hasattr(lib, "mariadb_stmt_execute_direct"):
        lib.mysql_get_client_info.restype = ctypes.c_char_p
        out["libmariadb"] = {"version": lib.mysql_get_client_info().decode()}
    else:
        out["libmariadb"] = None
except Exception:
    out["libmariadb"] = None
print(json.dumps(out))
"""

# $1 is the Python interpreter to probe drivers with; $2 the driver probe.
_SCRIPT = r"""
PY=$1
sec() { printf '@@%s\n' "$1"; }
sec os; sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"'
sec kernel; uname -r
sec arch; uname -m
sec cpu_model
grep -m1 -E '^(model name|Hardware|Processor|cpu model|cpu)[[:space:]]*:' /proc/cpuinfo 2>/dev/null \
  | sed 's/^[^:]*:[[:space:]]*//'
sec cores; getconf _NPROCESSORS_ONLN 2>/dev/null || nproc 2>/dev/null
sec cores_usable; nproc 2>/dev/null
sec mem_total_kb; awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null
if command -v lsblk >/dev/null 2>&1; then
  sec lsblk; lsblk -dn -e 1,7 -o NAME,SIZE,ROTA,MODEL 2>/dev/null
else
  sec partitions; cat /proc/partitions 2>/dev/null
fi
sec python_path; command -v "$PY" 2>/dev/null
sec python; "$PY" --version 2>&1
sec drivers; "$PY" -c "$2" 2>/dev/null
sec tools
for t in sysbench pgbench perf vmstat iostat cc; do printf '%s\t%s\n' "$t" "$(command -v "$t" 2>/dev/null)"; done
sec servers
for b in postgres pg_ctl mysqld mariadbd; do
  p=$(command -v "$b" 2>/dev/null)
  [ -n "$p" ] && printf '%s\t%s\t%s\t%s\n' "$b" "$p" "$("$p" --version 2>/dev/null | head -n1)" \
    "$(readlink -f "$p" 2>/dev/null)"
done
for p in /usr/lib/postgresql/*/bin/postgres /usr/lib/postgresql/*/bin/pg_ctl \
         /usr/pgsql-*/bin/postgres /usr/pgsql-*/bin/pg_ctl; do
  [ -x "$p" ] && printf '%s\t%s\t%s\t%s\n' "${p##*/}" "$p" "$("$p" --version 2>/dev/null | head -n1)" \
    "$(readlink -f "$p" 2>/dev/null)"
done
if command -v ss >/dev/null 2>&1; then
  sec ss; ss -Hltn 2>/dev/null | awk '{print $4}'
else
  sec proc_net_tcp; cat /proc/net/tcp /proc/net/tcp6 2>/dev/null
fi
exit 0
"""


def gather_facts(transport: Transport, python: str = "python3", timeout: float = 20) -> dict:
    """Probe a host in one command and return its facts as plain JSON-friendly data.

    `python` is the interpreter whose drivers matter (the one the agent will run under).
    Keys: os, kernel, arch, cpu_model, cores (online CPUs), cores_usable (nproc), mem_total_kb, disks, python, python_path,
    drivers, servers, tools. A fact the host cannot tell is None (or empty).
    """
    argv = ["sh", "-c", _SCRIPT, "versus-facts", python, _DRIVER_PROBE]
    out = transport.run(argv, timeout=timeout, check=False).stdout.decode("utf-8", "replace")
    return _parse(_sections(out))


def _sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("@@"):
            current = sections.setdefault(line[2:].strip(), [])
        elif current is not None:
            current.append(line)
    return sections


def _first(sections, key) -> str | None:
    lines = [l.strip() for l in sections.get(key, []) if l.strip()]
    return lines[0] if lines else None


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _parse(s: dict[str, list[str]]) -> dict:
    facts = {
        "os": _first(s, "os"),
        "kernel": _first(s, "kernel"),
        "arch": _first(s, "arch"),
        "cpu_model": _first(s, "cpu_model"),
        "cores": _int(_first(s, "cores")),
        "cores_usable": _int(_first(s, "cores_usable")),  # after CPU affinity / cgroup limits
        "mem_total_kb": _int(_first(s, "mem_total_kb")),
        "disks": _disks(s),
        "python_path": _first(s, "python_path"),
        "python": None,
        "drivers": {name: None for name in DRIVERS},
        "servers": _servers(s),
        "tools": {t: None for t in TOOLS},
    }
    version = _first(s, "python")
    if version and re.match(r"Python \d", version):
        facts["python"] = version
    try:
        probe = json.loads(_first(s, "drivers") or "")
    except ValueError:
        probe = None
    if isinstance(probe, dict):
        facts["drivers"] = {name: probe.get(name) for name in DRIVERS}
        facts["python_path"] = probe.get("_python", {}).get("executable") or facts["python_path"]
    for line in s.get("tools", []):
        name, _, path = line.partition("\t")
        if name in facts["tools"]:
            facts["tools"][name] = path.strip() or None
    return facts


def _disks(s) -> list[dict]:
    disks = []
    for line in s.get("lsblk", []):
        parts = line.split(None, 3)
        if len(parts) < 3:
            continue
        disks.append({"name": parts[0], "size": parts[1],
                      "rotational": {"1": True, "0": False}.get(parts[2]),
                      "model": parts[3].strip() if len(parts) > 3 else None})
    for line in s.get("partitions", []):
        parts = line.split()
        if len(parts) == 4 and parts[2].isdigit():
            disks.append({"name": parts[3], "size": f"{int(parts[2]) // 1024}M",
                          "rotational": None, "model": None})
    return disks


def _servers(s) -> dict:
    servers: dict = {name: [] for name in SERVERS}
    seen: dict[str, set] = {name: set() for name in SERVERS}
    for line in s.get("servers", []):
        parts = line.split("\t")
        if len(parts) < 2 or parts[0] not in servers:
            continue
        entry = {"path": parts[1], "version": (parts[2].strip() if len(parts) > 2 else "") or None}
        real = (parts[3].strip() if len(parts) > 3 else "") or parts[1]
        # a symlink on PATH and its target in /usr/lib/postgresql/*/bin are one server
        if real not in seen[parts[0]]:
            seen[parts[0]].add(real)
            servers[parts[0]].append(entry)
    listening: dict = {port: None for port in PORTS}
    if "ss" in s:
        ports = {addr.rpartition(":")[2] for addr in s["ss"]}
        listening = {port: port in ports for port in PORTS}
    elif "proc_net_tcp" in s:
        ports = set()
        for line in s["proc_net_tcp"]:
            f = line.split()
            if len(f) > 3 and f[3] == "0A" and ":" in f[1]:  # 0A = LISTEN
                ports.add(str(int(f[1].rpartition(":")[2], 16)))
        listening = {port: port in ports for port in PORTS}
    servers["listening"] = listening
    return servers


def _version_number(text: str | None) -> str | None:
    m = re.search(r"(\d+\.\d+(?:\.\d+)?(?:-MariaDB)?)", text or "")
    return m.group(1) if m else None


def format_facts(facts: dict) -> list[tuple[str, str]]:
    """Rows of (label, value) for the host panel and `versus host facts`."""
    rows: list[tuple[str, str]] = []
    unknown = "unknown"
    rows.append(("OS", facts.get("os") or unknown))
    kernel = facts.get("kernel") or unknown
    rows.append(("Kernel", f"{kernel} ({facts['arch']})" if facts.get("arch") else kernel))
    cpu = facts.get("cpu_model") or "unknown CPU"
    cores = facts.get("cores")
    rows.append(("CPU", f"{cpu}, {cores} cores" if cores else cpu))
    kb = facts.get("mem_total_kb")
    rows.append(("Memory", f"{kb / 1024 / 1024:.1f} GiB" if kb else unknown))
    disks = []
    for d in facts.get("disks") or []:
        kind = {True: "HDD", False: "SSD"}.get(d.get("rotational"))
        extra = ", ".join(x for x in (kind, d.get("model")) if x)
        disks.append(f"{d['name']} {d['size']}" + (f" ({extra})" if extra else ""))
    rows.append(("Disks", "; ".join(disks) or unknown))
    py = facts.get("python")
    where = facts.get("python_path")
    rows.append(("Python", f"{py} at {where}" if py and where else py or
                 "not found — the agent needs Python 3.9 or newer"))
    drivers = facts.get("drivers") or {}
    labels = {"psycopg": "psycopg (PostgreSQL)", "pymysql": "PyMySQL (MySQL/MariaDB)",
              "MySQLdb": "mysqlclient (MySQL/MariaDB)",
              "mariadb": "MariaDB Connector/Python (prepared statements)",
              "libmariadb": "MariaDB Connector/C (prepared statements, the micro suite's)"}
    for name in DRIVERS:
        d = drivers.get(name)
        if not d:
            rows.append((labels[name], "not installed"))
            continue
        detail = [x for x in (d.get("impl"), f"libpq {d['libpq']}" if d.get("libpq") else None) if x]
        rows.append((labels[name], (d.get("version") or "installed")
                     + (f" ({', '.join(detail)})" if detail else "")))
    servers = facts.get("servers") or {}
    listening = servers.get("listening") or {}
    for label, names, port in (("PostgreSQL", ("postgres",), "5432"),
                               ("MySQL / MariaDB", ("mysqld", "mariadbd"), "3306")):
        found = [f"{_version_number(e.get('version')) or '?'} at {e['path']}"
                 for n in names for e in servers.get(n, [])]
        text = "; ".join(found) or "not installed"
        if listening.get(port) is not None:
            text += f"; port {port} {'in use' if listening[port] else 'free'}"
        rows.append((label, text))
    tools = facts.get("tools") or {}
    have = [t for t in TOOLS if tools.get(t)]
    missing = [t for t in TOOLS if not tools.get(t)]
    rows.append(("Tools", ", ".join(have) + (f" (missing: {', '.join(missing)})"
                                             if missing else "") if have else
                 f"none of {', '.join(TOOLS)}"))
    return rows
