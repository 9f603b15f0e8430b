"""What the agent's 1-second sampler costs, in percent of one core.

Measures, on this machine, the thread CPU time (time.thread_time) of each part of one
sampling interval, repeated --n times:

  /proc/stat etc.     read_proc(): host CPU modes, disks, network, memory
  process groups      ProcGroups.sample(): every /proc/PID/stat, the server's threads
  server counters     ServerCounters.read() on PostgreSQL and MariaDB (client side)

and the server side of the counter polls: the CPU of the monitoring connection's backend
(PostgreSQL) or thread (MariaDB), read from /proc before and after the polls. The servers
are the machine's own (127.0.0.1:5432 and :3306); nothing is changed on them.

    .venv/bin/python bench/sampler_cost.py --n 200
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from workloads.engine.measure.counters import ServerCounters  # noqa: E402
from workloads.engine.sql.db import TargetInfo  # noqa: E402
from workloads.engine.measure.locate import locate_server  # noqa: E402
from workloads.engine.measure.procgroups import TICK, ProcGroups, read_stat  # noqa: E402
from workloads.engine.measure.sampler import read_proc  # noqa: E402

TARGETS = {
    "postgres": TargetInfo("postgres", "127.0.0.1", 5432, "postgres", "postgres"),
    "mariadb": TargetInfo("mariadb", "127.0.0.1", 3306, "root", "mysql"),
}


def _cost(fn, n: int) -> float:
    """Mean thread CPU milliseconds per call."""
    fn()
    t0 = time.thread_time()
    for _ in range(n):
        fn()
    return (time.thread_time() - t0) * 1000 / n


def _server_ticks(srv, counters) -> int:
    """CPU ticks so far of the monitoring connection's backend or thread."""
    if srv is None:
        return 0
    if srv.engine == "postgres":
        pid = int(counters.session.scalar("SELECT pg_backend_pid()"))
        st = read_stat(f"/proc/{pid}/stat")
    else:
        tid = srv._monitor_tid() if srv._monitor_tid else 0
        st = read_stat(f"/proc/{srv.pid}/task/{tid}/stat") if tid else None
    return (st[1] + st[2]) if st else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200, help="intervals to time")
    a = ap.parse_args()
    nproc = sum(1 for e in os.scandir("/proc") if e.name.isdigit())
    print(f"{os.cpu_count()} cores, {nproc} processes; ms of thread CPU per 1-s interval "
          f"(= tenths of a percent of one core)")
    print(f"  /proc/stat, diskstats, net, meminfo   {_cost(read_proc, a.n):6.2f} ms")
    for engine, target in TARGETS.items():
        counters = ServerCounters(target)
        srv, note = locate_server(target, counters.session)
        groups = ProcGroups(os.getpid(), srv, threading.get_native_id())
        ms_groups = _cost(groups.sample, a.n)
        before = _server_ticks(srv, counters)
        ms_counters = _cost(counters.read, a.n)
        server_ms = (_server_ticks(srv, counters) - before) * 1000 / TICK / (a.n + 1)
        threads = len(os.listdir(f"/proc/{srv.pid}/task")) if srv else 0
        print(f"  process groups ({engine:8s} {threads:3d} thr) {ms_groups:6.2f} ms"
              f"   {srv.describe if srv else note}")
        print(f"  server counters ({engine}, client)   {ms_counters:6.2f} ms")
        print(f"  server counters ({engine}, server)   {server_ms:6.2f} ms "
              f"(tick resolution {1000 / TICK:.0f} ms over {a.n} polls)")
        counters.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
