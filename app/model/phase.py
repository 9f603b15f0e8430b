"""One derivation per phase, beside the per-interval one (app.model.derive): the phases' spans
from their ``phase`` events, and the figures of each phase's ``summary`` event.

This is the only reader of summary bodies: the headline, ``show``, ``compare``, the exports,
the CPU view, the CLI's progress line and the importer's descriptions ask a ``PhaseSummary``
for its figures by name (or a declared metric's path, ``value("result.nopm")``), so a field
the agent renames is changed here once.

    spans = phase_spans(events)              # [PhaseSpan(name, t0, t1, role)]
    summ = summaries(events)["measure"]      # PhaseSummary of the phase's last summary
    summ.rate, summ.latency["p95"], summ.value("counters.queries/s")
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from app.model.derive import lookup, num, summary_value
from workloads import events as ev_format

KINDS = ("phase", "summary")        # the event kinds a run's phases are read from


def _figure(x: Any) -> int | float | None:
    """A finite number as the summary states it (an int stays an int); None otherwise."""
    return x if num(x) is not None else None


@dataclass(frozen=True)
class PhaseSpan:
    name: str
    t0: float
    t1: float | None          # None while the phase is still open (a live run)
    role: str | None = None   # as the phase's start event says (the workload's spec)


def phase_spans(events: Iterable[dict[str, Any]]) -> list[PhaseSpan]:
    """Each phase from its start event to its end event, in the order they started."""
    spans: list[list] = []
    for e in events:
        if e.get("kind") != "phase":
            continue
        if e.get("state") == "start":
            spans.append([str(e.get("name", "?")), float(e["t"]), None,
                          str(e["role"]) if e.get("role") else None])
        elif e.get("state") == "end":
            for s in reversed(spans):
                if s[0] == e.get("name") and s[2] is None:
                    s[2] = float(e["t"])
                    break
    return [PhaseSpan(*s) for s in spans]


@dataclass(frozen=True)
class PhaseSummary:
    """The figures the agent states when a phase ends (its ``summary`` event)."""
    phase: str
    _body: dict[str, Any]

    @classmethod
    def of(cls, ev: dict[str, Any] | None) -> PhaseSummary | None:
        """The summary an event is, or None (another kind, or no phase named)."""
        if not isinstance(ev, dict) or ev.get("kind") != "summary" \
                or not isinstance(ev.get("phase"), str):
            return None
        return cls(ev["phase"], ev)

    # figures by name
    @property
    def t(self) -> float:
        return float(num(self._body.get("t")) or 0.0)

    @property
    def role(self) -> str | None:
        r = self._body.get("role")
        return r if isinstance(r, str) else None

    @property
    def unit(self) -> str | None:
        u = self._body.get("unit")
        return str(u) if u else None

    @property
    def source(self) -> str:
        return str(self._body.get("source") or "")

    @property
    def rate(self) -> int | float | None:
        return _figure(self._body.get("rate"))

    @property
    def duration_s(self) -> int | float | None:
        return _figure(self._body.get("duration_s"))

    @property
    def ops_total(self) -> int | float | None:
        return _figure(self._body.get("ops_total"))

    @property
    def errors_total(self) -> int | float | None:
        return _figure(self._body.get("errors_total"))

    @property
    def error_rate(self) -> float | None:
        """Errors per second over the phase (0 when it had none, even without a duration)."""
        errs, dur = self.errors_total, self.duration_s
        if errs is not None and dur:
            return errs / dur
        return 0.0 if errs == 0 else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The interval the phase's operations were counted in, where the summary says."""
        iv = self._body.get("interval")
        if isinstance(iv, list) and len(iv) == 2 and all(num(x) is not None for x in iv) \
                and iv[1] > iv[0]:
            return float(iv[0]), float(iv[1])
        return None

    @property
    def latency(self) -> dict[str, float | None]:
        """Percentiles over the whole phase (ms): from the merged histograms where the
        summary has them, else as the summary states them; {} when it has neither."""
        hist = self._body.get("hist")
        if isinstance(hist, dict) and hist:
            merged: dict[int, int] = {}
            for h in hist.values():
                ev_format.merge_sparse(merged, h)
            # the summary's own format: files of format 1 hold 3 % buckets
            lat = ev_format.percentiles(merged, v=self.format_version)
        else:
            lat = (self._body.get("lat_ms") or {}).get("all")
        return {k: num(v) for k, v in lat.items()} if isinstance(lat, dict) else {}

    @property
    def format_version(self) -> int | None:
        """The event format the summary was written in (its histograms' buckets follow it)."""
        v = self._body.get("v")
        return v if isinstance(v, int) else None

    @property
    def has_histograms(self) -> bool:
        hist = self._body.get("hist")
        return isinstance(hist, dict) and bool(hist)

    @property
    def latency_max(self) -> float | None:
        return _figure(((self._body.get("lat_ms") or {}).get("all") or {}).get("max"))

    @property
    def server(self) -> dict[str, Any] | None:
        """The server's own count of the phase (source, counter, delta, rate)."""
        srv = self._body.get("server")
        return dict(srv) if isinstance(srv, dict) and srv else None

    @property
    def driver_cpu_us_per_op(self) -> float | None:
        return _figure(lookup(self._body, "driver_cpu.us_per_op"))

    @property
    def result(self) -> dict[str, Any]:
        res = self._body.get("result")
        return dict(res) if isinstance(res, dict) else {}

    @property
    def check(self) -> dict[str, Any] | None:
        c = self._body.get("check")
        return dict(c) if isinstance(c, dict) and c else None

    @property
    def clients_asked(self) -> Any:
        return self._body.get("clients_asked")

    @property
    def clients_lost(self) -> list[Any]:
        lost = self._body.get("clients_lost")
        return list(lost) if isinstance(lost, list) else []

    @property
    def flags(self) -> list[Any]:
        raw = self._body.get("flags")
        return list(raw) if isinstance(raw, list) else []

    @property
    def missing(self) -> list[Any]:
        """Measurement sources that stopped during the phase (source, since, why)."""
        raw = self._body.get("missing")
        return list(raw) if isinstance(raw, list) else []

    @property
    def perf(self) -> dict[str, Any] | None:
        p = self._body.get("perf")
        return p if isinstance(p, dict) else None

    # figures by a declared path (a workload's metric, its sources and sentences)
    def value(self, path: str) -> float | None:
        """A number by a metric's path (``result.nopm``; ``counters.queries/s`` per second)."""
        return summary_value(self._body, path)

    def lookup(self, path: str) -> Any:
        """Whatever is at a dotted path (``client.sentence``, ``perf.source``); None if absent."""
        return lookup(self._body, path)

    def ops(self, op_count: str | None = None) -> float | None:
        """The phase's operations: the workload's declared count, else ``ops_total``."""
        return self.value(op_count or "ops_total")

    def stated(self) -> bool:
        """Whether the summary states a count of operations and a rate (a tool's load states
        only how long it took)."""
        return self._body.get("ops_total") is not None and self._body.get("rate") is not None


def summaries(events: Iterable[dict[str, Any]]) -> dict[str, PhaseSummary]:
    """Each phase's summary (the last one, where a phase was summarised twice)."""
    out: dict[str, PhaseSummary] = {}
    for e in events:
        s = PhaseSummary.of(e)
        if s is not None:
            out[s.phase] = s
    return out
