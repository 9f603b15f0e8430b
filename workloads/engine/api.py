"""The engine's declared API: what a workload's run function receives and what a workload
may import. A workload folder imports this module, `workloads.events` and `workloads.params`,
nothing else of the engine (lint-imports holds it; see the README, "Adding a workload").

- `Run`: the run context a run function receives (`run(run: Run) -> None`): its parameters
  and target, events (log, progress, emit), phases, and `run_clients`, which runs virtual
  users for a phase and samples, times and summarizes it.
- `VirtualUser`: what one virtual-user process sees (`fn(vu: VirtualUser)` in run_clients).
- `Meter`: the server's count over a stretch a workload times itself (external tools).
- The SQL access with its one classification of errors, the fast clients, the event loops
  (compiled and Python) and the helpers for external tools, re-exported below.
"""
from __future__ import annotations

from typing import Any, Callable, ContextManager, Protocol, Sequence

from ..params import ParamError, PlannedPhase
from .driver import StopRun, die_with_parent
from .loop import fastloop
from .loop import program as loop_program
from .loop.program import DRAW, NO_DRAW, P_C, P_FIXED, P_ID, P_LO_PLUS, P_PAD, P_SAVED, Step
from .loop.run import compiled_loop, paced_loop, python_loop
from .sql import clients
from .sql.clients import StatementFailed
from .sql.db import (BulkLoader, SqlSession, SqlText, TargetInfo, check_conditions,
                     condition_lines, connect_mysql_raw, connect_pg, mysql_driver)
from .sql.errors import (MYSQL_LOST, MYSQL_RETRY, PG_RETRY, ConnectionLost, DatabaseError,
                         SqlFailed, explain, mysql_lost)
from .tools.imported import (LogFile, RunEvents, describe_epoch, feed_file, numbered,
                             parse_date)
from .tools.toolrun import SecretFile, ToolMissing, ToolProcess, missing, require

__all__ = [
    "Run", "VirtualUser", "Meter", "ParamError", "PlannedPhase", "StopRun", "die_with_parent",
    "fastloop", "loop_program", "DRAW", "NO_DRAW", "P_C", "P_FIXED", "P_ID", "P_LO_PLUS",
    "P_PAD", "P_SAVED", "Step", "compiled_loop", "paced_loop", "python_loop", "clients", "StatementFailed",
    "BulkLoader", "ConnectionLost", "DatabaseError", "SqlFailed", "SqlSession", "SqlText",
    "TargetInfo", "check_conditions", "condition_lines", "connect_mysql_raw", "connect_pg",
    "explain", "mysql_driver", "MYSQL_LOST", "MYSQL_RETRY", "PG_RETRY", "mysql_lost", "LogFile", "RunEvents",
    "describe_epoch", "feed_file", "numbered", "parse_date", "SecretFile", "ToolMissing",
    "ToolProcess", "missing", "require",
]


class VirtualUser(Protocol):
    """One virtual-user process: its index, the target and parameters, its counter slots
    and the stop flag. A VU counts an op of type `txn` at arr[base(txn)], an error at
    base(txn) + 1, and its latency in the histogram from base(txn) + 2
    (events.bucket_of of the microseconds); workload counters at carr[cbase + k]."""

    index: int
    target: TargetInfo
    params: dict
    arr: Any
    carr: Any
    cbase: int
    timing0: int
    rng: Any
    stop: Any            # stop.value: set when the phase ends

    def base(self, txn: int) -> int: ...
    def wait_for_go(self) -> bool: ...
    def report_error(self, message: str) -> None: ...
    def connection_lost(self, message: str) -> None: ...
    def connection_failed(self, message: str) -> None: ...
    def report_server_count(self, n: int) -> None: ...


class Meter(Protocol):
    """The server's counters over a stretch the workload times itself (an external tool's
    phase): `mark()` at its start, `since(mark, seconds)` the summary's server block."""

    def server_mark(self) -> tuple[dict | None, int]: ...
    def server_since(self, mark: tuple[dict | None, int], dur: float) -> dict | None: ...


class Run(Meter, Protocol):
    """The run context a workload's run function receives."""

    run_id: str
    params: dict
    target: TargetInfo

    def now(self) -> float: ...
    def emit(self, kind: str, **body: Any) -> dict: ...
    def log(self, message: str, level: str = "info", **extra: Any) -> None: ...
    def progress(self, phase: str, done: int, total: int, unit: str = "rows") -> None: ...
    def load_summary(self, phase: str, total: int, seconds: float, **extra: Any) -> None: ...
    def check_stop(self) -> None: ...
    def phase(self, name: str, planned_s: float | None = None,
              **extra: Any) -> ContextManager[None]: ...
    def planned(self, name: str) -> PlannedPhase | None: ...
    def run_clients(self, name: str, fn: Callable[[VirtualUser], None], clients: int,
                    seconds: float, types: Sequence[str], counters: Sequence[str] = (),
                    rate: Callable[[dict, dict, float], float] | None = None,
                    summary_extra: Callable[[dict], dict] | None = None,
                    vu_info: Sequence[dict] | None = None, timings: Sequence[str] = (),
                    work: tuple | None = None, session_counter: str = "") -> dict: ...
    def track_processes(self, pids: Sequence[int]) -> None: ...
