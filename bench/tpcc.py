"""Versus TPROC-C on this machine's PostgreSQL and MariaDB, next to HammerDB's figures.

For each engine: a scratch database, `versus run --workload tpcc` with 4 warehouses and
2 virtual users, stored procedures on (loads the schema) and then off (reuses it), 1 minute
rampup and 3 minutes measured by default. Printed per run: load time and rows/s (first
run), NOPM (change in sum(d_next_o_id)), TPM (server counters), the client's own
NOPM/TPM, retries, client CPU per transaction (getrusage of the virtual users, as Versus
reports it) and per thousand transactions, and the driver's total memory (agent + virtual
users: sum of RSS, and of PSS which counts shared pages once) at 1, 2 and 3 minutes into
the measured period, which must not grow. A consistency check closes each engine.

HammerDB 6.0 on a machine of this kind (Debian defaults, 4 warehouses, 2 VUs, 1 min rampup,
3 min, all warehouses; /work/shared/peer-logs): PostgreSQL 15 51-58k NOPM with procedures,
62-66k with functions, 56-67 us client CPU per transaction; MariaDB 10.11 19-20k NOPM at
165-171 us; schema build 27-37 s.

    .venv/bin/python bench/tpcc.py [--engines pg,mariadb] [--rampup 60] [--duration 180]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parse_engines  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# HammerDB always runs server-side code: on PostgreSQL pg_storedprocs picks procedures (on)
# or functions (off, "nostoredprocs"); Versus's stored-procedures=on uses functions.
HAMMERDB = {
    ("pg", True): "51-58k NOPM (procedures), 62-66k (functions); 56-67 us/txn",
    ("pg", False): "(HammerDB has no client-statement mode; compare with its functions: "
                   "62-66k NOPM)",
    ("mariadb", True): "19-20k NOPM; 165-171 us/txn",
    ("mariadb", False): "(HammerDB has no client-statement mode)",
}


def versus_bin() -> str:
    p = ROOT / ".venv" / "bin" / "versus"
    return str(p)


def _tree(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    data = f.read()
                ppid = int(data[data.rindex(")") + 2:].split()[1])
                kids.setdefault(ppid, []).append(int(name))
            except (OSError, ValueError):
                pass
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def memory_kb(root: int) -> tuple[int, int]:
    """(sum of RSS, sum of PSS) in kB over the process tree under root."""
    rss = pss = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            pass
    return rss, pss


def proc_self_cpu(pid: int | None) -> float | None:
    """utime + stime of one process, without its children, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
        fields = data[data.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, TypeError):
        return None


def proc_stat_cpu() -> list[int]:
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def run_one(eng, db: str, sp: bool, args, home: str) -> dict:
    out = os.path.join(home, f"{eng.key}-{'sp' if sp else 'client'}.versus")
    cmd = [versus_bin(), "run", "--target", eng.versus_target(db), "--workload", "tpcc",
           "--set", f"warehouses={args.warehouses}", "--set", "vus=2",
           "--set", f"load-clients={args.load_clients}",
           "--set", f"stored-procedures={'true' if sp else 'false'}",
           "--set", f"rampup={args.rampup}", "--set", "use-all-warehouses=true",
           "--set", f"check-after={'true' if not sp else 'false'}",
           "--duration", str(args.duration), "--out", out]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env={**os.environ, "VERSUS_HOME": home})
    agent_pid = None
    mem: list[tuple[int, int, int]] = []
    cpu: list[list[int]] = []
    agent_cpu: list[float | None] = []
    measure_started = threading.Event()
    done = threading.Event()

    def sampler():
        measure_started.wait()
        cpu.append(proc_stat_cpu())
        agent_cpu.append(proc_self_cpu(agent_pid))
        t0 = time.monotonic()
        for minute in range(1, args.duration // 60 + 1):
            while time.monotonic() < t0 + 60 * minute - 1:
                if done.wait(0.5):
                    return
            if agent_pid:
                rss, pss = memory_kb(agent_pid)
                mem.append((minute, rss, pss))

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    lines = []
    for line in p.stdout:
        lines.append(line)
        m = re.search(r"agent pid (\d+)", line)
        if m:
            agent_pid = int(m.group(1))
        if "phase measure started" in line:
            measure_started.set()
        if "measure done:" in line and len(agent_cpu) == 1:
            agent_cpu.append(proc_self_cpu(agent_pid))
        if args.verbose:
            print("   " + line.rstrip(), flush=True)
    p.wait()
    cpu.append(proc_stat_cpu())
    done.set()
    measure_started.set()
    th.join(5)
    if p.returncode != 0:
        raise RuntimeError(f"versus run failed ({p.returncode}):\n{''.join(lines[-30:])}")
    c = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    evs = [json.loads(b) for (b,) in c.execute("SELECT body FROM events ORDER BY seq")]
    c.close()
    summ = {e["phase"]: e for e in evs if e["kind"] == "summary"}
    m = summ["measure"]
    res = m["result"]
    cpu_v = m["driver_cpu"]
    tx = sum(m["ops"].values())
    row = {"engine": eng.label, "sp": sp, "nopm": res["nopm"], "tpm": res["tpm"],
           "client_nopm": res["client"]["nopm"], "client_tpm": res["client"]["tpm"],
           "retries": res["client"]["retries"], "errors": m["errors_total"],
           "txns": tx, "cpu_us_per_txn": round((cpu_v["user_s"] + cpu_v["system_s"]) * 1e6 / tx, 1),
           "cpu_s_per_1000": round((cpu_v["user_s"] + cpu_v["system_s"]) * 1000 / tx, 4),
           "cpu_user_us_per_txn": round(cpu_v["user_s"] * 1e6 / tx, 1),
           "cpu_system_us_per_txn": round(cpu_v["system_s"] * 1e6 / tx, 1),
           "mem": mem, "lat_ms": m["lat_ms"]}
    if len(agent_cpu) == 2 and None not in agent_cpu:
        # the agent's own process (sampler, server counters, events), not its virtual users
        row["agent_cpu_us_per_txn"] = round((agent_cpu[1] - agent_cpu[0]) * 1e6 / tx, 1)
    if len(cpu) == 2:
        d = [b - a for a, b in zip(*cpu)]
        total = sum(d) or 1
        # /proc/stat cpu: user nice system idle iowait irq softirq steal ...
        row["host_steal_pct"] = round(100.0 * d[7] / total, 1) if len(d) > 7 else None
        row["host_idle_pct"] = round(100.0 * d[3] / total, 1)
    if "load" in summ:
        ld = summ["load"]
        row["load_s"] = ld["duration_s"]
        row["load_rows_s"] = ld["rate"]
        row["load_rows"] = ld["rows_total"]
    if "check" in summ:
        row["check"] = "PASS" if summ["check"]["check"]["ok"] else "FAIL"
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="pg,mariadb")
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--load-clients", type=int, default=2)
    ap.add_argument("--rampup", type=int, default=60)
    ap.add_argument("--duration", type=int, default=180)
    ap.add_argument("--modes", default="sp,client", help="sp and/or client")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    modes = [m.strip() == "sp" for m in args.modes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="versus-bench-tpcc-") as home:
        for eng in parse_engines(args.engines):
            with eng.scratch_database("versus_bench_tpcc") as db:
                for sp in modes:
                    print(f"== {eng.label}, stored procedures {'on' if sp else 'off'}: "
                          f"{args.warehouses} warehouses, 2 VUs, rampup {args.rampup} s, "
                          f"{args.duration} s measured", flush=True)
                    r = run_one(eng, db, sp, args, home)
                    rows.append(r)
                    if "load_s" in r:
                        print(f"   load: {r['load_rows']:,} rows in {r['load_s']:.1f} s = "
                              f"{r['load_rows_s']:,.0f} rows/s (HammerDB: 27-37 s)")
                    print(f"   NOPM {r['nopm']:,}  TPM {r['tpm']:,}  (client: NOPM "
                          f"{r['client_nopm']:,}, commits+rollbacks/min {r['client_tpm']:,}, "
                          f"retries {r['retries']}, errors {r['errors']})")
                    print(f"   client CPU {r['cpu_us_per_txn']} us/txn (user "
                          f"{r['cpu_user_us_per_txn']}, system {r['cpu_system_us_per_txn']}) = "
                          f"{r['cpu_s_per_1000']} s per 1000 txns   "
                          f"HammerDB: {HAMMERDB[(eng.key, sp)]}")
                    if r.get("agent_cpu_us_per_txn") is not None:
                        print(f"   agent process (sampler, server counters, events): "
                              f"{r['agent_cpu_us_per_txn']} us/txn more; driver total "
                              f"{r['cpu_us_per_txn'] + r['agent_cpu_us_per_txn']:.1f} us/txn")
                    if r.get("host_steal_pct") is not None:
                        print(f"   host CPU during measure: steal {r['host_steal_pct']} %, "
                              f"idle {r['host_idle_pct']} % (steal: time the hypervisor gave "
                              f"to other guests; figures are only comparable when it is low)")
                    lat = r["lat_ms"]
                    print("   latency p50/p95/p99 ms: " + ", ".join(
                        f"{t} {lat[t]['p50']}/{lat[t]['p95']}/{lat[t]['p99']}"
                        for t in ("new-order", "payment", "delivery")))
                    print("   driver memory (agent + VUs): " + ", ".join(
                        f"{mi} min RSS {rss / 1024:.1f} MB PSS {pss / 1024:.1f} MB"
                        for mi, rss, pss in r["mem"]))
                    if "check" in r:
                        print(f"   consistency check: {r['check']}")
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
