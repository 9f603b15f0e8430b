"""What the command line prints: one progress line per event worth a line, and failures as
one sentence with the exit code the README promises. Shared by `versus run` and `versus plan`.
"""
from __future__ import annotations

import sys
import time

from app.analysis.metrics import spec_of
from app.analysis.results import missing_text, result_text
from app.model.derive import interval_values
from app.model.outages import describe as describe_outage
from app.model.phase import PhaseSummary


def fail(msg: str, code: int = 2) -> int:
    print(f"versus: {msg}", file=sys.stderr)
    return code


class Progress:
    """One line per second from the live events."""

    def __init__(self, stream, duration: float | None, workloads: dict[str, str] | None = None):
        self.out = stream
        self.last_progress = 0.0
        self.phase = ""
        self.cpu: dict[str, float] = {}
        self.workload: str | None = None
        # each run's workload, when its hello event is not among the events (attach)
        self.workloads = dict(workloads or {})

    def __call__(self, run_id: str, evs: list[dict]) -> None:
        self.workload = self.workloads.get(run_id, self.workload)
        for e in evs:
            k = e["kind"]
            if k == "phase" and e.get("state") == "start":
                self.phase = e["name"]
                self._line(f"{e['t']:7.1f}s  phase {e['name']} started")
            elif k == "progress":
                now = time.monotonic()
                if now - self.last_progress >= 1.0 or e["done"] >= e["total"]:
                    self.last_progress = now
                    pct = 100.0 * e["done"] / e["total"] if e["total"] else 100.0
                    self._line(f"{e['t']:7.1f}s  {e['phase']:<8} {e['done']:>12,} / "
                               f"{e['total']:,} {e.get('unit', '')} ({pct:.0f} %)")
            elif k == "host":
                self.cpu = interval_values(e)         # cpu.user, cpu.system, cpu.idle …
            elif k == "sample":
                v, c = interval_values(e), self.cpu
                p95 = v.get("latency.p95")
                p95s = f"{p95:.3f}" if p95 is not None else "-"
                clients = int(v["clients"]) if "clients" in v else None
                self._line(f"{e['t']:7.1f}s  {e['phase']:<8} {v.get('throughput', 0):>12,.0f} "
                           f"{e['unit']}  p95 {p95s} ms  clients {clients}  "
                           f"cpu usr {c.get('cpu.user', 0):.0f}% "
                           f"sys {c.get('cpu.system', 0):.0f}% idle {c.get('cpu.idle', 0):.0f}%")
            elif k == "log":
                self._line(f"{e['t']:7.1f}s  {e['message']}")
            elif k == "error":
                self._line(f"{e['t']:7.1f}s  error: {e['message'].splitlines()[0]}")
            elif k == "outage" and e.get("state") == "start":
                self._line(f"{e['t']:7.1f}s  outage {e.get('id', '?')}: virtual user "
                           f"{e.get('vu', '?')} lost its connection ({e.get('class', '?')}); "
                           f"reconnecting")
            elif k == "outage":
                self._line(f"{e['t']:7.1f}s  {describe_outage(e)}")
            elif k == "end":
                for m in missing_text(e.get("missing") or []):
                    self._line(f"{e['t']:7.1f}s  {m}")
            elif k == "hello":
                self.workload = e.get("workload")
            elif (summ := PhaseSummary.of(e)) is not None:
                self._summary(summ)

    def _summary(self, s: PhaseSummary) -> None:
        """A phase's end: its declared result, else its check, else its count."""
        result = result_text(spec_of(self.workload or ""), s)
        if result:
            self._line(f"{s.t:7.1f}s  {s.phase} done: {result}")
        elif s.check:
            self._line(f"{s.t:7.1f}s  consistency check: "
                       f"{'PASS' if s.check.get('ok') else 'FAIL'}")
        elif not s.stated():                                      # a tool's load
            took = f" in {s.duration_s:.1f} s" if s.duration_s is not None else ""
            self._line(f"{s.t:7.1f}s  {s.phase} done{took} ({s.source})")
        else:
            srv = s.server
            extra = (f"; server {srv['counter']} {srv['delta']:,} "
                     f"({srv['source']})") if srv else ""
            self._line(f"{s.t:7.1f}s  {s.phase} done: {s.ops_total:,} ops in "
                       f"{s.duration_s or 0:.1f} s = {s.rate:,.0f} {s.unit} "
                       f"({s.source or 'client count'}){extra}")

    def _line(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def warn_damaged(damaged: list[str]) -> None:
    """Damaged rows of a session file, skipped: one sentence each on stderr."""
    for d in damaged:
        print(f"versus: {d}", file=sys.stderr)
