"""Plans: a list or a matrix of runs (targets x profiles x parameter values) executed one
after another on one host. Plain data; parsed from the TOML a user saves and shares:

    name = "PostgreSQL 15 vs 18"
    workload = "point-query"
    host = "local"                 # optional; `versus plan run --host` overrides
    pause = 10                     # seconds between runs
    stop_on_failure = false
    perf = false                   # perf stat on the server in every run (costs throughput)
    profiles = ["defaults", "bench"]   # per target engine: profiles/<engine>/<name>.toml
    repeat = 3                     # every run 3 times, in rounds: A B A B A B
    order = "interleaved"          # or "shuffled": each round in its own random order
    seed = 1                       # the shuffle's seed (the same plan, the same order)

    [params]                       # the same for every run
    duration = 60
    table-size = 100000

    [matrix]                       # one run per combination
    clients = [1, 4, 16]

    [[targets]]
    name = "pg15"
    managed = "/usr/lib/postgresql/15/bin"   # a managed instance from this install
    keep_datadir = false
    workdir = "/var/lib/versus/managed"      # optional: where its data directories go

    [[targets]]
    name = "shared-pg"
    target = "postgresql://postgres@127.0.0.1:5432/postgres"   # or a saved target's name

    [[runs]]                       # optional: an explicit list instead of the matrix
    target = "pg15"
    profile = "bench"
    params = { clients = 4 }

(Top-level keys come before the first [table], as TOML requires.)
"""
from __future__ import annotations

import itertools
import random
import tomllib
from dataclasses import dataclass, field
from typing import Any

RUN_STATES = ("waiting", "loading", "running", "done", "failed", "skipped")
FINAL_STATES = ("done", "failed", "skipped")
DEFAULT_OVERHEAD_S = 20.0     # start, load, stop of one run until a finished run tells us
ORDERS = ("interleaved", "shuffled")
MAX_REPEAT = 100


class PlanError(ValueError):
    """A plan that cannot be run, said as a sentence."""


@dataclass
class PlanTarget:
    name: str
    managed: str = ""             # install dir on the host: a managed instance
    target: str = ""              # an existing target: saved name or URL
    engine: str = ""              # optional for managed (read from the binaries)
    keep_datadir: bool = False
    workdir: str = ""

    @property
    def is_managed(self) -> bool:
        return bool(self.managed)


@dataclass
class PlannedRun:
    index: int
    target: str                   # PlanTarget.name
    profile: str                  # profile reference ("" = none)
    params: dict[str, Any]
    vary: dict[str, Any] = field(default_factory=dict)   # the values this run varies
    config: int = 0               # which configuration (target, profile, values) it runs
    round: int = 1                # its repeat of that configuration, 1 … repeat
    repeats: int = 1

    @property
    def label(self) -> str:
        parts = [self.target]
        if self.profile:
            parts.append(self.profile)
        parts += [f"{k}={v}" for k, v in self.vary.items()]
        text = " / ".join(parts)
        return f"{text} #{self.round}" if self.repeats > 1 else text


@dataclass
class Plan:
    name: str
    workload: str
    targets: list[PlanTarget]
    profiles: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    matrix: dict[str, list[Any]] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)
    host: str = ""
    pause_s: float = 0.0
    stop_on_failure: bool = False
    perf: bool = False            # perf stat on the server's processes in every run
    repeat: int = 1               # runs of every configuration, in rounds
    order: str = "interleaved"    # a round's order: the plan's ("interleaved") or "shuffled"
    seed: int = 0                 # the shuffle's seed

    def target(self, name: str) -> PlanTarget:
        for t in self.targets:
            if t.name == name:
                return t
        raise PlanError(f"the plan has no target named {name!r} (it has "
                        f"{', '.join(t.name for t in self.targets)})")

    def configurations(self) -> list[PlannedRun]:
        """Each configuration once, in the plan's order: the explicit list, else targets x
        profiles x matrix values. A run's params are the plan's params overlaid with its own
        (matrix) values."""
        out: list[PlannedRun] = []
        if self.runs:
            for r in self.runs:
                self.target(r["target"])
                out.append(PlannedRun(len(out), r["target"], r.get("profile", ""),
                                      {**self.params, **r.get("params", {})},
                                      dict(r.get("params", {})), len(out)))
            return out
        keys = list(self.matrix)
        combos = list(itertools.product(*(self.matrix[k] for k in keys))) if keys else [()]
        for t in self.targets:
            for prof in self.profiles or [""]:
                for combo in combos:
                    vary = dict(zip(keys, combo))
                    out.append(PlannedRun(len(out), t.name, prof, {**self.params, **vary},
                                          vary, len(out)))
        return out

    def expand(self) -> list[PlannedRun]:
        """Every run in order. With repeat = N, N rounds of every configuration: A B A B …
        (interleaved), or each round in its own order drawn from the seed (shuffled), so
        drift on the host falls on every configuration alike."""
        configs = self.configurations()
        if self.repeat <= 1:
            return configs
        rng = random.Random(self.seed)
        out: list[PlannedRun] = []
        for rnd in range(1, self.repeat + 1):
            block = list(configs)
            if self.order == "shuffled":
                rng.shuffle(block)
            for c in block:
                out.append(PlannedRun(len(out), c.target, c.profile, dict(c.params),
                                      dict(c.vary), c.config, rnd, self.repeat))
        return out

    def varying(self) -> list[str]:
        """The matrix keys (what a run's label should show besides target and profile)."""
        return list(self.matrix)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"name": self.name, "workload": self.workload}
        if self.host:
            d["host"] = self.host
        if self.pause_s:
            d["pause"] = self.pause_s
        d["stop_on_failure"] = self.stop_on_failure
        if self.perf:
            d["perf"] = True
        if self.repeat > 1:
            d["repeat"] = self.repeat
            d["order"] = self.order
            if self.order == "shuffled":
                d["seed"] = self.seed
        if self.profiles:
            d["profiles"] = list(self.profiles)
        if self.params:
            d["params"] = dict(self.params)
        if self.matrix:
            d["matrix"] = {k: list(v) for k, v in self.matrix.items()}
        d["targets"] = []
        for t in self.targets:
            td: dict[str, Any] = {"name": t.name}
            if t.managed:
                td["managed"] = t.managed
                td["keep_datadir"] = t.keep_datadir
                if t.workdir:
                    td["workdir"] = t.workdir
            else:
                td["target"] = t.target
            if t.engine:
                td["engine"] = t.engine
            d["targets"].append(td)
        if self.runs:
            d["runs"] = [dict(r) for r in self.runs]
        return d


_TOP = {"name", "workload", "host", "pause", "stop_on_failure", "perf", "profiles", "params",
        "matrix", "targets", "runs", "repeat", "order", "seed"}
_TARGET = {"name", "managed", "target", "engine", "keep_datadir", "workdir"}


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


def plan_from_dict(d: dict, where: str = "the plan") -> Plan:
    unknown = set(d) - _TOP
    if unknown:
        raise PlanError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; a plan has "
                        f"{', '.join(sorted(_TOP))}")
    if not isinstance(d.get("workload"), str) or not d["workload"]:
        raise PlanError(f"{where}: say which workload to run: workload = \"point-query\"")
    targets = d.get("targets")
    if not isinstance(targets, list) or not targets:
        raise PlanError(f"{where}: a plan needs at least one [[targets]] entry with a name and "
                        f"either managed = \"/path/to/install\" or target = \"URL or saved name\"")
    pts: list[PlanTarget] = []
    for i, t in enumerate(targets, 1):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not t["name"]:
            raise PlanError(f"{where}: target {i} needs a name")
        bad = set(t) - _TARGET
        if bad:
            raise PlanError(f"{where}: target {t['name']!r} has unknown key(s) "
                            f"{', '.join(sorted(bad))}")
        if bool(t.get("managed")) == bool(t.get("target")):
            raise PlanError(f"{where}: target {t['name']!r} needs exactly one of managed = "
                            f"\"/path/to/install\" or target = \"URL or saved name\"")
        if any(p.name == t["name"] for p in pts):
            raise PlanError(f"{where}: two targets are named {t['name']!r}")
        pts.append(PlanTarget(name=t["name"], managed=str(t.get("managed", "")),
                              target=str(t.get("target", "")), engine=str(t.get("engine", "")),
                              keep_datadir=bool(t.get("keep_datadir", False)),
                              workdir=str(t.get("workdir", ""))))
    profiles = d.get("profiles", [])
    if isinstance(profiles, str):
        profiles = [profiles]
    if not isinstance(profiles, list) or not all(isinstance(p, str) for p in profiles):
        raise PlanError(f"{where}: profiles is a list of profile names, e.g. "
                        f"[\"defaults\", \"bench\"]")
    params = d.get("params", {})
    if not isinstance(params, dict) or not all(_scalar(v) for v in params.values()):
        raise PlanError(f"{where}: [params] holds one value per parameter")
    matrix = d.get("matrix", {})
    if not isinstance(matrix, dict):
        raise PlanError(f"{where}: [matrix] maps a parameter to a list of values")
    for k, v in matrix.items():
        if not isinstance(v, list) or not v or not all(_scalar(x) for x in v):
            raise PlanError(f"{where}: matrix.{k} must be a non-empty list of values, e.g. "
                            f"{k} = [1, 4, 16]")
    runs = d.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(r, dict) and isinstance(
            r.get("target"), str) for r in runs):
        raise PlanError(f"{where}: each [[runs]] entry needs target = \"name\" and may have "
                        f"profile and params")
    pause = d.get("pause", 0)
    if isinstance(pause, bool) or not isinstance(pause, (int, float)) or pause < 0:
        raise PlanError(f"{where}: pause is a number of seconds (0 or more)")
    if not isinstance(d.get("perf", False), bool):
        raise PlanError(f"{where}: perf is true or false (perf stat on the server in every run)")
    repeat = d.get("repeat", 1)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
        raise PlanError(f"{where}: repeat is how many times each run is made, 1 to "
                        f"{MAX_REPEAT} (3 or more give each figure a confidence interval)")
    order = d.get("order", "interleaved")
    if order not in ORDERS:
        raise PlanError(f"{where}: order is \"interleaved\" (A B A B …) or \"shuffled\" (each "
                        f"round in a random order drawn from seed), not {order!r}")
    seed = d.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise PlanError(f"{where}: seed is a whole number (the shuffled order's seed)")
    plan = Plan(name=str(d.get("name") or "plan"), workload=d["workload"], targets=pts,
                profiles=profiles, params=dict(params), matrix=dict(matrix), runs=runs,
                host=str(d.get("host", "")), pause_s=float(pause),
                stop_on_failure=bool(d.get("stop_on_failure", False)),
                perf=bool(d.get("perf", False)), repeat=repeat, order=order, seed=seed)
    plan.expand()        # an explicit run naming an unknown target fails here
    return plan


def parse_plan(text: str, where: str = "the plan") -> Plan:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{where} is not valid TOML ({exc})") from None
    return plan_from_dict(data, where)


# --- the state of a plan on the host --------------------------------------------------------

@dataclass
class RunState:
    run_id: str
    state: str
    label: str = ""
    planned_s: float | None = None
    started: float | None = None
    ended: float | None = None
    status: str | None = None
    reason: str = ""
    phase: str | None = None


@dataclass
class PlanState:
    plan_id: str
    state: str                    # starting | running | done | failed | cancelled | died
    runs: list[RunState]          # in the current order
    name: str = ""
    pause_s: float = 0.0
    now: float = 0.0

    @classmethod
    def from_json(cls, d: dict) -> "PlanState":
        runs = []
        for rid in d.get("order", []):
            r = d.get("runs", {}).get(rid, {})
            runs.append(RunState(rid, r.get("state", "waiting"), r.get("label", ""),
                                 r.get("planned_s"), r.get("started"), r.get("ended"),
                                 r.get("status"), r.get("reason", ""), r.get("phase")))
        return cls(d.get("plan_id", ""), d.get("state", ""), runs, d.get("name", ""),
                   float(d.get("pause_s") or 0), float(d.get("now") or 0))

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed", "cancelled", "died")

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in RUN_STATES}
        for r in self.runs:
            out[r.state] = out.get(r.state, 0) + 1
        return out

    def estimated_ends(self, now: float | None = None) -> dict[str, float]:
        """Epoch seconds when each run still to end should end (run_id -> time), in order:
        each run's planned seconds plus the mean overhead (start, load, stop) measured on the
        finished runs, plus the pauses."""
        now = now if now is not None else self.now
        overheads = [(r.ended - r.started) - (r.planned_s or 0) for r in self.runs
                     if r.state == "done" and r.started and r.ended]
        over = max(0.0, sum(overheads) / len(overheads)) if overheads else DEFAULT_OVERHEAD_S
        left, out = 0.0, {}
        for r in self.runs:
            if r.state in ("loading", "running") and r.started:
                left += max(0.0, r.started + (r.planned_s or 0) + over - now)
                out[r.run_id] = now + left
            elif r.state == "waiting":
                left += (r.planned_s or 0) + over + self.pause_s
                out[r.run_id] = now + left
        return out

    def estimated_finish(self, now: float | None = None) -> float | None:
        """Epoch seconds when the last waiting run should end (see estimated_ends). None
        when nothing is left."""
        ends = self.estimated_ends(now)
        return max(ends.values()) if ends and not self.finished else None
