"""Host metrics from /proc, one interval at a time (source: /proc on the benchmark host)."""
from __future__ import annotations

import os
from collections import deque

CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def read_text(path: str) -> str:
    """A /proc or /sys file's text; "" when it cannot be read."""
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


def read_cpu() -> list[int]:
    """The host's CPU ticks by mode (the first line of /proc/stat)."""
    for line in read_text("/proc/stat").splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            vals = [int(x) for x in parts[1:1 + len(CPU_MODES)]]
            return vals + [0] * (len(CPU_MODES) - len(vals))
    return [0] * len(CPU_MODES)


def around(snap: dict, after: list[int]) -> dict:
    """A snapshot whose CPU ticks are the mean of its own and ``after``'s: the moment the
    processes were read, which lies between the two when a scan of every process takes a
    while (it is preempted on a busy host)."""
    return {**snap, "cpu": [(a + b) / 2 for a, b in zip(snap["cpu"], after)]}


def read_proc() -> dict:
    snap: dict = {"cpu": [0] * len(CPU_MODES), "ctxt": 0, "runq": 0,
                  "disk": [0, 0, 0, 0], "net": [0, 0], "mem": {}}
    for line in read_text("/proc/stat").splitlines():
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
    for line in read_text("/proc/diskstats").splitlines():
        p = line.split()
        if len(p) >= 10 and _is_disk(p[2]):
            d = snap["disk"]
            d[0] += int(p[3]); d[1] += int(p[7])                # reads, writes completed
            d[2] += int(p[5]) // 2; d[3] += int(p[9]) // 2      # sectors (512 B) -> KB
    for line in read_text("/proc/net/dev").splitlines()[2:]:
        name, _, rest = line.partition(":")
        if name.strip() == "lo":
            continue
        p = rest.split()
        if len(p) >= 9:
            snap["net"][0] += int(p[0]); snap["net"][1] += int(p[8])
    for line in read_text("/proc/meminfo").splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable"):
            snap["mem"][key] = int(rest.split()[0])
    return snap


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


class PhaseWindow:
    """CPU by process group summed over the host intervals that lie inside one phase.

    The sampler adds each interval as it ends; closing the window at the phase's end drops
    an interval that reaches past it, so the totals cover whole intervals inside the phase.
    Memory is constant however long the phase.
    """

    def __init__(self, t0: float):
        self.t0 = t0
        self.acc: dict[str, list[float]] = {}
        self.total = 0.0
        self.first_a: float | None = None
        self._recent: deque = deque(maxlen=3)

    def add(self, a: float, b: float, groups: dict[str, list[float]], total: float) -> None:
        if a < self.t0 - 0.05:
            return
        for g, (u, s) in groups.items():
            acc = self.acc.setdefault(g, [0.0, 0.0])
            acc[0] += u
            acc[1] += s
        self.total += total
        if self.first_a is None:
            self.first_a = a
        self._recent.append((a, b, groups, total))

    def close(self, t_end: float) -> dict | None:
        """The `cpu_groups` of a summary: CPU seconds per group and the span they cover;
        None when no whole interval lay inside the phase."""
        last_b = None
        for a, b, groups, total in self._recent:
            if b > t_end + 0.05:
                for g, (u, s) in groups.items():
                    self.acc[g][0] -= u
                    self.acc[g][1] -= s
                self.total -= total
            else:
                last_b = b if last_b is None or b > last_b else last_b
        if last_b is None or self.first_a is None:
            return None
        out = {g: {"user_s": round(u / _TICK, 3), "system_s": round(s / _TICK, 3)}
               for g, (u, s) in sorted(self.acc.items()) if u > 0 or s > 0}
        return {"groups": out, "host_cpu_s": round(self.total / _TICK, 3),
                "span": [round(self.first_a, 3), round(last_b, 3)],
                "source": "/proc/PID/stat of every process, summed over the host intervals "
                          "inside the phase"}
