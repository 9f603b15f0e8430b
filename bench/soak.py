"""Soak: one long real run on this computer, watched for memory growth and session size.

`versus run` (point-query on the machine's PostgreSQL or MariaDB, in a scratch database) runs
for an hour by default. Every minute the resident memory (RSS from /proc/PID/smaps_rollup) of
each part is sampled (the session column includes SQLite's write-ahead log, checkpointed
every few MB): the app (the CLI process following the run), the follower (the
process on the host that streams the spool), the agent, and the virtual users (summed). The
verdict: no part grows by 5 MB or more after the first 5 minutes (the warm-up of caches and
histograms), and the session file's size per hour of run.

    .venv/bin/python -m bench.soak [--minutes 60] [--engine pg|mariadb] [--clients 2]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench._common import Engine

TARGET_MB = 5.0
SETTLE_MIN = 5          # growth is measured from this minute on
MARGIN_S = 20           # the run lasts this much past the last sample: every part still up


def rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _cmdlines() -> dict[int, str]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    out[int(name)] = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                pass
    return out


def parts(app_pid: int, agent_pid: int | None, run_id: str) -> dict[str, list[int]]:
    """The processes of each part of the run, found by their command lines."""
    procs = _cmdlines()
    follower = [p for p, c in procs.items()
                if re.search(rf"workloads\.agent follow --dir \S*{re.escape(run_id)}", c)]
    started = [p for p, c in procs.items()
               if re.search(rf"workloads\.agent start --dir \S*{re.escape(run_id)}", c)]
    return {"app": [app_pid], "follower": follower,
            "agent": [agent_pid] if agent_pid in started else [],
            "virtual users": [p for p in started if p != agent_pid]}


def session_bytes(path: Path) -> int:
    return sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal")
               if Path(f"{path}{s}").exists())


def soak(minutes: int, engine: Engine, clients: int, echo: bool) -> dict:
    home = Path(tempfile.mkdtemp(prefix="versus-soak-"))
    out = home / "soak.versus"
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "VERSUS_HOME": str(home), "PYTHONPATH": str(root)}
    rows: list[dict] = []
    with engine.scratch_database("versus_soak") as db:
        url = (f"postgresql://postgres@127.0.0.1:5432/{db}" if engine.key == "pg"
               else f"mysql://root@127.0.0.1:3306/{db}")
        cmd = [sys.executable, "-m", "app.main", "run", "--target", url, "--workload",
               "point-query", "--duration", str(minutes * 60 + MARGIN_S), "--set", "table-size=10000",
               "--set", f"clients={clients}", "--out", str(out)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env, cwd=str(root))
        lines: list[str] = []
        found: dict[str, object] = {}
        measuring = threading.Event()

        def read():
            for line in p.stdout:
                lines.append(line)
                m = re.search(r"run (\S+) started on .*agent pid (\d+)", line)
                if m:
                    found["run_id"], found["agent"] = m.group(1), int(m.group(2))
                if "phase measure started" in line:
                    found["t0"] = time.monotonic()
                    measuring.set()
                if echo:
                    print("   " + line.rstrip(), flush=True)
            measuring.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        measuring.wait()
        t0 = found.get("t0", time.monotonic())
        for minute in range(0, minutes + 1):
            while p.poll() is None and time.monotonic() < t0 + 60 * minute:
                time.sleep(0.5)
            if p.poll() is not None or "run_id" not in found:
                break
            row = {"minute": minute, "session_bytes": session_bytes(out)}
            for part, pids in parts(p.pid, found["agent"], found["run_id"]).items():
                kbs = [k for k in (rss_kb(x) for x in pids) if k is not None]
                row[part] = sum(kbs) / 1024 if kbs else None
                row[f"{part} n"] = len(kbs)
            rows.append(row)
            print(_row_text(row), flush=True)
        p.wait()
        reader.join(5)
    elapsed_h = (minutes * 60 + MARGIN_S) / 3600 if rows else None
    size = session_bytes(out)                  # after the run: checkpointed, no WAL left
    return {"minutes": minutes, "engine": engine.label, "clients": clients,
            "exit": p.returncode, "rows": rows, "session_bytes": size,
            "session_mb_per_hour": (size / 2**20 / elapsed_h) if elapsed_h else None,
            "tail": "".join(lines[-5:]), "home": str(home)}


PARTS = ("app", "follower", "agent", "virtual users")


def _row_text(row: dict) -> str:
    cells = [f"{row['minute']:>6}"]
    for part in PARTS:
        v = row.get(part)
        n = row.get(f"{part} n", 0)
        cells.append(f"{v:>12.1f}" + (f" ({n})" if part == "virtual users" else "    ")
                     if v is not None else f"{'-':>12}    ")
    cells.append(f"{row['session_bytes'] / 2**20:>10.2f}")
    return " ".join(cells)


def verdict(res: dict) -> tuple[bool, list[str]]:
    rows = res["rows"]
    lines, ok = [], True
    if len(rows) < 2:
        return False, ["too few samples for a verdict (the run ended early?)"]
    base = next((r for r in rows if r["minute"] >= SETTLE_MIN), None)
    if base is None or base is rows[-1]:
        base = rows[0]
        lines.append(f"shorter than {SETTLE_MIN + 1} minutes: growth is measured from minute "
                     f"{base['minute']}")
    last = rows[-1]
    for part in PARTS:
        a, b = base.get(part), last.get(part)
        if a is None or b is None:
            lines.append(f"{part}: not seen at minute {base['minute']} and {last['minute']}")
            ok = False
            continue
        grew = b - a
        good = grew < TARGET_MB
        ok &= good
        lines.append(f"{part}: {a:.1f} MB at minute {base['minute']} → {b:.1f} MB at minute "
                     f"{last['minute']}: {grew:+.2f} MB ({'ok' if good else 'TOO MUCH'}, "
                     f"target < {TARGET_MB:g} MB)")
    if res["session_mb_per_hour"] is not None:
        lines.append(f"session file: {res['session_bytes'] / 2**20:.2f} MB after "
                     f"{res['minutes'] * 60 + MARGIN_S} s of measured run = "
                     f"{res['session_mb_per_hour']:.1f} MB per hour of run")
    if res["exit"] != 0:
        ok = False
        lines.append(f"versus run ended with exit {res['exit']}: {res['tail'].strip()}")
    return ok, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=int, default=60, help="run length (default 60)")
    ap.add_argument("--engine", choices=("pg", "mariadb"), default="pg")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--echo", action="store_true", help="show the run's own output")
    ap.add_argument("--json", metavar="FILE", help="also write the samples as JSON")
    a = ap.parse_args()
    if a.minutes < 1:
        ap.error("--minutes is at least 1")
    print(f"soak: point-query, {a.clients} clients on {Engine(a.engine).label}, "
          f"{a.minutes} min; RSS in MB")
    print(f"{'minute':>6} " + " ".join(f"{p:>12}    " for p in PARTS) + f"{'session MB':>10}")
    res = soak(a.minutes, Engine(a.engine), a.clients, a.echo)
    ok, lines = verdict(res)
    print()
    for line in lines:
        print(line)
    print(f"verdict: {'PASS' if ok else 'FAIL'}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
