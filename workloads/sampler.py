"""Host metrics from /proc, one interval at a time (source: /proc on the benchmark host)."""
from __future__ import annotations

import os

CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _is_disk(name: str) -> bool:
    # whole devices only, so partitions are not counted twice
    if name.startswith(("loop", "ram", "dm-", "sr", "zram")):
        return False
    return os.path.exists(f"/sys/block/{name}")


def read_proc() -> dict:
    snap: dict = {"cpu": [0] * len(CPU_MODES), "ctxt": 0, "runq": 0,
                  "disk": [0, 0, 0, 0], "net": [0, 0], "mem": {}}
    for line in _read("/proc/stat").splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "cpu":
            vals = [int(x) for x in parts[1:1 + len(CPU_MODES)]]
            snap["cpu"] = vals + [0] * (len(CPU_MODES) - len(vals))
        elif parts[0] == "ctxt":
            snap["ctxt"] = int(parts[1])
        elif parts[0] == "procs_running":
            snap["runq"] = int(parts[1])
    for line in _read("/proc/diskstats").splitlines():
        p = line.split()
        if len(p) >= 10 and _is_disk(p[2]):
            d = snap["disk"]
            d[0] += int(p[3]); d[1] += int(p[7])                # reads, writes completed
            d[2] += int(p[5]) // 2; d[3] += int(p[9]) // 2      # sectors (512 B) -> KB
    for line in _read("/proc/net/dev").splitlines()[2:]:
        name, _, rest = line.partition(":")
        if name.strip() == "lo":
            continue
        p = rest.split()
        if len(p) >= 9:
            snap["net"][0] += int(p[0]); snap["net"][1] += int(p[8])
    for line in _read("/proc/meminfo").splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable"):
            snap["mem"][key] = int(rest.split()[0])
    return snap


def proc_cpu_seconds(pids) -> tuple[float, float]:
    """User and system CPU seconds of the given processes (the driver's own cost)."""
    u = s = 0
    for pid in pids:
        raw = _read(f"/proc/{pid}/stat")
        if not raw:
            continue
        fields = raw.rpartition(")")[2].split()
        u += int(fields[11]); s += int(fields[12])
    return u / _TICK, s / _TICK


def host_interval(prev: dict, cur: dict, dt: float) -> dict:
    """The `host` event body for the interval between two read_proc() snapshots."""
    dcpu = [c - p for c, p in zip(cur["cpu"], prev["cpu"])]
    total = sum(dcpu) or 1
    cpu = {m: round(100.0 * v / total, 2) for m, v in zip(CPU_MODES, dcpu)}
    dt = dt if dt > 0 else 1.0
    dd = [c - p for c, p in zip(cur["disk"], prev["disk"])]
    dn = [c - p for c, p in zip(cur["net"], prev["net"])]
    mem = cur["mem"]
    total_kb = mem.get("MemTotal", 0)
    avail_kb = mem.get("MemAvailable", 0)
    return {
        "source": "/proc",
        "cpu": cpu,
        "cs_per_s": round((cur["ctxt"] - prev["ctxt"]) / dt, 1),
        "runq": cur["runq"],
        "mem": {"total_kb": total_kb, "available_kb": avail_kb,
                "used_pct": round(100.0 * (total_kb - avail_kb) / total_kb, 2) if total_kb else None},
        "disk": {"reads_per_s": round(dd[0] / dt, 1), "writes_per_s": round(dd[1] / dt, 1),
                 "read_kb_per_s": round(dd[2] / dt, 1), "write_kb_per_s": round(dd[3] / dt, 1)},
        "net": {"rx_kb_per_s": round(dn[0] / 1024 / dt, 1), "tx_kb_per_s": round(dn[1] / 1024 / dt, 1)},
    }


def host_facts() -> dict:
    u = os.uname()
    return {"hostname": u.nodename, "kernel": u.release, "arch": u.machine,
            "cores": os.cpu_count()}
