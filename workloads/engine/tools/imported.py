"""What the external tools' parsers share: the events of one run built from a tool's log.

An imported run is a run like any other: hello (the tool and its version, what the log said
and what it did not), phases, samples, summary (every figure with its source: the tool's own
report) and end. Times are seconds from the start the log shows; a log without a clock gets
the times its own figures imply (interval numbers, stated durations).
"""
from __future__ import annotations

import calendar
import re
import time
from typing import Any, Callable, Iterable, Iterator

from ... import events
from ...events import LogFormatError

# (name, opener): an opener returns the file's lines (text, newline kept) each time it is
# called, so an importer can look at a file's head and then stream it.
LogFile = tuple[str, Callable[[], Iterable[str]]]


class RunEvents:
    """Collects one imported run's events, numbered in order."""

    def __init__(self, spec, files: list[str]):
        self.spec = spec                        # the tool's WorkloadSpec
        self.workload = spec.name
        self.files = list(files)
        self.events: list[dict[str, Any]] = []
        self.target = "unknown"
        self.params: dict[str, Any] = {}

    def emit(self, kind: str, t: float, **body: Any) -> dict[str, Any]:
        if kind == "phase" and body.get("state") == "start" and "role" not in body:
            role = self.spec.phase_role(body["name"])     # as a live run's phase says
            if role:
                body["role"] = role
        ev = events.stamp(len(self.events) + 1, float(t), kind, events.body(kind, **body))
        self.events.append(ev)
        return ev

    def hello(self, *, tool: str, version: str | None, params: dict[str, Any],
              declared: Iterable[str], unit: str, fmt: str, engine: str | None = None,
              started_epoch: float | None = None, **extra: Any) -> None:
        """The run's hello; every declared parameter the log did not state is listed in
        ``unknown`` (and is None in ``params``)."""
        full = {name: params.get(name) for name in declared}
        full.update({k: v for k, v in params.items() if k not in full})
        unknown = sorted(k for k, v in full.items() if v is None)
        self.params = full
        self.emit("hello", 0.0, workload=self.workload, run_id=None, params=full,
                  unknown=unknown, tool={"name": tool, "version": version},
                  imported={"files": self.files, "format": fmt},
                  target={"engine": engine}, host={}, throughput_unit=unit,
                  started_epoch=started_epoch, **extra)

    def phase(self, name: str, t0: float, t1: float, body: Callable[[], None] | None = None,
              planned_s: float | None = None) -> None:
        extra = {"planned_s": planned_s} if planned_s is not None else {}
        self.emit("phase", t0, name=name, state="start", **extra)
        if body is not None:
            body()
        self.emit("phase", t1, name=name, state="end", duration_s=round(t1 - t0, 3))

    def end(self, status: str = "ok", reason: str = "") -> dict[str, Any]:
        last = self.events[-1]["t"] if self.events else 0.0
        self.emit("end", last, status=status, reason=reason)
        return {"workload": self.workload, "target": self.target, "params": self.params,
                "files": self.files, "events": self.events}


def numbered(name: str, lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, text without its newline); refuses a binary file and says which line
    was cut short when the file ends in the middle of a line."""
    prev: tuple[int, str] | None = None
    for n, raw in enumerate(lines, 1):
        if "\x00" in raw:
            raise LogFormatError(name, n, "holds binary data; it is not a tool's text log")
        if prev is not None:
            yield prev
        prev = (n, raw)
    if prev is not None:
        n, raw = prev
        if not raw.endswith("\n") and raw.strip():
            raise LogFormatError(name, n, f"ends in the middle of a line ({raw.strip()[:60]!r}); "
                                          f"the file looks truncated (if it is complete, add a "
                                          f"newline at its end)")
        yield n, raw.rstrip("\r\n")


def feed_file(parser, name: str, opener) -> Any:
    """Feed every line of a file to a line parser (its ``feed(line)``); the parser back."""
    for _, line in numbered(name, opener()):
        parser.feed(line)
    return parser


_DATE = re.compile(r"^\w{3} (\w{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\w+) (\d{4})$")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug",
                                       "Sep", "Oct", "Nov", "Dec"), 1)}


def parse_date(text: str) -> tuple[float, bool] | None:
    """A `date`-style stamp ("Sat Nov 21 10:44:46 UTC 2026") as (epoch seconds, is UTC);
    a zone other than UTC/GMT is read as if it were UTC (differences stay right)."""
    m = _DATE.match(text.strip())
    if not m or m.group(1) not in _MONTHS:
        return None
    mon, day, hh, mm, ss, zone, year = m.groups()
    try:
        epoch = calendar.timegm((int(year), _MONTHS[mon], int(day), int(hh), int(mm), int(ss),
                                 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    return float(epoch), zone in ("UTC", "GMT")


def describe_epoch(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
