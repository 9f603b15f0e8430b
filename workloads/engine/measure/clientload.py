"""Is the client, not the server, the limit? (source: /proc on the benchmark host)

Two signs, per interval, for the driver (the agent and every process it started):

- its CPU use against the cores it may use: its CPU affinity (os.sched_getaffinity) and
  its cgroup's CPU quota (cpu.max, or cpu.cfs_quota_us in cgroup v1). The use is the
  nanoseconds on a CPU of its tasks (/proc/PID/task/TID/schedstat), read together and timed
  by a clock read around them: the clock-tick totals of the scan of every process are read
  over a whole scan, which under load (a scan preempted, or throttled with the driver by
  its quota) spans a good part of a second, and one interval read 0.49 cores under a
  0.3-core quota;
- its virtual users waiting to run: the run-queue wait of /proc/PID/schedstat (time a VU
  was ready but had no CPU), as a share of the interval, averaged over the VUs.

A driver above 90 % of its cores is limited; so are VUs waiting over half the time (and,
when the server is on this host, 1.5 times as long as the server's connections) when they
compete with each other for the driver's cores (more VUs than cores it may use) or the
driver uses half its cores or more. Without that condition small hosts mislead: a backend
woken on its VU's core runs while the VU is still runnable, so 2 VUs on 2 cores "wait" 60 %
of the time in a run they do not limit. Three limited intervals in a row in a phase make
the warning, and the phase's summary says how much of it was limited.
"""
from __future__ import annotations

import os
import time

from .sampler import read_text

BUSY_SHARE = 0.90           # driver CPU / cores it may use
WAIT_SHARE = 0.50           # mean run-queue wait per VU / interval
IN_A_ROW = 3


def cgroup_quota(pid: int) -> float | None:
    """Cores allowed by the process's cgroup CPU quota; None when there is none."""
    for line in read_text(f"/proc/{pid}/cgroup").splitlines():
        hier, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hier == "0" and controllers == "":
            quota, _, period = read_text(f"/sys/fs/cgroup{path}/cpu.max").partition(" ")
            if quota and quota != "max" and period.strip():
                return int(quota) / int(period)
        elif "cpu" in controllers.split(","):
            base = f"/sys/fs/cgroup/{controllers}{path}"
            q, p = read_text(f"{base}/cpu.cfs_quota_us").strip(), read_text(
                f"{base}/cpu.cfs_period_us").strip()
            if q and p and int(q) > 0:
                return int(q) / int(p)
    return None


def allowed_cores(pid: int) -> tuple[float, str]:
    """How many cores the process may use, and what sets that limit, in words."""
    try:
        n = float(len(os.sched_getaffinity(pid)))
        why = f"CPU affinity: {int(n)} of {os.cpu_count()} cores"
    except OSError:
        n, why = float(os.cpu_count() or 1), "all cores"
    quota = cgroup_quota(pid)
    if quota is not None and quota < n:
        return quota, f"cgroup CPU quota: {quota:g} cores"
    return n, why


def schedstat(task: str) -> tuple[int, int] | None:
    """(ns on a CPU, ns waiting on a run queue) of a task (/proc/PID or /proc/PID/task/TID;
    for a process, its main thread)."""
    parts = read_text(f"{task}/schedstat").split()
    if len(parts) < 2:
        return None
    return int(parts[0]), int(parts[1])


def sentence(info: dict, nvu: int) -> str:
    """The warning for one limited interval (a ClientWatch.interval result)."""
    allowed = info["cores_allowed"]
    cores = f"{allowed:g} core{'s' if allowed != 1 else ''}"
    parts = []
    if info["driver_cores"] >= BUSY_SHARE * allowed:
        parts.append(f"the driver used {info['driver_cores']:.2f} of the {cores} it may use "
                     f"({info['allowed_by']})")
    wait = info.get("vu_wait_pct")
    if wait is not None and wait >= WAIT_SHARE * 100:
        server = info.get("server_wait_pct")
        vs = f", the server's connections {server:.0f} %" if server is not None else ""
        where = "" if parts else f" on the {cores} they may use ({info['allowed_by']})"
        parts.append(f"its {nvu} virtual users waited {wait:.0f} % of the time for a CPU"
                     f"{where}{vs}")
    return (f"The client limits throughput, not the server: {' and '.join(parts)}. Give the "
            f"driver more cores or use fewer virtual users.")


def is_limited(cores: float, allowed: float, vu_wait: float | None,
               srv_wait: float | None, nvu: int) -> bool:
    """The verdict for one interval (waits as shares of it; see the module's note)."""
    waiting = (vu_wait is not None and vu_wait >= WAIT_SHARE
               and (nvu > allowed or cores >= 0.5 * allowed)
               and (srv_wait is None or vu_wait >= 1.5 * srv_wait))
    return cores >= BUSY_SHARE * allowed or waiting


class RunQueueWait:
    """Mean share of an interval that a set of tasks spent ready to run but without a CPU,
    over the tasks that ran or waited at all in it."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, int]] = {}

    def share(self, tasks: list[str], dt: float) -> float | None:
        now: dict[str, tuple[int, int]] = {}
        waits = []
        for task in tasks:
            st = schedstat(task)
            if st is None:
                continue
            now[task] = st
            old = self._last.get(task)
            if old is not None and (st[0] - old[0]) + (st[1] - old[1]) > 0:
                waits.append((st[1] - old[1]) / 1e9 / dt)
        self._last = now
        return sum(waits) / len(waits) if waits and dt > 0 else None


class TaskCpu:
    """Seconds on a CPU of a set of processes (all their threads) since the previous read,
    and the seconds between the two reads, by a clock read around each (so the two are
    taken together). A task new since the previous read counts whole (it started after it);
    one that ended since loses its last part-interval (reads low, never high)."""

    def __init__(self) -> None:
        self._last: dict[str, int] = {}
        self._t: float | None = None

    def read(self, pids: list[int]) -> tuple[float, float] | None:
        """(CPU seconds, elapsed seconds) since the previous read; None on the first."""
        t0 = time.monotonic()
        now: dict[str, int] = {}
        for pid in pids:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                st = schedstat(f"/proc/{pid}/task/{tid}")
                if st is not None:
                    now[f"{pid}/{tid}"] = st[0]
        t = (t0 + time.monotonic()) / 2
        last, prev_t = self._last, self._t
        self._last, self._t = now, t
        if prev_t is None or t <= prev_t:
            return None
        ns = sum(v - last.get(k, 0) for k, v in now.items() if v >= last.get(k, 0))
        return ns / 1e9, t - prev_t


class ClientWatch:
    """Per interval: the driver's cores in use, its VUs' and the server connections'
    run-queue wait, and the verdict."""

    def __init__(self, driver_pid: int):
        self.driver_pid = driver_pid
        self._cpu = TaskCpu()
        self._vus = RunQueueWait()
        self._server = RunQueueWait()

    def start(self, driver_pids: list[int]) -> None:
        """The first read of the driver's CPU, where the sampler's first interval starts."""
        self._cpu.read(driver_pids)

    def interval(self, dt: float, driver_pids: list[int], vu_pids: list[int],
                 server_tasks: list[str]) -> dict:
        """`dt`: the sampler's interval, for the waits; the driver's cores are timed by
        their own reads (`driver_pids`: the agent and every process it started)."""
        allowed, allowed_by = allowed_cores(self.driver_pid)
        used = self._cpu.read(driver_pids)
        cores = used[0] / used[1] if used is not None else 0.0
        vu_wait = self._vus.share([f"/proc/{p}" for p in vu_pids], dt)
        srv_wait = self._server.share(server_tasks, dt) if vu_pids else None
        # VUs that wait far more than the server's connections do: the client side is short
        # of CPU (when both wait alike, the host as a whole is)
        limited = is_limited(cores, allowed, vu_wait, srv_wait, len(vu_pids))
        out = {"driver_cores": round(cores, 3), "cores_allowed": round(allowed, 2),
               "allowed_by": allowed_by, "limited": limited}
        if vu_wait is not None:
            out["vu_wait_pct"] = round(vu_wait * 100, 1)
        if srv_wait is not None:
            out["server_wait_pct"] = round(srv_wait * 100, 1)
        return out


class PhaseClient:
    """The client's verdicts over one phase: warns once after IN_A_ROW limited intervals."""

    def __init__(self, nvu: int):
        self.nvu = nvu
        self.intervals = self.limited = self.row = 0
        self.cores_sum = self.wait_sum = 0.0
        self.waits = 0
        self.warned: str | None = None
        self.worst: dict | None = None

    def add(self, info: dict) -> str | None:
        """Count one interval; the warning sentence when this one makes it due."""
        self.intervals += 1
        self.cores_sum += info["driver_cores"]
        if "vu_wait_pct" in info:
            self.wait_sum += info["vu_wait_pct"]
            self.waits += 1
        if not info["limited"]:
            self.row = 0
            return None
        self.limited += 1
        self.row += 1
        self.worst = info if self.worst is None or \
            info["driver_cores"] > self.worst["driver_cores"] else self.worst
        if self.row >= IN_A_ROW and self.warned is None:
            self.warned = self._sentence(info)
            return self.warned
        return None

    def _sentence(self, info: dict) -> str:
        return sentence(info, self.nvu)

    def summary(self) -> dict:
        out = {"intervals": self.intervals, "limited_intervals": self.limited,
               "driver_cores_mean": round(self.cores_sum / self.intervals, 3)
               if self.intervals else None,
               "vu_wait_pct_mean": round(self.wait_sum / self.waits, 1) if self.waits else None,
               "source": "/proc: the driver's CPU against its affinity and cgroup quota; "
                         "the virtual users' run-queue wait (/proc/PID/schedstat)"}
        if self.warned is not None:
            share = self.limited / self.intervals * 100 if self.intervals else 0
            out["sentence"] = (f"{self.warned} This held in {self.limited} of the phase's "
                               f"{self.intervals} one-second intervals ({share:.0f} %).")
        return out
