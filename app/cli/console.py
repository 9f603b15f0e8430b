"""What the command line prints: one progress line per event worth a line, and failures as
one sentence with the exit code the README promises. Shared by `versus run` and `versus plan`.
"""
from __future__ import annotations

import sys
import time

from app.analysis.metrics import spec_of
from app.analysis.results import missing_text, result_text
from app.model.outages import describe as describe_outage


def fail(msg: str, code: int = 2) -> int:
    print(f"versus: {msg}", file=sys.stderr)
    return code


class Progress:
    """One line per second from the live events."""

    def __init__(self, stream, duration: float | None, workloads: dict[str, str] | None = None):
        self.out = stream
        self.last_progress = 0.0
        self.phase = ""
        self.cpu: dict = {}
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
                self.cpu = e.get("cpu", {})
            elif k == "sample":
                lat = e.get("lat_ms", {}).get("all", {})
                c = self.cpu
                p95 = lat.get("p95")
                p95s = f"{p95:.3f}" if p95 is not None else "-"
                self._line(f"{e['t']:7.1f}s  {e['phase']:<8} {e['rate']:>12,.0f} {e['unit']}  "
                           f"p95 {p95s} ms  clients {e.get('clients')}  "
                           f"cpu usr {c.get('user', 0):.0f}% sys {c.get('system', 0):.0f}% "
                           f"idle {c.get('idle', 0):.0f}%")
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
                for m in missing_text(e):
                    self._line(f"{e['t']:7.1f}s  {m}")
            elif k == "hello":
                self.workload = e.get("workload")
            elif k == "summary" and result_text(spec_of(self.workload or ""), e):
                self._line(f"{e['t']:7.1f}s  {e['phase']} done: "
                           f"{result_text(spec_of(self.workload or ''), e)}")
            elif k == "summary" and e.get("check"):
                self._line(f"{e['t']:7.1f}s  consistency check: "
                           f"{'PASS' if e['check'].get('ok') else 'FAIL'}")
            elif k == "summary":
                srv = e.get("server") or {}
                extra = (f"; server {srv['counter']} {srv['delta']:,} "
                         f"({srv['source']})") if srv else ""
                if e.get("ops_total") is None or e.get("rate") is None:    # a tool's load
                    took = (f" in {e['duration_s']:.1f} s" if e.get("duration_s") is not None
                            else "")
                    self._line(f"{e['t']:7.1f}s  {e['phase']} done{took} "
                               f"({e.get('source', '')})")
                    continue
                self._line(f"{e['t']:7.1f}s  {e['phase']} done: {e['ops_total']:,} ops in "
                           f"{e['duration_s']:.1f} s = {e['rate']:,.0f} {e['unit']} "
                           f"({e.get('source') or 'client count'}){extra}")

    def _line(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def warn_damaged(damaged: list[str]) -> None:
    """Damaged rows of a session file, skipped: one sentence each on stderr."""
    for d in damaged:
        print(f"versus: {d}", file=sys.stderr)
