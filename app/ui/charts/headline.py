"""The headline strip over the live and saved charts: the numbers a talk quotes, each saying
where it comes from when hovered.

    strip = HeadlineStripWidget()
    strip.refresh(store)          # from the coalescing redraw timer, or once for a saved run

Tiles, in order: the workload's declared result metrics that have a per-interval series (the
headline first: QPS; NOPM and TPM …), latency p95/p99, errors, and the client's CPU share.
While a phase runs a tile shows the last interval and the phase's time-weighted mean; once a
phase has its summary, the result the workload declares for it (as `versus show` prints).
The strip knows no workload by name: it reads ``workloads.registry`` and the store.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from html import escape
from typing import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.model.phase import PhaseSummary
from app.model.runset import fmt_value as fmt_number
from app.model.scale import fmt_clock
from app.model.series import SeriesStore
from workloads.params import MetricSpec, WorkloadSpec
from workloads.registry import WORKLOADS


@dataclass(frozen=True)
class Figure:
    """What one tile shows: a title, a big value with its unit, a small line, a tooltip."""
    key: str
    title: str
    value: str
    unit: str
    detail: str
    source: str


def chosen_phase(store: SeriesStore, spec: WorkloadSpec | None
                 ) -> tuple[str, float, float | None] | None:
    """The phase the strip speaks of: the open one; after a run, its last measured phase
    (or its last phase)."""
    spans = store.phases()
    if not spans:
        return None
    open_span = next((s for s in reversed(spans) if s[2] is None), None)
    if open_span is not None:
        return open_span
    if spec is not None:
        measured = [s for s in spans if spec.phase_role(s[0]) == "measured"]
        if measured:
            return measured[-1]
    return spans[-1]


def figures(store: SeriesStore, spec: WorkloadSpec | None = None) -> list[Figure]:
    """The tiles' contents for this store (pure: the widget only lays them out)."""
    state = store.state()
    if spec is None:
        spec = WORKLOADS.get(state.workload or "")
    span = chosen_phase(store, spec)
    name, t0, t1 = span if span else (None, 0.0, None)
    summary = next((s for s in map(PhaseSummary.of, reversed(store.summaries()))
                    if s is not None and s.phase == name), None)
    phase_unit = ""
    if spec is not None and name is not None:
        ph = spec.phase(name)
        phase_unit = ph.unit if ph is not None else ""
    where = f"phase {name}" if name else "the run"
    out: list[Figure] = []
    metrics: Sequence[MetricSpec] = ()
    if spec is not None:
        metrics = sorted((m for m in spec.metrics if m.role == "result"),
                         key=lambda m: not m.headline)
    for m in metrics:
        unit = m.unit
        title = m.title
        if phase_unit and m.series == "throughput":
            # a load phase counts rows/s in the throughput series, not the workload's unit
            title, unit = "Throughput", phase_unit
        fig = _metric_figure(store, m, title, unit, name, t0, t1, summary, where,
                             use_result=not phase_unit)
        if fig is not None:
            out.append(fig)
    if not metrics:
        fig = _series_figure(store, "throughput", "Throughput", state.throughput_unit,
                             t0, t1, where, "client count per interval (sample.rate)")
        if fig is not None:
            out.append(fig)
    out.append(_latency_figure(store, t0, t1, summary, where))
    out.append(_errors_figure(store, t0, t1, summary, where))
    cpu = _client_cpu_figure(store, t0, t1, where)
    if cpu is not None:
        out.append(cpu)
    return out


def _metric_figure(store, m: MetricSpec, title: str, unit: str, phase: str | None, t0, t1,
                   summary: PhaseSummary | None, where: str, use_result: bool
                   ) -> Figure | None:
    final = summary.value(m.summary) if summary is not None and use_result else None
    source = m.source
    if summary is not None and source.startswith("@"):
        source = str(summary.lookup(source[1:]) or "")
    elif source.startswith("@"):
        source = "stated in the phase's summary when the phase ends"
    # the store's running figures: a tile costs the same at hour 10 as at minute 1
    point = store.last(m.series) if m.series else None
    mean, covered = store.mean(m.series, t0, t1) if point else (None, 0.0)
    last = float(point[1]) if point else None
    if final is None and last is None:
        return None
    series_src = (f"per-interval series {m.series}" if m.series else "")
    if final is not None:
        detail = f"result of {phase}" + (f" · last {fmt_number(last)}" if last is not None
                                         else "")
        tip = (f"{m.title} of {phase}: {fmt_number(final)} {unit}, the workload's declared "
               f"result ({source or 'phase summary'}).")
        if last is not None:
            tip += f" Last interval ({series_src}) ended at {fmt_clock(float(point[0]))}."
        return Figure(m.key, title, fmt_number(final), unit, detail, tip)
    detail = (f"mean {fmt_number(mean)} over {fmt_clock(covered)} of {phase}"
              if mean is not None else "no interval of this phase yet")
    tip = (f"{title}: last interval ending at {fmt_clock(float(point[0]))} ({series_src}); "
           f"mean: time-weighted over the intervals of {where}."
           + (f" At the end of the phase: {source}." if source else ""))
    return Figure(m.key, title, fmt_number(last), unit, detail, tip)


def _series_figure(store, name, title, unit, t0, t1, where, source) -> Figure | None:
    point = store.last(name)
    if point is None:
        return None
    mean, covered = store.mean(name, t0, t1)
    return Figure(name, title, fmt_number(float(point[1])), unit,
                  f"mean {fmt_number(mean)} over {fmt_clock(covered)}",
                  f"{title}: {source}; last interval ending at {fmt_clock(float(point[0]))}; "
                  f"mean over {where}, time-weighted")


def _latency_figure(store, t0, t1, summary: PhaseSummary | None, where: str) -> Figure:
    lat = summary.latency if summary is not None else {}
    if lat.get("p95") is not None:
        return Figure("latency", "Latency p95 / p99", f"{fmt_number(lat.get('p95'))} / "
                      f"{fmt_number(lat.get('p99'))}", "ms", f"all operations of {where}",
                      f"Percentiles of every operation of {where}, from the merged histograms "
                      f"in the phase's summary")
    p95 = store.last("latency.p95")
    p99 = store.last("latency.p99")
    if p95 is None:
        return Figure("latency", "Latency p95 / p99", "–", "ms", "no operation yet",
                      "Percentiles of the operations of the last interval")
    return Figure("latency", "Latency p95 / p99",
                  f"{fmt_number(float(p95[1]))} / "
                  f"{fmt_number(float(p99[1])) if p99 else '–'}", "ms",
                  "last interval, all operations",
                  f"Percentiles of every operation in the interval ending at "
                  f"{fmt_clock(float(p99[0])) if p99 else '?'}, from the agent's histogram")


def _errors_figure(store, t0, t1, summary: PhaseSummary | None, where: str) -> Figure:
    total = summary.errors_total if summary is not None else None
    point = store.last("errors")
    mean, covered = store.mean("errors", t0, t1) if point else (None, 0.0)
    if total is not None:
        return Figure("errors", "Errors", f"{int(total):,}", "", f"in {where}",
                      f"Failed operations the clients counted in {where} (phase summary)")
    last = float(point[1]) if point else None
    return Figure("errors", "Errors", fmt_number(last), "/s",
                  f"mean {fmt_number(mean)}/s over {fmt_clock(covered)}" if mean is not None
                  else "none counted yet",
                  "Failed operations per second the clients counted in the last interval; "
                  f"mean: time-weighted over {where}")


def _client_cpu_figure(store, t0, t1, where: str) -> Figure | None:
    point = store.last("driver.cpu")
    cores = store.host().get("cores")
    if point is None or not isinstance(cores, (int, float)) or cores <= 0:
        return None
    # % of one core -> % of the whole host
    mean, covered = store.mean("driver.cpu", t0, t1)
    mean = None if mean is None else mean / float(cores)
    return Figure("client-cpu", "Client CPU", fmt_number(float(point[1]) / float(cores)),
                  "% of host",
                  f"mean {fmt_number(mean)} % over {fmt_clock(covered)}" if mean is not None
                  else "",
                  f"CPU time of the workload driver's processes (getrusage, reported with "
                  f"/proc samples) as a share of all {int(cores)} cores of the host, last "
                  f"interval; mean over {where}. A driver near 100/cores % per core is "
                  f"the bottleneck, not the server")


class HeadlineTile(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("role", "tile")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 5, 10, 6)
        lay.setSpacing(0)
        self.title = QLabel()
        self.title.setProperty("role", "tile-title")
        self.value = QLabel()
        self.value.setProperty("role", "tile-value")
        self.value.setTextFormat(Qt.TextFormat.RichText)
        self.detail = QLabel()
        self.detail.setProperty("role", "hint")
        for w in (self.title, self.value, self.detail):
            lay.addWidget(w)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.figure: Figure | None = None

    def show_figure(self, f: Figure) -> None:
        if f == self.figure:
            return
        self.figure = f
        self.title.setText(f.title.upper())
        unit = f' <span style="font-size:9pt;font-weight:400">{escape(f.unit)}</span>' \
            if f.unit else ""
        self.value.setText(f"{escape(f.value)}{unit}")
        self.detail.setText(f.detail)
        self.setToolTip(f.source)
        for w in (self.title, self.value, self.detail):
            w.setToolTip(f.source)


class HeadlineStripWidget(QWidget):
    """A row of tiles (see the module's docstring); hidden while there is nothing to say."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("headline_strip")
        self._lay = QHBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(6)
        self._lay.addStretch(1)
        self.tiles: dict[str, HeadlineTile] = {}
        # never wider than the charts under it: a narrow window clips the last tiles
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._version = -1
        self._store: SeriesStore | None = None
        self._shown_at = 0.0

    def _drop(self, tile: QWidget) -> None:
        # gone now, not when the event loop gets to deleteLater
        self._lay.removeWidget(tile)
        tile.hide()
        tile.setParent(None)
        tile.deleteLater()

    def clear(self) -> None:
        for tile in self.tiles.values():
            self._drop(tile)
        self.tiles.clear()
        self._version = -1
        self.setVisible(False)

    MIN_INTERVAL_S = 0.5        # numbers change once a sample interval: no need for 25 Hz

    def refresh(self, store: SeriesStore, spec: WorkloadSpec | None = None,
                force: bool = False) -> bool:
        """Show ``store``'s figures (at most twice a second unless ``force``); True when
        redrawn."""
        if store is self._store and store.version == self._version and not force:
            return False
        now = time.monotonic()
        if store is self._store and not force and now - self._shown_at < self.MIN_INTERVAL_S:
            return False
        self._shown_at = now
        if store is not self._store:
            self.clear()
        self._store, self._version = store, store.version
        if not store.state().events:
            self.setVisible(False)
            return True
        figs = figures(store, spec)
        keys = [f.key for f in figs]
        for key in list(self.tiles):
            if key not in keys:
                self._drop(self.tiles.pop(key))
        for i, f in enumerate(figs):
            tile = self.tiles.get(f.key)
            if tile is None:
                tile = self.tiles[f.key] = HeadlineTile()
                tile.setObjectName(f"tile_{f.key}")
                self._lay.insertWidget(i, tile)
            elif self._lay.indexOf(tile) != i:          # a tile joined before it: move it
                self._lay.removeWidget(tile)
                self._lay.insertWidget(i, tile)
            tile.show_figure(f)
        self.setVisible(bool(figs))
        return True

    def text(self, key: str) -> str:
        """The value shown in a tile (tests and screenshots read it)."""
        tile = self.tiles.get(key)
        return tile.figure.value if tile and tile.figure else ""
