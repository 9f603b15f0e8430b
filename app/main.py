"""Entry point: no arguments starts the GUI, anything else is the CLI."""
from __future__ import annotations

import os
import select
import signal
import sys


def _closed(fd: int) -> bool:
    """Whether the reader of this output has gone (`versus show F | head`)."""
    try:
        p = select.poll()
        p.register(fd, select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in p.poll(0))
    except (OSError, ValueError):
        return False


def _quiet_end() -> None:
    """End as Unix tools do when their reader has gone: by SIGPIPE, with nothing said."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(devnull, fd)              # Python's flush at exit finds no pipe to fail on
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or all(a.endswith(".versus") and not a.startswith("-") for a in args):
        # no arguments, or session files (a file manager's "open with"): the GUI
        from app.ui.application import run_gui
        return run_gui(args)
    try:
        from app.cli import main as cli_main
        return cli_main(args)
    except BrokenPipeError:
        if not (_closed(1) or _closed(2)):
            raise                         # another pipe (an agent's): not the reader
        _quiet_end()
        return 141


if __name__ == "__main__":
    sys.exit(main())
