"""The one writer of a run's events: sequence numbers, the run clock, the spool file (and
stdout when asked). Every event of a run goes through one Emitter."""
from __future__ import annotations

import sys
import threading
import time
from typing import Any

from .. import events


class Emitter:
    """Assigns sequence numbers and writes each event to the spool (and stdout if asked)."""

    def __init__(self, spool_path: str, echo: bool, t0: float):
        self.spool_path = spool_path
        self._f = open(spool_path, "ab", buffering=0)
        self._echo = echo
        self._lock = threading.Lock()
        self._seq = 0
        self.t0 = t0
        # measurement sources that stopped during the run ({source, since, why}): every
        # summary and the end from then on say their cross-check is missing, and why
        self.missing: list[dict[str, Any]] = []

    def now(self) -> float:
        return time.monotonic() - self.t0

    def emit(self, kind: str, **body: Any) -> dict:
        if kind in ("summary", "end") and self.missing and "missing" not in body:
            body = {**body, "missing": [dict(m) for m in self.missing]}
        with self._lock:
            self._seq += 1
            ev = events.stamp(self._seq, self.now(), kind, events.body(kind, **body))
            line = events.encode(ev)
            self._f.write(line)
            if self._echo:
                try:
                    sys.stdout.buffer.write(line)
                    sys.stdout.flush()
                except (BrokenPipeError, ValueError, OSError):
                    self._echo = False       # the reader went away; the spool still has it
            return ev

    def close(self) -> None:
        self._f.close()
