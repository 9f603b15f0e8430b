"""One recorded run, loaded for comparison: its facts, phases, summaries and derived series
(``RunData``), and how runs are named on the command line (``FILE[:RUN]``) and found in
their session files."""
from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from app.analysis.metrics import spec_of
from app.analysis.results import Flag, ResultValue, flags, result_values
from app.model.outages import Outage, outages as outages_of
from app.model.phase import (KINDS as PHASE_KINDS, PhaseSpan, PhaseSummary, phase_spans,
                             summaries as summaries_of)
from app.model.runset import RunRef, run_colour
from app.store.session import SeriesTable, SessionFile
from workloads.params import WorkloadSpec

_META_KINDS = ("hello", "setting", "end", "outage") + PHASE_KINDS


class CompareError(Exception):
    """Runs that cannot be compared as asked, said as a sentence."""


@dataclass
class RunData:
    """One run, loaded: facts, phases, summaries and its derived series (run clock)."""
    ref: RunRef
    index: int
    label: str
    colour: str
    workload: str
    target: str
    host: str
    params: dict[str, Any]
    status: str
    hello: dict[str, Any]
    server_version: str | None
    unit: str
    phases: list[PhaseSpan]
    summaries: dict[str, PhaseSummary]
    sample: SeriesTable
    hosts: SeriesTable
    db: SeriesTable
    last_t: float
    offset: float = 0.0
    outages: list[Outage] = field(default_factory=list)     # reconnect=on
    damaged: list[str] = field(default_factory=list)   # rows of the file skipped, in words
    _cache: dict[str, tuple[array, array]] = field(default_factory=dict, repr=False)
    _values: dict[str, dict] = field(default_factory=dict, repr=False)

    @property
    def spec(self) -> WorkloadSpec | None:
        return spec_of(self.workload)

    def table(self, kind: str) -> SeriesTable:
        return {"sample": self.sample, "host": self.hosts, "db": self.db}.get(
            kind, SeriesTable(kind))

    def phase_unit(self, name: str) -> str:
        """The throughput unit of one phase: its summary's, its samples', else the run's."""
        summ = self.summaries.get(name)
        if summ is not None and summ.unit:
            return summ.unit
        for p, u in zip(self.sample.phase, self.sample.unit):
            if p == name and u:
                return u
        spec = self.spec
        if spec is not None:
            planned = next((p for p in spec.planned_phases(self.params) if p.name == name),
                           None)
            if planned is not None and planned.unit:
                return planned.unit
        return self.unit

    def phase_role(self, name: str) -> str | None:
        """The phase's role: from its start event, else from the spec with the run's
        parameters (a suite's steps may be named after them)."""
        span = self.phase(name)
        if span is not None and span.role:
            return span.role
        spec = self.spec
        return spec.phase_role(name, self.params) if spec else None

    def results(self, phase: str) -> list[ResultValue]:
        """The phase's declared result metrics, with their sources (see app.analysis.results)."""
        summ = self.summaries.get(phase)
        return result_values(self.spec, summ, self.phase_role(phase)) if summ else []

    def flags(self, phase: str) -> list[Flag]:
        return flags(self.summaries.get(phase))

    @property
    def cores(self) -> int | None:
        c = (self.hello.get("host") or {}).get("cores")
        return int(c) if isinstance(c, (int, float)) and c > 0 else None

    @property
    def profile(self) -> str | None:
        for src in (self.params, self.hello, (self.hello.get("target") or {})):
            p = src.get("profile") if isinstance(src, dict) else None
            if p:
                return str(p if not isinstance(p, dict) else p.get("name", p))
        return None

    @property
    def engine(self) -> str:
        return str((self.hello.get("target") or {}).get("engine") or "")

    @property
    def hostname(self) -> str:
        return str((self.hello.get("host") or {}).get("hostname") or self.host)

    def phase(self, name: str) -> PhaseSpan | None:
        for p in self.phases:
            if p.name == name:
                return p
        return None

    def phase_names(self) -> list[str]:
        return [p.name for p in self.phases]

    def describe(self) -> dict[str, Any]:
        """Facts for a legend, a title slide or a JSON export."""
        return {"index": self.index + 1, "label": self.label, "colour": self.colour,
                "file": self.ref.file, "run_id": self.ref.run_id, "workload": self.workload,
                "target": self.target, "host": self.hostname, "cores": self.cores,
                "server_version": self.server_version, "params": self.params,
                "profile": self.profile,
                "status": self.status, "unit": self.unit, "offset_s": self.offset,
                "phases": [{"name": p.name, "start_s": p.t0, "end_s": p.t1}
                           for p in self.phases]}


def parse_ref(spec: str) -> RunRef:
    """``FILE`` or ``FILE:RUN`` (RUN: a run id, its unique prefix or suffix, or 1, 2 … in
    the file's order). A path that exists as given wins over a split at the last colon."""
    if Path(spec).exists():
        return RunRef(spec)
    file, sep, run = spec.rpartition(":")
    if sep and file and run:
        return RunRef(file, run)
    return RunRef(spec)


def _short_version(engine: str, version: str | None) -> str:
    if not version:
        return engine or "?"
    m = re.match(r"PostgreSQL ([\d.]+\w*)", version)
    if m:
        return f"PostgreSQL {m.group(1)}"
    m = re.match(r"([\d.]+)-MariaDB", version)
    if m or "mariadb" in version.lower():
        num = m.group(1) if m else re.search(r"[\d.]+", version).group(0)
        return f"MariaDB {num}"
    m = re.match(r"([\d.]+)", version)
    if m:
        name = {"mysql": "MySQL", "mariadb": "MariaDB", "postgres": "PostgreSQL"}.get(
            engine, engine)
        return f"{name} {m.group(1)}".strip()
    return version.split(" (")[0][:40]


def resolve_run(session: SessionFile, ref: RunRef) -> list:
    """The RunRecords a reference names (all of the file's when it names none)."""
    runs = session.runs()
    if not runs:
        raise CompareError(f"{ref.file} holds no runs")
    if ref.run_id is None:
        return runs
    ids = [r.id for r in runs]
    if ref.run_id in ids:
        return [runs[ids.index(ref.run_id)]]
    if ref.run_id.isdigit() and 1 <= int(ref.run_id) <= len(ids):
        return [runs[int(ref.run_id) - 1]]
    hits = [r for r in runs if r.id.startswith(ref.run_id) or r.id.endswith(ref.run_id)]
    if len(hits) == 1:
        return hits
    raise CompareError(f"{ref.file} has no run {ref.run_id!r}; its runs are: "
                       f"{', '.join(ids)} (or give their number, 1 to {len(ids)})")


def load_run(session: SessionFile, run_id: str, index: int, file: str, rec=None) -> RunData:
    """Read one run (a live run may be read again later for what was added since)."""
    rec = rec if rec is not None else session.run(run_id)
    meta = session.events(run_id, kinds=_META_KINDS)
    hello = next((e for e in meta if e["kind"] == "hello"), {})
    version = next((e.get("server_version") for e in meta if e["kind"] == "setting"), None)
    sample = session.series(run_id, "sample")
    hosts = session.series(run_id, "host")
    db = session.series(run_id, "db")
    session.check(run_id)
    last_t = max([float(meta[-1]["t"]) if meta else 0.0,
                  sample.t[-1] if sample.t else 0.0, hosts.t[-1] if hosts.t else 0.0])
    unit = (next((u for u in sample.unit if u), None) or hello.get("throughput_unit")
            or rec.info.get("throughput_unit") or "ops/s")
    return RunData(ref=RunRef(file, run_id), index=index, label="", colour=run_colour(index),
                   workload=rec.workload, target=rec.target, host=rec.host, params=rec.params,
                   status=rec.status, hello=hello, server_version=version, unit=unit,
                   phases=phase_spans(meta), summaries=summaries_of(meta),
                   sample=sample, hosts=hosts, db=db, last_t=last_t,
                   outages=outages_of(meta), damaged=session.damaged(run_id))


def _base_label(r: RunData) -> str:
    lab = _short_version(r.engine, r.server_version)
    if isinstance(r.hello.get("imported"), dict):      # a tool's log: say which tool
        tool = (r.hello.get("tool") or {}).get("name") or r.workload
        return f"{tool} log" if lab in ("?", "") else f"{lab} · {tool} log"
    return lab


def _label_runs(runs: list[RunData], names: Sequence[str] | None) -> None:
    base = [_base_label(r) for r in runs]
    for r, b in zip(runs, base):
        r.label = b
    if names:
        for r, n in zip(runs, names):
            if n:
                r.label = n
    seen: dict[str, int] = {}
    for r in runs:
        seen[r.label] = seen.get(r.label, 0) + 1
    if any(c > 1 for c in seen.values()):
        # Same server twice: tell them apart by what differs (a parameter), else by number.
        dup = {lab for lab, c in seen.items() if c > 1}
        new = {}
        for r in runs:
            if r.label in dup:
                others = [o for o in runs if o.label == r.label and o is not r]
                diff = [k for k, v in sorted(r.params.items())
                        if k not in ("duration", "warmup")
                        and any(o.params.get(k) != v for o in others)]
                new[r.index] = (f"{r.label} {', '.join(f'{k}={r.params[k]}' for k in diff[:2])}"
                                if diff else f"{r.label} #{r.index + 1}")
        for r in runs:
            r.label = new.get(r.index, r.label)
        labels = [r.label for r in runs]
        for r in runs:
            if labels.count(r.label) > 1:
                r.label = f"{r.label} #{r.index + 1}"
