"""Jobs that outlive the SSH session that started them: detach one; tell whether a pid runs."""
from __future__ import annotations

import os
import sys


def detach(fn, logpath: str, cwd: str) -> int:
    """Run fn() in a double-forked, setsid'd process; print its pid."""
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        child = os.read(r, 64).decode().strip()
        os.close(r)
        os.waitpid(pid, 0)
        print(child, flush=True)
        return 0 if child else 1
    os.close(r)
    os.setsid()
    if os.fork():
        os._exit(0)
    os.write(w, str(os.getpid()).encode())
    os.close(w)
    devnull = os.open(os.devnull, os.O_RDWR)
    log = os.open(logpath, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(devnull, 0); os.dup2(devnull, 1); os.dup2(log, 2)
    os.chdir(cwd)
    code = 1
    try:
        code = fn()
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        sys.stderr.flush()
    os._exit(code)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not alive
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True
