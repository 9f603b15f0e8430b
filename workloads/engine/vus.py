"""Virtual users: what a virtual-user process sees (VU: its slot of counters and latency
histogram in shared memory, the target, the stop flag), how it starts (a forked process that
dies with the agent), and the book of the ones that ended before their phase did."""
from __future__ import annotations

import os
import random
import resource
import signal
import threading
import time
import traceback

from .. import events
from .measure.outage import run_reconnecting
from .measure.outage import classify
from .sql.db import ConnectionLost, DatabaseError, TargetInfo, pg_report_stats

SLOT = 2 + events.N_BUCKETS          # [ops, errors, hist...] per (vu, txn type)
BACKENDS_PER_VU = 4                  # the PostgreSQL backends a phase's end waits for, per VU


class VU:
    """What a virtual-user process sees: its slot, the target, the stop flag."""

    def __init__(self, index: int, target: TargetInfo, params: dict, arr, ntypes: int,
                 stop, go, ready, errq, rusage, server_counts, backends=None):
        self.index, self.target, self.params = index, target, params
        self.arr, self.ntypes = arr, ntypes
        self.stop, self._go, self._ready, self._errq, self._rusage = stop, go, ready, errq, rusage
        self._server_counts = server_counts
        self._backends = backends
        self.rng = random.Random(os.getpid() ^ int(time.time() * 1e6))
        # optional workload counters (run_clients(counters=...)): carr[cbase + k]
        self.carr, self.cbase = None, 0
        # run_clients(timings=...): timing k has its slot at base(timing0 + k)
        self.timing0 = ntypes
        self._ru0 = None
        # reconnect=on (workloads.engine.measure.outage): the phase started; the connection is lost now;
        # it was lost at least once (the server's per-connection counts then miss some)
        self.t0 = 0.0                     # the run clock's origin (Emitter.t0)
        self.started = self.down = self.reconnected = False

    def base(self, txn: int) -> int:
        """Index of this VU's ops counter for a transaction type; errors at +1, histogram at +2."""
        return (self.index * self.ntypes + txn) * SLOT

    def wait_for_go(self) -> bool:
        """Report ready, then block until the phase starts; False if told to stop instead.

        On PostgreSQL the VU's connections first report their statistics (what connecting
        and preparing did is not the phase's work), and their backends are named for the
        phase's end to wait for. A virtual user that reconnected (reconnect=on) is told to
        go on at once."""
        if self.target.dialect == "postgres":
            pids = pg_report_stats()[:BACKENDS_PER_VU]
            if self._backends is not None:
                for k, pid in enumerate(pids):
                    self._backends[self.index * BACKENDS_PER_VU + k] = pid
        if self.started:
            if self.down:
                self.down = False
                self._report({"outage": "back", "t": time.monotonic() - self.t0})
            return not self.stop.value
        self._ready[self.index] = 1
        while not self._go.value:
            if self.stop.value:
                return False
            time.sleep(0.002)
        # CPU is counted from here: connecting and preparing are not the phase's work
        self._ru0 = resource.getrusage(resource.RUSAGE_SELF)
        self.started = True
        return not self.stop.value

    def report_error(self, message: str) -> None:
        self._report(message[:500])

    def _report(self, what: str | dict) -> None:
        try:
            self._errq.put_nowait((self.index, what))
        except Exception:
            pass

    def connection_lost(self, message: str) -> None:
        """The VU's database connection is gone: raises ConnectionLost, which ends the VU
        with that sentence, or with reconnect=on starts an outage (workloads.engine.measure.outage)."""
        raise ConnectionLost(message)

    def connection_failed(self, message: str) -> None:
        """reconnect=on: the connection was lost, or a try to get it back failed."""
        self.down = self.reconnected = True
        self._server_counts[self.index] = -1      # its connection's own count is incomplete
        self._report({"outage": "error", "t": time.monotonic() - self.t0,
                      "class": classify(message), "message": message})

    def report_server_count(self, n: int) -> None:
        """The server's own count of this connection's operations (e.g. SHOW SESSION STATUS),
        which no other client of a shared server can disturb."""
        if not self.reconnected:
            self._server_counts[self.index] = n

    def finish(self) -> None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        u0, s0 = (self._ru0.ru_utime, self._ru0.ru_stime) if self._ru0 else (0.0, 0.0)
        self._rusage[2 * self.index] = ru.ru_utime - u0
        self._rusage[2 * self.index + 1] = ru.ru_stime - s0


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """End this forked process when the agent `parent` dies, even by SIGKILL: the kernel
    kills it on the parent's death (Linux prctl); elsewhere a thread watches the parent's
    pid. Costs a virtual user's hot loop nothing. SIGKILL, because nothing a dead agent
    would read is left to tidy, and it ends a VU that waits inside a blocking libpq call,
    where a Python handler would only run once the call returned."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGKILL)
        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    if os.getppid() != parent:          # it died before the signal was armed
        os.kill(os.getpid(), signal.SIGKILL)


def _words(shared) -> memoryview:
    """A ctypes array of unsigned 64-bit integers as a memoryview of the same memory."""
    return memoryview(shared).cast("B").cast("Q")


def _vu_entry(fn, vu: VU, parent: int) -> None:
    # The agent's handlers came with the fork: SIGTERM would only set the VU's copy of the
    # agent's stop event. By default it ends the VU at once, even inside a blocking libpq
    # call, and the agent names the signal. Ctrl-C in a terminal is for the agent.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    # The counters a VU adds to after every operation, as memoryviews of the same shared
    # memory: cheaper per access than a ctypes array, and less code for a loop that waits
    # on the server between operations to bring back into the CPU's caches.
    vu.arr = _words(vu.arr)
    if vu.carr is not None:
        vu.carr = _words(vu.carr)
    try:
        if vu.params.get("reconnect"):
            run_reconnecting(fn, vu)
        else:
            fn(vu)
    except DatabaseError as exc:
        vu.report_error(str(exc))
    except Exception as exc:  # a workload bug must reach the user, not vanish with the process
        vu.report_error(f"virtual user {vu.index + 1} failed: {exc!r}\n{traceback.format_exc()}")
    finally:
        vu.finish()


class LostClients:
    """Virtual users that ended before their phase did: which, when and why, for the run's
    log, the phase summary, a flag every view shows, and the run's reason."""

    def __init__(self, name: str, asked: int, tolerate: bool, t_go: float):
        self.name, self.asked, self.tolerate, self.t_go = name, asked, tolerate, t_go
        self.lost: list[dict] = []
        self.last_error: dict[int, str] = {}        # VU index -> its last reported error

    def note(self, index: int, exitcode: int | None, t: float) -> dict:
        if exitcode is not None and exitcode < 0:
            try:
                why = f"killed by {signal.Signals(-exitcode).name}"
            except ValueError:
                why = f"killed by signal {-exitcode}"
        elif index in self.last_error:
            why = self.last_error[index].split("\n")[0]
        else:
            why = f"its process ended (exit code {exitcode})"
        entry = {"vu": index + 1, "t": round(t, 3), "after_s": round(t - self.t_go, 2),
                 "why": why}
        self.lost.append(entry)
        return entry

    def lost_indices(self) -> set[int]:
        return {e["vu"] - 1 for e in self.lost}

    def sentence(self, e: dict) -> str:
        return (f"virtual user {e['vu']} of {self.name} was lost {e['after_s']:.1f} s into "
                f"the phase: {e['why']}")

    def _list(self) -> str:
        return "; ".join(f"virtual user {e['vu']} at {e['after_s']:.1f} s ({e['why']})"
                         for e in self.lost)

    def reason(self, work_unit: str = "") -> str:
        """The run's failure: a VU lost where none may be, or none left to measure."""
        if len(self.lost) == self.asked:
            return f"every virtual user of {self.name} was lost: {self._list()}"
        head = (f"{len(self.lost)} of {self.asked} virtual users of {self.name} lost: "
                f"{self._list()}")
        if work_unit:
            return f"{head}; their share of the {work_unit} would never be done"
        return f"{head}; tolerate-lost-clients=on goes on without them"

    def summary(self) -> dict:
        if not self.lost:
            return {"clients_asked": self.asked, "clients_live": self.asked}
        return {"clients_asked": self.asked, "clients_live": self.asked - len(self.lost),
                "clients_lost": self.lost}

    def flag(self, failed: bool) -> dict | None:
        if not self.lost:
            return None
        live = self.asked - len(self.lost)
        tail = ("the run failed" if failed else
                f"tolerated (tolerate-lost-clients=on): {live} of {self.asked} ran to the end")
        return {"name": "lost clients", "severity": "fail" if failed else "warn",
                "detail": f"{len(self.lost)} of {self.asked} virtual users lost: "
                          f"{self._list()}; {tail}"}
