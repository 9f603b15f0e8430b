"""A phase's result as its workload declares it: the result metrics with their sources, then
the cross-checks, then the phase's flags (missed SLA, a failed check). One reading for the run
log, ``show``, ``compare``, the views and exports.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.model.derive import num
from app.model.phase import PhaseSummary
from app.model.series import SeriesStore
from workloads.params import MetricSpec, WorkloadSpec

RESULT_ROLES = ("measured", "step")


@dataclass(frozen=True)
class ResultValue:
    key: str
    title: str
    unit: str
    value: float | None          # None: declared, but the run could not measure it
    source: str
    role: str                    # "result" | "check" | "detail"
    headline: bool


@dataclass(frozen=True)
class Flag:
    """A condition a phase summary carries (``flags``): a missed SLA, a failed check."""
    name: str
    detail: str
    severity: str                # "warn" | "fail"

    def text(self) -> str:
        return f"{self.name.upper()}: {self.detail}" if self.detail else self.name.upper()


def _at(text: str, summary: PhaseSummary) -> str:
    """A declared sentence or unit; one starting with @ is read from the summary."""
    if text.startswith("@"):
        s = summary.lookup(text[1:])
        return str(s) if s else ""
    return text


def _source(m: MetricSpec, summary: PhaseSummary) -> str:
    return _at(m.source, summary)


def flags(summary: PhaseSummary | None) -> list[Flag]:
    """The flags of a phase summary, malformed entries left out."""
    out = []
    for f in summary.flags if summary is not None else ():
        if isinstance(f, dict) and f.get("name"):
            sev = "fail" if f.get("severity") == "fail" else "warn"
            out.append(Flag(str(f["name"]), str(f.get("detail") or ""), sev))
    return out


def flags_text(fl: list[Flag]) -> str:
    return "; ".join(f.text() for f in fl)


def _declared(m: MetricSpec, summary: PhaseSummary) -> bool:
    """Whether a summary is expected to hold this metric (its parent object is there)."""
    path = m.summary.split("/")[0]
    head = path.rsplit(".", 1)[0] if "." in path else path
    return summary.lookup(head) is not None


def result_values(spec: WorkloadSpec | None, summary: PhaseSummary | None,
                  phase_role: str | None = None) -> list[ResultValue]:
    """The declared result metrics a phase summary holds, in declaration order; [] for a
    phase that gives no result (loads, warm-ups) or a workload this app does not know."""
    if spec is None or summary is None:
        return []
    role = phase_role or summary.role or spec.phase_role(summary.phase)
    if role not in RESULT_ROLES:
        return []
    out = []
    for m in spec.metrics:
        if not _declared(m, summary):
            continue
        v = summary.value(m.summary)
        if v is None and m.role != "result":
            continue                 # a cross-check or detail the run did not make
        out.append(ResultValue(m.key, m.title, _at(m.unit, summary), v, _source(m, summary),
                               m.role, m.headline))
    return out


def fmt_number(v: float | None) -> str:
    if v is None:
        return "—"
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:,.0f}"
    return f"{v:,.2f}" if abs(v) >= 1 else f"{v:.3g}"


def _with_unit(r: ResultValue) -> str:
    return f"{fmt_number(r.value)} {r.unit}".strip()


def result_parts(values: list[ResultValue], duration_s: float | None
                 ) -> tuple[str, str, list[str]]:
    """(headline, sources, cross-checks) as sentences."""
    results = [r for r in values if r.role == "result"]
    head = " · ".join(_with_unit(r) if r.value is not None else f"{r.title} unavailable"
                      for r in results)
    sources = [f"over {duration_s:,.1f} s" if duration_s is not None
               else "over a period the summary does not give"]
    for r in results:
        src = ("could not be measured to the end of the period" if r.value is None
               else r.source)
        if src:
            sources.append(f"{r.title}: {src}")
    checks = [f"{r.title} {_with_unit(r)} ({r.source})" if r.source else
              f"{r.title} {_with_unit(r)}" for r in values if r.role == "check"]
    return head, "; ".join(sources), checks


def missing_text(missing: list[Any]) -> list[str]:
    """Measurement sources that stopped (a summary's or an end event's ``missing``), as
    sentences."""
    out = []
    for m in missing or ():
        if isinstance(m, dict):
            since = num(m.get("since"))
            out.append(f"{m.get('source', 'a measurement source')} stopped"
                       + (f" at {since:,.1f} s" if since is not None else "")
                       + (f" ({m['why']})" if m.get("why") else "")
                       + ": the server cross-check is missing")
    return out


def result_text(spec: WorkloadSpec | None, summary: PhaseSummary | None,
                phase_role: str | None = None) -> str | None:
    """One line: the result, its sources, the cross-checks, the flags; None when there is
    neither a result nor a flag."""
    values = [v for v in result_values(spec, summary, phase_role) if v.role != "detail"]
    fl = flags(summary)
    if not values or summary is None:
        return flags_text(fl) or None
    head, sources, checks = result_parts(values, summary.duration_s)
    text = f"{head} ({sources})"
    text += f"; cross-check: {'; '.join(checks)}" if checks else ""
    text += "".join(f"; {m}" for m in missing_text(summary.missing))
    text += f" — {flags_text(fl)}" if fl else ""
    limit = summary.lookup("client.sentence")       # the client, not the server, was the limit
    return text + (f". {limit}" if limit else "")


def describe_summary(ev: dict[str, Any], workload: str | None) -> str | None:
    """The run log's result line for a phase's summary event of a run of this workload."""
    from .metrics import spec_of
    return result_text(spec_of(workload or ""), PhaseSummary.of(ev))


def new_store(**kw: Any) -> SeriesStore:
    """A SeriesStore whose run log states each phase's result as its workload declares it."""
    return SeriesStore(describe=describe_summary, **kw)
