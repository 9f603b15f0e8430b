"""Versus TPROC-C on this machine's PostgreSQL and MariaDB, next to HammerDB's figures.

For each engine: a scratch database, `versus run --workload tpcc` with 4 warehouses and
2 virtual users, stored procedures on (loads the schema) and then off (reuses it), 1 minute
rampup and 3 minutes measured by default. Printed per run: load time and rows/s (first
run), NOPM (change in sum(d_next_o_id)), TPM (server counters), the client's own
NOPM/TPM, retries, client CPU per transaction (getrusage of the virtual users, as Versus
reports it) and per thousand transactions, and the driver's total memory (agent + virtual
users: sum of RSS, and of PSS which counts shared pages once) at 1, 2 and 3 minutes into
the measured period, which must not grow. A consistency check closes each engine.

In the same sitting, alternating with Versus on the same server, HammerDB 6.0 from the kit in
../shared/peer-tools/hammerdb (its `hdb build` and `hdb run`: PostgreSQL functions, MariaDB
procedures, the same warehouses, 2 VUs, rampup and duration); printed at the end: the ratios
Versus / HammerDB of NOPM, client CPU per transaction and schema build time.

    .venv/bin/python bench/tpcc.py [--engines pg,mariadb] [--rampup 60] [--duration 120]
                                   [--rounds 1] [--no-hammerdb]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import FollowedRun, parse_engines, unique_name  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
def versus_bin() -> str:
    p = ROOT / ".venv" / "bin" / "versus"
    return str(p)


def proc_self_cpu(pid: int | None) -> float | None:
    """utime + stime of one process, without its children, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
        fields = data[data.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, TypeError):
        return None


def run_one(eng, db: str, sp: bool, args, home: str) -> dict:
    out = os.path.join(home, f"{eng.key}-{'sp' if sp else 'client'}.versus")
    cmd = [versus_bin(), "run", "--target", eng.versus_target(db), "--workload", "tpcc",
           "--set", f"warehouses={args.warehouses}", "--set", "vus=2",
           "--set", f"load-clients={args.load_clients}",
           "--set", f"stored-procedures={'true' if sp else 'false'}",
           "--set", f"rampup={args.rampup}", "--set", "use-all-warehouses=true",
           "--set", f"check-after={'true' if not sp else 'false'}",
           "--duration", str(args.duration), "--out", out]
    agent_cpu: list[float | None] = []
    run = FollowedRun(cmd, {**os.environ, "VERSUS_HOME": home},
                      range(1, args.duration // 60 + 1), echo=args.verbose)

    def on_line(line: str) -> None:
        if "measure done:" in line and len(agent_cpu) == 1:
            agent_cpu.append(proc_self_cpu(run.agent_pid))

    run.on_start = lambda: agent_cpu.append(proc_self_cpu(run.agent_pid))
    run.on_line = on_line
    run.run()
    mem, cpu = run.mem, run.cpu
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


HDB_KIT = Path(os.environ.get("HDB_KIT", ROOT.parent / "shared" / "peer-tools" / "hammerdb"))


def hammerdb_available() -> str | None:
    """None when the kit's `hdb` and an installed HammerDB are there, else why not."""
    hdb = HDB_KIT / "hdb"
    home = Path(os.environ.get("HDB_HOME", Path.home() / ".cache" / "versus-peers" / "hammerdb"))
    if not hdb.is_file():
        return f"no HammerDB kit at {HDB_KIT} (set HDB_KIT)"
    if not (home / ".installed").is_file():
        return f"HammerDB is not installed in {home}; run: sudo {HDB_KIT}/install.sh"
    return None


def _hdb(env: dict, *argv: str, timeout: float = 3600) -> str:
    r = subprocess.run(["bash", str(HDB_KIT / "hdb"), *argv], capture_output=True, text=True,
                       env={**os.environ, **env}, timeout=timeout)
    # `hdb run` exits 1 when its TPM is not a count (below); the result line is still there
    if r.returncode != 0 and "TEST RESULT" not in r.stdout:
        raise RuntimeError(f"hdb {' '.join(argv)} failed ({r.returncode}):\n"
                           f"{(r.stdout + r.stderr)[-2000:]}")
    return r.stdout


def hammerdb_one(eng, args) -> dict:
    """HammerDB 6.0 on the same server and parameters: build, then a timed run. Client CPU
    is the HammerDB process's between rampup complete and test complete (the kit's
    CLIENT_CPU_S, its monitor VU included); transactions are TPM x minutes (server-wide)."""
    kind, mode = ("pg", "funcs") if eng.key == "pg" else ("maria", "sp")
    env = {"HDB_DB": unique_name("hdb_bench"), "BUILD_VUS": str(args.load_clients)}
    try:
        out = _hdb(env, "build", kind, str(args.warehouses), mode)
        build_s = float(re.search(r"^WALL_S=([\d.]+)", out, re.M).group(1))
        out = _hdb(env, "run", kind, mode, str(args.rampup // 60), str(args.duration // 60),
                   "2")
    finally:
        try:
            _hdb(env, "drop", kind)
        except RuntimeError:
            pass
    m = re.search(r"TEST RESULT : System achieved (\d+) NOPM from (-?\d+) \w+ TPM", out)
    nopm, tpm = int(m.group(1)), int(m.group(2))
    if tpm <= 0:
        # HammerDB's TPM sums the whole server's counters: a database dropped by someone
        # else during the test makes it negative; its transactions are then unknown
        print(f"   HammerDB's TPM is {tpm:,}: the server-wide counters were disturbed by "
              f"other clients; its CPU per transaction is left out")
        tpm = None
    cpu_s = float(re.search(r"^CLIENT_CPU_S=([\d.]+)", out, re.M).group(1))
    txns = tpm * (args.duration // 60) if tpm else None
    return {"engine": eng.label, "tool": "HammerDB 6.0", "mode": mode, "nopm": nopm,
            "tpm": tpm, "build_s": build_s, "client_cpu_s": cpu_s,
            "cpu_us_per_txn": round(cpu_s * 1e6 / txns, 1) if txns else None}


def report_versus(r: dict, eng, sp: bool) -> None:
    if "load_s" in r:
        print(f"   load: {r['load_rows']:,} rows in {r['load_s']:.1f} s = "
              f"{r['load_rows_s']:,.0f} rows/s")
    print(f"   NOPM {r['nopm']:,}  TPM {r['tpm']:,}  (client: NOPM "
          f"{r['client_nopm']:,}, commits+rollbacks/min {r['client_tpm']:,}, "
          f"retries {r['retries']}, errors {r['errors']})")
    print(f"   client CPU {r['cpu_us_per_txn']} us/txn (user "
          f"{r['cpu_user_us_per_txn']}, system {r['cpu_system_us_per_txn']}) = "
          f"{r['cpu_s_per_1000']} s per 1000 txns")
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


def _ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="pg,mariadb")
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--load-clients", type=int, default=2)
    ap.add_argument("--rampup", type=int, default=60, help="seconds (whole minutes for HammerDB)")
    ap.add_argument("--duration", type=int, default=120,
                    help="seconds measured (whole minutes for HammerDB)")
    ap.add_argument("--modes", default="sp", help="sp and/or client (Versus)")
    ap.add_argument("--rounds", type=int, default=1, help="Versus/HammerDB pairs per engine, "
                    "alternating which goes first")
    ap.add_argument("--no-hammerdb", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    modes = [m.strip() == "sp" for m in args.modes.split(",")]
    why_not = "--no-hammerdb" if args.no_hammerdb else hammerdb_available()
    if why_not:
        print(f"HammerDB is left out: {why_not}")
    rows, pairs = [], []
    with tempfile.TemporaryDirectory(prefix="versus-bench-tpcc-") as home:
        for eng in parse_engines(args.engines):
            for rnd in range(args.rounds):
                order = ["versus", "hammerdb"] if rnd % 2 == 0 else ["hammerdb", "versus"]
                got: dict[str, dict] = {}
                for who in order:
                    if who == "hammerdb":
                        if why_not:
                            continue
                        print(f"== {eng.label}, HammerDB 6.0 ({'functions' if eng.key == 'pg' else 'procedures'}), "
                              f"{args.warehouses} warehouses, 2 VUs, rampup {args.rampup // 60} min, "
                              f"{args.duration // 60} min", flush=True)
                        h = hammerdb_one(eng, args)
                        rows.append(h)
                        got["hammerdb"] = h
                        print(f"   build {h['build_s']:.1f} s; NOPM {h['nopm']:,}  TPM "
                              f"{h['tpm'] if h['tpm'] is None else format(h['tpm'], ',')}; "
                              f"client CPU {h['cpu_us_per_txn']} us/txn")
                        continue
                    with eng.scratch_database("versus_bench_tpcc") as db:
                        for sp in modes:
                            print(f"== {eng.label}, Versus, stored procedures "
                                  f"{'on' if sp else 'off'}: {args.warehouses} warehouses, "
                                  f"2 VUs, rampup {args.rampup} s, {args.duration} s measured",
                                  flush=True)
                            r = run_one(eng, db, sp, args, home)
                            rows.append(r)
                            report_versus(r, eng, sp)
                            if sp:
                                got["versus"] = r
                if "versus" in got and "hammerdb" in got:
                    v, h = got["versus"], got["hammerdb"]
                    v_cpu = v["cpu_us_per_txn"] + (v.get("agent_cpu_us_per_txn") or 0.0)
                    pairs.append((eng.label, rnd + 1, _ratio(v["nopm"], h["nopm"]),
                                  _ratio(v_cpu, h["cpu_us_per_txn"]),
                                  _ratio(v.get("load_s"), h["build_s"])))
    if pairs:
        print("\nVersus / HammerDB, same server, same sitting:")
        print(f"  {'engine':<22}{'round':>6}{'NOPM':>8}{'client CPU/txn':>16}{'build time':>12}")
        for p in pairs:
            print(f"  {p[0]:<22}{p[1]:>6}{p[2]:>8}{p[3]:>16}{p[4]:>12}")
        print("  (client CPU: Versus's virtual users + agent process vs the HammerDB process;"
              " transactions: Versus's client count, HammerDB's TPM x minutes)")
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
