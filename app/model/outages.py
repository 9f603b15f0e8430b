"""Outages of a run (``outage`` events, reconnect=on): what every view marks on its charts
and says in words.

An outage starts at its first connection error (``state: "start"``) and its end event says
when every affected virtual user was connected again (``reconnected_t``) and when throughput
was back to 95 % of the pre-fault rate (``recovered_t``, None when it was not before the phase
ended). A view shades the time the users were down, first error to reconnect (to the phase's
end if they never were; to the run's last time while it is still open).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable


@dataclass(frozen=True)
class Outage:
    id: int
    phase: str
    t0: float                      # the first error
    t_back: float | None           # every affected user connected again
    t_recovered: float | None      # throughput back to 95 % of the pre-fault rate
    t_end: float | None            # the end event's time (None: still open)
    body: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def label(self) -> str:
        return f"outage {self.id}"

    def down_until(self, last_t: float) -> float:
        """Where the shaded stretch ends: the reconnect, else the end, else ``last_t``."""
        for t in (self.t_back, self.t_end):
            if t is not None:
                return max(t, self.t0)
        return max(last_t, self.t0)


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def outages(events: Iterable[dict[str, Any]]) -> list[Outage]:
    """The run's outages from its events (any order of kinds; others are skipped)."""
    found: dict[int, Outage] = {}
    for ev in events:
        if ev.get("kind") != "outage" or not isinstance(ev.get("id"), int):
            continue
        t0 = _num(ev.get("first_error_t"))
        if t0 is None:
            continue
        if ev.get("state") == "end":
            found[ev["id"]] = Outage(ev["id"], str(ev.get("phase", "")), t0,
                                     _num(ev.get("reconnected_t")),
                                     _num(ev.get("recovered_t")),
                                     _num(ev.get("end_t")) or _num(ev.get("t")),
                                     {k: v for k, v in ev.items()
                                      if k not in ("v", "seq", "t", "kind", "state")})
        elif ev["id"] not in found:
            found[ev["id"]] = Outage(ev["id"], str(ev.get("phase", "")), t0, None, None, None,
                                     dict(ev))
    return [found[k] for k in sorted(found)]


def _fmt(x: Any) -> str:
    x = _num(x)
    if x is None:
        return "?"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}"


def describe(o: dict[str, Any]) -> str:
    """One line on an outage's end event (``show``, the run log, the saved-run view)."""
    rec = o.get("reconnect_s")
    parts = [f"outage {o.get('id', '?')} in {o.get('phase', '?')} at "
             f"{_fmt(o.get('first_error_t'))} s: "
             + (f"reconnected after {_fmt(rec)} s" if rec is not None
                else "not every virtual user reconnected")]
    share = round((_num(o.get("recovery_share")) or 0.95) * 100)
    if o.get("recovery_s") is not None:
        parts.append(f"throughput back to {share} % of {_fmt(o.get('pre_fault_rate'))} "
                     f"{o.get('unit') or ''} after {_fmt(o['recovery_s'])} s".replace("  ", " "))
    elif o.get("recovery"):
        parts.append(f"throughput back to {share} %: {o['recovery']}")
    vus = o.get("vus_affected") or []
    parts.append(f"{len(vus)} of {o.get('clients') or '?'} virtual users affected")
    errs = o.get("errors") or {}
    if isinstance(errs, dict) and errs:
        parts.append("errors: " + ", ".join(f"{k} {v}" for k, v in errs.items()))
    return "; ".join(parts)
