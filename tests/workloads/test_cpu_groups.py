"""Host CPU split into process groups (workloads/engine/measure/procgroups.py) with real processes and real
servers: the machine's PostgreSQL 15 and MariaDB 10.11, and private instances of them that
the agent starts with settings the shared servers must keep (autovacuum every second, small
WAL, performance_schema on)."""
from __future__ import annotations

import math
import os
import sys
import time

import pytest

from tests.workloads.agentrun import PG15, local_target, managed_target, run_agent
from workloads.engine.sql.db import SqlSession, TargetInfo
from workloads.engine.measure.locate import is_local_address, locate_server
from workloads.engine.measure.procgroups import (BG_OTHER, DRIVER, FG, OTHER, TICK, ProcGroups,
                                                 cap_other, mysql_thread_group, pg_group,
                                                 read_stat)

# judges the host's CPU: alone, not beside other tests
pytestmark = pytest.mark.serial

BURN = """
import os, sys, time
def burn(s):
    t = time.thread_time()
    while time.thread_time() - t < s:
        pass
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        burn(0.25); os._exit(0)
    kids.append(pid)
    time.sleep(0.05)
for k in kids:
    os.waitpid(k, 0)
burn(0.2)
time.sleep(0.6)
"""


def test_pg_titles_and_mysql_thread_names_map_to_groups():
    assert pg_group("postgres: 15/main: checkpointer ") == "server.bg.checkpointer"
    assert pg_group("postgres: autovacuum worker versus") == "server.bg.autovacuum"
    assert pg_group("postgres: 15/main: autovacuum launcher") == "server.bg.autovacuum"
    assert pg_group("postgres: background writer") == "server.bg.bgwriter"
    assert pg_group("postgres: walwriter") == "server.bg.walwriter"
    assert pg_group("postgres: 15/main: logical replication launcher") == BG_OTHER
    assert pg_group("postgres: 15/main: postgres tpcc 127.0.0.1(5123) idle") == FG
    assert pg_group("postgres: parallel worker for PID 77") == FG
    assert mysql_thread_group("thread/innodb/page_cleaner_thread") == "server.bg.page_cleaner"
    assert mysql_thread_group("ib_pg_flush_co") == "server.bg.page_cleaner"
    assert mysql_thread_group("ib_log_writer") == "server.bg.log_writer"
    assert mysql_thread_group("ib_srv_purge") == "server.bg.purge"
    assert mysql_thread_group("connection") == FG
    assert mysql_thread_group("thread/sql/one_connection") == FG
    assert mysql_thread_group("thread/innodb/thread_pool_thread") == "server.bg.innodb_pool"
    assert mysql_thread_group("thread/sql/signal_handler") == BG_OTHER
    assert mysql_thread_group("mariadbd") is None


def test_other_gives_back_what_the_host_did_not_spend():
    """A CI run saw the groups add up to 7.5 % more than the host was busy over a TPROC-C run
    beside other users' processes (one interval far over, the rest within 5 %). More than the
    host spent can only be CPU counted twice, under other: it is taken out of other, never
    out of the server or the driver, and only beyond /proc/stat's resolution."""
    groups = {FG: [60, 20], DRIVER: [30, 10], OTHER: [150, 50]}       # 320 ticks, busy 200
    taken = cap_other(groups, busy_ticks=200, cores=2)
    assert taken == pytest.approx(320 - 200 - (10 + 2))
    assert groups[FG] == [60, 20] and groups[DRIVER] == [30, 10]
    assert sum(groups[OTHER]) == pytest.approx(200 - 80 - 40 + 12)
    assert groups[OTHER][0] == pytest.approx(3 * groups[OTHER][1])     # its user/system split
    within = {FG: [100, 0], OTHER: [7, 0]}                             # 107 of 100: resolution
    assert cap_other(within, busy_ticks=100, cores=2) == 0 and within[OTHER] == [7, 0]
    no_other = {FG: [150, 0]}
    assert cap_other(no_other, busy_ticks=100, cores=2) == 0 and no_other[FG] == [150, 0]


def test_driver_group_counts_a_process_tree_including_children_that_ended():
    """A driver whose three children burn CPU and end between reads: the group's total
    equals what the kernel reports for the whole tree at its end (wait4), within ticks."""
    groups = ProcGroups(driver_pid=-1)
    groups.sample()
    pid = os.posix_spawn(sys.executable, [sys.executable, "-c", BURN], dict(os.environ))
    groups.driver_pid = pid
    seen, ru = 0.0, None
    while ru is None:
        time.sleep(0.2)
        seen += sum((groups.sample() or {}).get(DRIVER, (0, 0)))
        done, _status, usage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            ru = usage          # the child with the children it reaped
    time.sleep(0.2)
    seen += sum((groups.sample() or {}).get(DRIVER, (0, 0)))
    total = (ru.ru_utime + ru.ru_stime) * TICK
    assert total > 0.9 * TICK          # 3 × 0.25 s + 0.2 s burnt
    assert abs(seen - total) <= 4, (seen, total)


def test_the_local_servers_are_found_and_a_remote_address_is_said_to_be_elsewhere():
    for target in (TargetInfo("postgres", "127.0.0.1", 5432, "postgres", "postgres"),
                   TargetInfo("mariadb", "127.0.0.1", 3306, "root", "mysql")):
        db = SqlSession(target)
        try:
            srv, note = locate_server(target, db)
            assert srv is not None, note
            if target.engine == "postgres":
                backend = int(db.scalar("SELECT pg_backend_pid()"))
                assert read_stat(f"/proc/{backend}/stat")[0] == srv.pid
                assert srv.monitor_pid == backend
            else:
                tid = int(db.scalar("SELECT TID FROM information_schema.PROCESSLIST "
                                    "WHERE ID = CONNECTION_ID()"))
                assert os.path.exists(f"/proc/{srv.pid}/task/{tid}")
            far = TargetInfo(target.engine, "192.0.2.7", target.port, target.user,
                             target.database)
            srv, note = locate_server(far, db)
            assert srv is None
            assert note == "the server is not on this host: 192.0.2.7 is not an address of " \
                           "this host"
        finally:
            db.close()
    assert is_local_address("localhost") == (True, "")


def _busy(cpu: dict) -> float:
    return 100.0 - cpu["idle"] - cpu["iowait"] - cpu["steal"]


def _check_groups_add_up(events: list[dict]) -> list[float]:
    """The groups add up to the host's busy CPU (100 - idle - iowait - steal of /proc/stat):
    within 5 % over the run (the issue's bound; 2 % held on a quiet machine, 3.9 % was seen
    while other work ended beside it), and per interval within 5 % plus what /proc/stat's
    own sampling allows. A process's CPU time (/proc/PID/stat) is its exact run time, but
    the host's busy share is sampled at every timer tick (CONFIG_TICK_CPU_ACCOUNTING, at
    least 100 Hz per core; 100 Hz is assumed, the widest spread): a binomial count whose
    standard deviation over one second on 2 cores is up to 3.5 % of the host; three of
    them and one tick per core are allowed. Other users of this machine start
    and end short processes, whose CPU can land an interval late (when their parent reaps
    them): one interval in ten may still miss."""
    hosts = [e for e in events if e["kind"] == "host"]
    assert len(hosts) >= 3
    cores = os.cpu_count()
    tick_pct = 100.0 / (TICK * cores)          # one tick in percent of the host
    ratios, misses, sums, busys = [], [], 0.0, 0.0
    for h in hosts:
        total = sum(v["user"] + v["system"] for v in h["cpu_groups"].values())
        busy = _busy(h["cpu"])
        dt = h["interval"][1] - h["interval"][0]
        p = min(max(busy / 100.0, 0.0), 1.0)
        sampling = 3 * 100.0 * math.sqrt(p * (1 - p) / (TICK * cores * max(dt, 0.1)))
        if abs(total - busy) > 0.05 * busy + sampling + cores * tick_pct:
            misses.append((h["t"], round(total, 1), round(busy, 1), round(sampling, 1)))
        ratios.append(total / busy if busy else 1.0)
        sums += total
        busys += busy
    assert len(misses) <= max(1, len(hosts) // 10), misses
    assert abs(sums - busys) <= 0.05 * busys, (sums, busys)
    return ratios


def _group_seconds(events: list[dict]) -> dict[str, float]:
    out: dict[str, float] = {}
    for h in (e for e in events if e["kind"] == "host"):
        for g, v in h["cpu_groups"].items():
            out[g] = out.get(g, 0.0) + v["user"] + v["system"]
    return out


TPCC = {"warehouses": 1, "vus": 2, "rampup": 0, "duration": 15, "load-clients": 2}

PG_BUSY_BACKGROUND = """
fsync = off
autovacuum_naptime = 1
autovacuum_vacuum_threshold = 20
autovacuum_vacuum_scale_factor = 0.001
autovacuum_analyze_scale_factor = 0.001
max_wal_size = 32MB
min_wal_size = 32MB
checkpoint_timeout = 30s
"""


def test_postgres_tpcc_background_work_shows_under_its_groups(tmp_path, service_workdir):
    evs = run_agent(tmp_path, "tpcc", TPCC,
                    managed_target(PG15, "postgres", PG_BUSY_BACKGROUND, service_workdir))
    assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "ok", evs[-3:]
    hosts = [e for e in evs if e["kind"] == "host"]
    assert all(h["cpu_groups_server"].startswith("PostgreSQL postmaster") for h in hosts)
    secs = _group_seconds(evs)
    assert secs.get("server.bg.autovacuum", 0) > 0, secs
    assert secs.get("server.bg.checkpointer", 0) > 0, secs
    assert secs.get(FG, 0) > 0 and secs.get(DRIVER, 0) > 0, secs
    ratios = _check_groups_add_up(evs)
    measure = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")
    g = measure["cpu_groups"]["groups"]
    assert g[FG]["user_s"] + g[FG]["system_s"] > 0 and g[DRIVER]["user_s"] > 0
    print(f"\nPostgreSQL TPROC-C: group sum / host busy per interval: min {min(ratios):.3f} "
          f"max {max(ratios):.3f}; group % of host summed over intervals: "
          + ", ".join(f"{k} {v:.1f}" for k, v in sorted(secs.items())))


MARIADB_PFS = """
[mysqld]
performance_schema = ON
innodb_buffer_pool_size = 128M
innodb_flush_log_at_trx_commit = 2
"""


def test_mariadb_tpcc_innodb_threads_show_under_background(tmp_path, service_workdir):
    evs = run_agent(tmp_path, "tpcc", TPCC,
                    managed_target("/usr", "mariadb", MARIADB_PFS, service_workdir))
    assert evs[-1]["kind"] == "end" and evs[-1]["status"] == "ok", evs[-3:]
    secs = _group_seconds(evs)
    innodb = {k: v for k, v in secs.items()
              if k in ("server.bg.page_cleaner", "server.bg.innodb_pool", "server.bg.purge")}
    assert sum(innodb.values()) > 0, secs
    assert secs.get(FG, 0) > 0 and secs.get(DRIVER, 0) > 0, secs
    ratios = _check_groups_add_up(evs)
    print(f"\nMariaDB TPROC-C (performance_schema on): group sum / host busy per interval: "
          f"min {min(ratios):.3f} max {max(ratios):.3f}; group % of host summed over "
          f"intervals: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(secs.items())))


def test_shared_mariadb_connection_threads_are_foreground_without_performance_schema(
        tmp_path, mariadb_db):
    name = mariadb_db.rsplit("/", 1)[1]
    evs = run_agent(tmp_path, "point-query",
                    {"table-size": 2000, "clients": 2, "duration": 6},
                    local_target(name, "mariadb"))
    assert evs[-1]["status"] == "ok", evs[-3:]
    measure = next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")
    g = measure["cpu_groups"]["groups"]
    fg = g[FG]["user_s"] + g[FG]["system_s"]
    bg = sum(v["user_s"] + v["system_s"] for k, v in g.items() if k.startswith("server.bg"))
    assert fg > bg, g
    _check_groups_add_up(evs)
