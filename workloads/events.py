"""The event stream: one JSON object per line, shared by the agent and the app.

Every event has ``v`` (format version), ``seq`` (1, 2, 3 … per run), ``t`` (seconds since the
run started, host monotonic clock) and ``kind``. Readers tolerate unknown fields and refuse a
newer major version with a clear message.

Latency histograms travel as sparse ``[[bucket, count], ...]`` lists over one fixed
log-linear bucket scheme defined here, so any interval can be merged exactly on either side.
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterable, Iterator

FORMAT_VERSION = 1

KINDS = frozenset({
    "hello",     # agent version, host facts, run spec (no secrets)
    "phase",     # {"name", "state": "start"|"end"}
    "progress",  # {"phase", "done", "total", "unit"}
    "sample",    # one interval of workload counters
    "host",      # one interval of OS metrics from /proc
    "db",        # one interval of server counters
    "setting",   # effective server settings at start
    "log",       # {"level", "message"}
    "error",     # {"message", "fatal"}
    "summary",   # per-phase result
    "end",       # {"status": "ok"|"stopped"|"failed", "reason"}
})


class EventFormatError(ValueError):
    """A line that is not an event this version understands."""


def encode(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, separators=(",", ":"), allow_nan=False) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    """Parse one line; raise EventFormatError with a sentence a user can act on."""
    try:
        ev = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        text = line[:80] if isinstance(line, str) else line[:80].decode("utf-8", "replace")
        raise EventFormatError(f"not a JSON event line: {text!r} ({exc})") from None
    if not isinstance(ev, dict):
        raise EventFormatError("an event line must hold a JSON object")
    v = ev.get("v")
    if not isinstance(v, int):
        raise EventFormatError("event has no format version 'v'")
    if v > FORMAT_VERSION:
        raise EventFormatError(
            f"the agent speaks event format {v} but this Versus understands up to "
            f"{FORMAT_VERSION}; update Versus on this computer")
    for key, typ in (("seq", int), ("t", (int, float)), ("kind", str)):
        if not isinstance(ev.get(key), typ):
            raise EventFormatError(f"event lacks a valid {key!r}")
    return ev


class LineSplitter:
    """Turn byte chunks into complete lines, keeping a partial line until its newline."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buf += chunk
        if b"\n" not in self._buf:
            return []
        *lines, self._buf = self._buf.split(b"\n")
        return [ln for ln in lines if ln.strip()]

    @property
    def pending(self) -> bytes:
        return self._buf


# --- latency histogram buckets ------------------------------------------------------------
# HDR-style log-linear buckets over microseconds: values below SUB are exact, then each
# power of two is split into SUB/2 equal steps (relative error < 2/SUB, about 3 %).
SUB_BITS = 6
SUB = 1 << SUB_BITS          # 64
HALF = SUB >> 1
MAX_US = 1 << 37             # ~38 hours; larger values land in the last bucket
N_BUCKETS = SUB + (37 - SUB_BITS) * HALF


def bucket_of(us: int) -> int:
    if us < SUB:
        return us if us > 0 else 0
    if us >= MAX_US:
        return N_BUCKETS - 1
    exp = us.bit_length() - SUB_BITS          # >= 1
    return SUB + (exp - 1) * HALF + ((us >> exp) - HALF)


def bucket_low(b: int) -> int:
    """Smallest microsecond value that falls into bucket b."""
    if b < SUB:
        return b
    exp, step = divmod(b - SUB, HALF)
    exp += 1
    return (HALF + step) << exp


def bucket_mid(b: int) -> float:
    if b < SUB:
        return float(b)
    return (bucket_low(b) + bucket_low(b + 1) - 1) / 2.0


def sparse(counts: Iterable[int]) -> list[list[int]]:
    return [[i, c] for i, c in enumerate(counts) if c]


def merge_sparse(into: dict[int, int], hist: Iterable[Iterable[int]]) -> dict[int, int]:
    for b, c in hist:
        into[b] = into.get(b, 0) + c
    return into


def percentiles(hist: dict[int, int] | list[list[int]], qs: Iterable[float] = (50, 95, 99)
                ) -> dict[str, float | None]:
    """Percentiles in milliseconds (bucket midpoints), plus 'max' (upper bucket bound)."""
    items = sorted(hist.items() if isinstance(hist, dict) else ((b, c) for b, c in hist))
    total = sum(c for _, c in items)
    out: dict[str, float | None] = {}
    qs = list(qs)
    if not total:
        out.update({f"p{_qname(q)}": None for q in qs})
        out["max"] = None
        return out
    for q in qs:
        rank = max(1, math.ceil(total * q / 100.0))
        acc = 0
        for b, c in items:
            acc += c
            if acc >= rank:
                out[f"p{_qname(q)}"] = round(bucket_mid(b) / 1000.0, 4)
                break
    last = items[-1][0]
    out["max"] = round((bucket_low(last + 1) - 1) / 1000.0, 4)
    return out


def _qname(q: float) -> str:
    return str(int(q)) if float(q).is_integer() else str(q).replace(".", "_")


def iter_lines(data: bytes) -> Iterator[bytes]:
    for ln in data.split(b"\n"):
        if ln.strip():
            yield ln
