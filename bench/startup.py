"""Time from `versus` to a usable main window, cold and warm.

    .venv/bin/python -m bench.startup [--runs 5] [--built build/dist/versus/versus]

Each start is a new process with its own empty VERSUS_HOME, on the offscreen platform (or
the display when DISPLAY is set and --display is given), that leaves as soon as its window
is shown and the event loop is free (VERSUS_EXIT_WHEN_SHOWN, app.ui.application): the
time is the process's whole life, spawn to exit, measured here.

- cold: the first start from a copy of the source tree without compiled bytecode (Python
  compiles every module it imports, as after an install or an upgrade); the files
  themselves may be in the OS cache (this benchmark does not drop it: the machine is shared);
- warm: the next starts, with the bytecode compiled as bootstrap.sh compiles it after an
  install, median and worst of --runs.

With --built, the PyInstaller build is timed the same way (its first start is cold as far
as the program is concerned: the OS cache still may hold its files). Target: ≤ 2 s.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start(cmd: list[str], cwd: Path, display: bool) -> float:
    env = {**os.environ, "VERSUS_HOME": tempfile.mkdtemp(prefix="versus-start-"),
           "VERSUS_EXIT_WHEN_SHOWN": "1"}
    if not display:
        env["QT_QPA_PLATFORM"] = "offscreen"
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - t0
    if r.returncode != 0 or "window usable" not in r.stdout:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    shutil.rmtree(env["VERSUS_HOME"], ignore_errors=True)
    return took


def series(label: str, cmd: list[str], cwd: Path, runs: int, display: bool) -> None:
    cold = start(cmd, cwd, display)
    # what bootstrap.sh does after an install; a start cannot cache bytecode itself where
    # PYTHONDONTWRITEBYTECODE is set
    subprocess.run([sys.executable, "-m", "compileall", "-q", "app", "workloads"], cwd=cwd,
                   check=False, capture_output=True)
    warm = [start(cmd, cwd, display) for _ in range(runs)]
    print(f"  {label:<22} cold {cold:5.2f} s   warm median {statistics.median(warm):5.2f} s"
          f"  worst {max(warm):5.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--built", help="the PyInstaller program to time too")
    ap.add_argument("--display", action="store_true", help="use $DISPLAY, not offscreen")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    # a copy without __pycache__: the first start compiles everything it imports
    src = Path(tempfile.mkdtemp(prefix="versus-src-"))
    for name in ("app", "workloads", "profiles", "resources"):
        shutil.copytree(ROOT / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env_py = sys.executable
    series("python -m app.main", [env_py, "-m", "app.main"], src, a.runs, a.display)
    if a.built:
        series("PyInstaller build", [str(Path(a.built).resolve())], src, a.runs, a.display)
    shutil.rmtree(src, ignore_errors=True)


if __name__ == "__main__":
    main()
