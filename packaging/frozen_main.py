"""The entry point of the frozen (PyInstaller) app.

In a frozen build ``sys.executable`` is the app itself, and the app starts its agent and
checks a host's Python with it (``python -m workloads.agent …``, ``python -c CODE``): so the
frozen app answers those two forms as a Python interpreter would, and is Versus otherwise.
"""
from __future__ import annotations

import os
import runpy
import sys


def main() -> int:
    args = sys.argv[1:]
    # PYTHONPATH (the deployed agent's folder) as a plain interpreter would read it
    for path in reversed([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]):
        if path not in sys.path:
            sys.path.insert(0, path)
    if len(args) >= 2 and args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return 0
    if len(args) >= 2 and args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})   # noqa: S102
        return 0
    from app.main import main as versus_main
    return versus_main(args)


if __name__ == "__main__":
    sys.exit(main())
