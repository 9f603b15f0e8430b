"""Hardware and software counters of the server's processes per phase (`perf stat`), and
on request a CPU profile of them (`perf record -g`, folded stacks).

`probe` finds out once per run what perf can do on this host for these processes and says
why not in one sentence: perf not installed, not allowed (perf_event_paranoid, not root),
or no hardware counters (no PMU, as in most virtual machines). Software events (task-clock,
context switches, CPU migrations, page faults) need no PMU and are counted wherever perf may
watch the processes. Counters attached to the server's processes are inherited by the
processes and threads they start afterwards (new backends and connection threads).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

SOFTWARE = ("task-clock", "context-switches", "cpu-migrations", "page-faults")
HARDWARE = ("instructions", "cycles", "branches", "branch-misses", "L1-icache-load-misses",
            "LLC-load-misses")
_PMU_DIRS = ("cpu", "cpu_core", "cpu_atom", "armv8_pmuv3", "armv8_pmuv3_0", "arm_cortex_a53")
INSTALL = ("perf is not installed on this host (Debian: apt-get install linux-perf; Ubuntu: "
           "linux-tools-generic; Fedora/RHEL: dnf install perf)")
MAX_STACKS = 5000


@dataclass
class PerfCaps:
    """What perf can count for the server's processes on this host."""
    perf: str = ""                          # the perf binary, "" when unusable
    software: bool = False
    hardware: list[str] = field(default_factory=list)   # hardware events that count
    reason: str = ""                        # why nothing can be counted
    hardware_reason: str = ""               # why no (or not every) hardware event counts

    def events(self) -> list[str]:
        return list(SOFTWARE) + self.hardware if self.software else []

    def to_json(self) -> dict:
        out = {"software": self.software, "hardware": self.hardware}
        if self.reason:
            out["reason"] = self.reason
        if self.hardware_reason:
            out["hardware_reason"] = self.hardware_reason
        return out


def _paranoid() -> int | None:
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _no_pmu_reason() -> str:
    base = "/sys/bus/event_source/devices"
    try:
        found = set(os.listdir(base))
    except OSError:
        found = set()
    if not found & set(_PMU_DIRS):
        return ("this host has no hardware performance counters (no CPU PMU under "
                f"{base}: a virtual machine without PMU passthrough)")
    return ""


def parse_stat(text: str) -> dict[str, float | None]:
    """`perf stat -x,` output -> {event: value}; None for <not supported>, 0 for <not
    counted> (the watched tasks never ran while the event was on)."""
    out: dict[str, float | None] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(",")
        if len(parts) < 3:
            continue
        raw, event = parts[0], parts[2]
        event = event.split(":")[0].split("/")[-1] if "/" in event else event.split(":")[0]
        if raw.strip() == "<not counted>":
            out[event] = 0.0
            continue
        try:
            out[event] = float(raw)
        except ValueError:
            out[event] = None
    return out


def probe(pids: list[int], server_note: str = "") -> PerfCaps:
    """Try every event on the server's processes for a moment."""
    if not pids:
        return PerfCaps(reason=server_note or "the server's processes are not on this host")
    perf = shutil.which("perf")
    if perf is None:
        return PerfCaps(reason=INSTALL)
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as out:
        try:
            r = subprocess.run([perf, "stat", "-x,", "-e", ",".join(SOFTWARE + HARDWARE),
                                "-p", ",".join(map(str, pids)), "-o", out.name, "--",
                                "sleep", "0.05"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return PerfCaps(reason=f"perf does not run here: {exc}")
        counts = parse_stat(out.read())
    err = (r.stderr or "").strip()
    if r.returncode != 0 or not counts:
        low = err.lower()
        if "not found for kernel" in low or "perf_" in low and "not found" in low:
            return PerfCaps(reason=f"perf for this kernel is not installed "
                                   f"({err.splitlines()[0] if err else 'no perf binary'}; "
                                   f"Debian: apt-get install linux-perf)")
        if "permission" in low or "access" in low or "paranoid" in low:
            level = _paranoid()
            return PerfCaps(reason=f"perf may not watch the server's processes: "
                                   f"perf_event_paranoid is {level} and the agent runs as "
                                   f"uid {os.geteuid()} without CAP_PERFMON (run the agent as "
                                   f"root or lower kernel.perf_event_paranoid)")
        first = err.splitlines()[0] if err else f"exit status {r.returncode}"
        return PerfCaps(reason=f"perf stat failed on the server's processes: {first}")
    caps = PerfCaps(perf=perf, software=all(counts.get(e) is not None for e in SOFTWARE))
    if not caps.software:
        caps.reason = "perf counted no software events on the server's processes"
    caps.hardware = [e for e in HARDWARE if counts.get(e) is not None]
    missing = [e for e in HARDWARE if e not in caps.hardware]
    if missing:
        caps.hardware_reason = _no_pmu_reason() if not caps.hardware else ""
        if not caps.hardware_reason:
            caps.hardware_reason = (f"the CPU's counters do not support "
                                    f"{', '.join(missing)} here")
    return caps


def derive(counts: dict[str, float | None], caps: PerfCaps, seconds: float) -> dict:
    """A phase's `perf` summary: software events, and hardware ones with IPC and MPKI."""
    def get(e):
        return counts.get(e)
    sw = {"task_clock_ms": get("task-clock"), "context_switches": get("context-switches"),
          "cpu_migrations": get("cpu-migrations"), "page_faults": get("page-faults")}
    out: dict = {"seconds": round(seconds, 3), "software": {k: v for k, v in sw.items()
                                                            if v is not None}}
    ins, cyc = get("instructions"), get("cycles")
    hw: dict = {e.replace("-", "_"): get(e) for e in caps.hardware if get(e)} if ins else {}
    if ins:
        if cyc:
            hw["ipc"] = round(ins / cyc, 3)
        for key, event in (("branch_mpki", "branch-misses"), ("l1i_mpki",
                                                              "L1-icache-load-misses"),
                           ("llc_mpki", "LLC-load-misses")):
            if get(event) is not None:
                hw[key] = round(get(event) * 1000.0 / ins, 3)
    if hw:
        out["hardware"] = hw
    if caps.hardware_reason or not hw:
        out["hardware_unavailable"] = caps.hardware_reason or \
            "the hardware events counted nothing in this phase"
    return out


def _dies_with_agent() -> list[str]:
    """A prefix for perf's command line: the kernel ends perf when the agent dies, even by
    SIGKILL, so no perf goes on counting a server's processes for a run that is gone
    (util-linux setpriv sets PR_SET_PDEATHSIG, then runs perf; no preexec_fn, which is not
    safe in the agent's threads). The signal follows the thread that started perf: only the
    agent's main thread, which lives as long as the agent, may ask for it."""
    if threading.current_thread() is not threading.main_thread():
        return []
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


def _launch(argv_of, pids_of, stderr) -> tuple[subprocess.Popen, list[int]]:
    """Start perf on the server's processes; a process that ended between listing and
    attaching makes perf exit at once, so list them again and retry."""
    prefix = _dies_with_agent()
    for attempt in range(4):
        pids = pids_of()
        proc = subprocess.Popen(prefix + argv_of(pids), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=stderr)
        for wait in (0.05, 0.1, 0.15):
            time.sleep(wait)
            if proc.poll() is not None:
                break
        if proc.poll() is None or attempt == 3:
            return proc, pids
    raise AssertionError("unreachable")


def _first_line(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        return ""
    return lines[0] if lines else ""


class PerfStat:
    """`perf stat` on the server's processes from start() until stop()."""

    def __init__(self, caps: PerfCaps, pids_of, workdir: str | None = None):
        self.caps, self.pids_of = caps, pids_of
        self.pids: list[int] = []
        self._dir = tempfile.mkdtemp(prefix="versus-perf-", dir=workdir)
        self._out = os.path.join(self._dir, "stat.csv")
        self._err = os.path.join(self._dir, "stderr")
        self._proc: subprocess.Popen | None = None
        self._t0 = 0.0

    @property
    def source(self) -> str:
        return (f"perf stat -e {','.join(self.caps.events())} -p "
                f"{','.join(map(str, self.pids))} (the server's processes and those they "
                f"start)")

    def start(self) -> None:
        self._t0 = time.monotonic()
        with open(self._err, "wb") as err:
            self._proc, self.pids = _launch(
                lambda pids: [self.caps.perf, "stat", "-x,", "-e", ",".join(self.caps.events()),
                              "-p", ",".join(map(str, pids)), "-o", self._out], self.pids_of,
                err)

    def stop(self) -> dict:
        secs = time.monotonic() - self._t0
        early = ""
        try:
            if self._proc is not None and self._proc.poll() is not None:
                why = _first_line(self._err)
                if self._proc.returncode == 0 and not why:
                    # perf stat -p ends by itself once every process it counts has ended
                    early = ("perf stat ended early: every server process it counted ended "
                             "(the server stopped or restarted in this phase)")
                else:
                    early = (f"perf stat ended early (exit {self._proc.returncode}: "
                             f"{why or 'no reason given'})")
            elif self._proc is not None:
                self._proc.send_signal(signal.SIGINT)
                try:
                    self._proc.wait(15)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(5)
            try:
                with open(self._out) as f:
                    counts = parse_stat(f.read())
            except OSError:
                counts = {}
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
        if early or not any(counts.get(e) is not None for e in SOFTWARE):
            return {"unavailable": early or "perf stat counted nothing in this phase",
                    "source": self.source}
        out = derive(counts, self.caps, secs)
        out["source"] = self.source
        return out


class Profile:
    """`perf record -g` on the server's processes for some seconds, then folded stacks."""

    def __init__(self, caps: PerfCaps, pids_of, seconds: float, call_graph: str = "dwarf",
                 frequency: int = 99, label=lambda tid, comm: comm,
                 workdir: str | None = None):
        self.caps, self.pids_of, self.seconds = caps, pids_of, seconds
        self.pids: list[int] = []
        self.call_graph, self.frequency, self.label = call_graph, frequency, label
        self.event = "cycles" if "cycles" in caps.hardware else "cpu-clock"
        self._dir = tempfile.mkdtemp(prefix="versus-profile-", dir=workdir)
        self._data = os.path.join(self._dir, "perf.data")
        self._proc: subprocess.Popen | None = None
        self._t0 = 0.0

    def argv(self, pids: list[int]) -> list[str]:
        graph = "dwarf,16384" if self.call_graph == "dwarf" else "fp"
        return [self.caps.perf, "record", "-q", "--call-graph", graph, "-F",
                str(self.frequency), "-e", self.event, "-p", ",".join(map(str, pids)),
                "-o", self._data, "--", "sleep", f"{self.seconds:g}"]

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._proc, self.pids = _launch(self.argv, self.pids_of, subprocess.PIPE)

    def finish(self) -> dict:
        """Stop recording if the phase ended first; the `profile` event's body."""
        err = ""
        try:
            if self._proc is not None:
                if self._proc.poll() is None:
                    self._proc.send_signal(signal.SIGINT)
                try:
                    _, err = self._proc.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    _, err = self._proc.communicate()
            secs = min(time.monotonic() - self._t0, self.seconds)
            if not os.path.exists(self._data):
                first = (err or b"").decode(errors="replace").strip().splitlines()
                return {"error": f"perf record wrote no profile: "
                                 f"{first[0] if first else 'no reason given'}"}
            script = subprocess.run([self.caps.perf, "script", "-i", self._data, "-F",
                                     "comm,tid,ip,sym"], capture_output=True, timeout=600)
            stacks = fold(script.stdout.decode(errors="replace"), self.label)
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
        total = sum(stacks.values())
        top = sorted(stacks.items(), key=lambda kv: -kv[1])
        kept, rest = top[:MAX_STACKS], sum(c for _, c in top[MAX_STACKS:])
        if rest:
            kept.append(("[other stacks]", rest))
        return {"seconds": round(secs, 3), "event": self.event, "frequency": self.frequency,
                "call_graph": self.call_graph, "samples": total,
                "stacks": [[s, c] for s, c in kept],
                "source": " ".join(self.argv(self.pids)[:-5]) + f" for {self.seconds:g} s"}


def fold(script: str, label=lambda tid, comm: comm) -> dict[str, int]:
    """`perf script -F comm,tid,ip,sym` output -> {"root;caller;…;leaf": samples}. The root
    frame is label(tid, comm): the process group of the thread when known."""
    stacks: dict[str, int] = {}
    for block in script.split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln.strip()]
        if not lines:
            continue
        head = lines[0].split()
        if len(head) < 2:
            continue
        comm, tid = " ".join(head[:-1]), head[-1]
        frames = []
        for ln in lines[1:]:
            parts = ln.strip().split(None, 1)
            sym = parts[1] if len(parts) > 1 else "[unknown]"
            sym = sym.replace(" (inlined)", "").replace(";", ":")
            frames.append(sym.split("+0x")[0])
        try:
            root = label(int(tid), comm)
        except ValueError:
            root = comm
        key = ";".join([root] + frames[::-1])
        stacks[key] = stacks.get(key, 0) + 1
    return stacks
