"""Declared workload parameters: the GUI turns them into a form, the CLI into --set options."""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence


class ParamError(ValueError):
    """A parameter value a user gave that the workload cannot take."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str                 # "int" | "float" | "bool" | "str" | "choice" | "int-list" |
                              # "choice-list" (lists are kept as normalised text: "100,500")
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    group: str = "run"
    label: str = ""           # the form's label when the name does not read as one

    def parse(self, raw: Any) -> Any:
        """Turn a string (CLI) or a widget value into the declared type, within range."""
        try:
            if self.type == "int":
                value: Any = int(str(raw).strip().replace("_", ""))
            elif self.type == "float":
                value = float(raw)
            elif self.type == "bool":
                s = str(raw).strip().lower()
                if s in ("1", "true", "yes", "on"):
                    value = True
                elif s in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError
            elif self.type == "choice":
                value = str(raw)
                if value not in self.choices:
                    raise ParamError(f"{self.name} must be one of {', '.join(self.choices)}, "
                                     f"not {value!r}")
            elif self.type == "int-list":
                return self._parse_int_list(raw)
            elif self.type == "choice-list":
                return self._parse_choice_list(raw)
            else:
                value = str(raw)
        except ParamError:
            raise
        except (TypeError, ValueError):
            raise ParamError(f"{self.name} takes a {self.type} value, not {raw!r}") from None
        if self.min is not None and value < self.min:
            raise ParamError(f"{self.name} must be at least {_fmt(self.min)}, not {value}")
        if self.max is not None and value > self.max:
            raise ParamError(f"{self.name} must be at most {_fmt(self.max)}, not {value}")
        return value

    def _parse_int_list(self, raw: Any) -> str:
        items = split_list(raw)
        if not items:
            raise ParamError(f"{self.name} takes whole numbers separated by commas, "
                             f"for example {self.default}")
        out = []
        for item in items:
            try:
                n = int(item.replace("_", ""))
            except ValueError:
                raise ParamError(f"{self.name} takes whole numbers separated by commas, "
                                 f"not {item!r}") from None
            if self.min is not None and n < self.min or self.max is not None and n > self.max:
                raise ParamError(f"each {self.name} value must be within {_fmt(self.min)} to "
                                 f"{_fmt(self.max)}, not {n}")
            out.append(str(n))
        return ",".join(dict.fromkeys(out))

    def _parse_choice_list(self, raw: Any) -> str:
        items = split_list(raw)
        bad = [x for x in items if x not in self.choices]
        if bad or not items:
            raise ParamError(f"{self.name} takes some of {', '.join(self.choices)} separated "
                             f"by commas, not {', '.join(bad) or repr(str(raw))}")
        return ",".join(c for c in self.choices if c in items)      # in declared order

    def to_json(self) -> dict[str, Any]:
        d = {"name": self.name, "type": self.type, "default": self.default, "help": self.help,
             "min": self.min, "max": self.max, "unit": self.unit, "group": self.group}
        if self.choices:
            d["choices"] = list(self.choices)
        return d


# Declared once, taken by every workload whose virtual users workloads/engine/driver.py runs.
NATIVE_PARAMS = (
    Param("reconnect", "bool", False,
          "When a virtual user loses its database connection (server restarted, backend "
          "terminated, network error), reconnect with backoff and go on instead of failing "
          "the run. Each outage is recorded (time to reconnect, time until throughput is back "
          "to 95 %, errors by class) and marked on the charts.", label="Reconnect"),
    Param("tolerate-lost-clients", "bool", False, "Go on when a virtual user dies or loses "
          "its database connection: the run then measures fewer clients from that moment, "
          "and its summary and result say which were lost, when and why. Off: such a run "
          "fails with that reason."),
)


def _fmt(x: float | None) -> str:
    if x is None:
        return "…"
    return str(int(x)) if float(x).is_integer() else str(x)


def split_list(value: Any) -> list[str]:
    """The items of a list parameter's text ("100, 500,1000" → ["100", "500", "1000"])."""
    return [x.strip() for x in str(value).replace(";", ",").split(",") if x.strip()]


ROLES = ("load", "warmup", "measured", "step", "check")
METRIC_ROLES = ("result", "check", "detail")


@dataclass(frozen=True)
class PhaseSpec:
    """A phase a workload runs: its name, its role, and how long it is planned to last.

    ``seconds`` and ``when`` are expressions over parameter names (a hyphen in a name reads as
    an underscore): ``"duration"``, ``"rampup"``, ``"warmup > 0"``. Roles: ``load`` builds
    data (no planned length; progress events tell), ``warmup`` runs the load uncounted,
    ``measured`` gives the run's result, ``step`` is one measured step of a suite, ``check``
    verifies the data afterwards.
    """
    name: str
    role: str
    seconds: str = ""
    when: str = ""
    unit: str = ""              # the phase's throughput unit when not the workload's
    group: str = ""             # rows of a suite's matrix are grouped by this title
    help: str = ""              # what the phase does (a suite step: its SQL)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "seconds": self.seconds,
                "when": self.when, "unit": self.unit, "group": self.group,
                "help": self.help}


@dataclass(frozen=True)
class PlannedPhase:
    name: str
    role: str
    seconds: float | None       # None: not known ahead (loads)
    unit: str


@dataclass(frozen=True)
class MetricSpec:
    """A result metric: where its per-phase value is read and where it comes from.

    ``summary`` is a dotted path into the phase's ``summary`` event (``rate``,
    ``result.nopm``, ``counters.queries``); a suffix ``/s`` or ``/min`` divides it by the
    summary's duration in seconds or minutes. ``series`` names the per-interval series that
    charts it (see app.model.derive). ``source`` says where the number comes from; one
    starting with ``@`` is a path into the summary that holds that sentence; ``unit`` may
    be such a path too (``@unit``: the phase's own throughput unit).

    Roles: ``result`` is in the phase's result line; ``check`` is a cross-check printed
    after it; ``detail`` is a per-phase figure for the tables only (compare, the step
    table), not in the result line.
    """
    key: str
    title: str
    unit: str
    summary: str
    series: str = ""
    source: str = ""
    headline: bool = False
    role: str = "result"        # "result" | "check" | "detail" (see above)
    lower_is_better: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "unit": self.unit,
                "summary": self.summary, "series": self.series, "source": self.source,
                "headline": self.headline, "role": self.role,
                "lower_is_better": self.lower_is_better}


@dataclass(frozen=True)
class ChartSpec:
    """A chart a workload adds ahead of the generic ones (latency, CPU, disk …)."""
    name: str
    title: str
    unit: str
    series: tuple[str, ...]
    description: str = ""
    labels: tuple[str, ...] = ()        # legend text per series; default: the series key

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "unit": self.unit,
                "series": list(self.series), "labels": list(self.labels),
                "description": self.description}


@dataclass(frozen=True)
class WorkloadSpec:
    """Everything the app knows about a workload; it knows none by name.

    ``phases`` are declared; a suite whose phases depend on its parameters gives
    ``phase_plan(values) -> [PhaseSpec]`` instead (``phases`` then lists them all).
    ``validate(values)`` refuses values no single parameter can judge (raises ParamError),
    so a bad run is refused before anything starts.
    ``op_count`` is the path into a phase summary of the operations hardware costs are
    divided by (CPU µs per operation …).

    ``step_table`` names metric keys (the generic ones such as ``eff.cpu_us``,
    ``latency.p99``, or the workload's own) that form a table with one row per phase, as a
    suite's published results show it (the insert benchmark's per-step table); the
    saved-run view, ``show`` and exports print it.

    A phase summary may carry ``flags``: ``[{"name": "missed SLA", "detail": sentence,
    "severity": "warn" | "fail"}]``, conditions every view prints beside the result (a
    step that missed its target rate; a failed consistency check).
    """
    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    dialects: tuple[str, ...]           # "postgres", "mysql" (mysql covers MariaDB)
    phases: tuple[PhaseSpec, ...]
    metrics: tuple[MetricSpec, ...]
    charts: tuple[ChartSpec, ...] = ()
    throughput_unit: str = "QPS"        # the unit of sample.rate in measured phases
    op_count: str = "ops_total"
    op_name: str = "op"                 # "query", "transaction", "transfer": per-op labels
    runner: str = ""                    # "module:function" run inside the agent
    importer: str = ""                  # "module:function" reading the tool's own logs
    # "module:function"(values) -> None, or the sentence saying why the workload cannot run
    # on this host (an external tool that is not installed)
    probe: str = ""
    # "module:function"(TargetInfo) -> {"ok": bool, "lines": [sentences], …}: a consistency
    # check of the workload's data that `versus check NAME TARGET` runs on the host
    checker: str = ""
    # parameters for a run of a few seconds on a tiny data set (the contract test, demos);
    # the measured phase's length is set apart from these
    quick: dict[str, Any] = field(default_factory=dict)
    # what a virtual user's "home" in the phase start event is: (column title, tooltip)
    vu_home: tuple[str, str] = ("Home", "Where this user's operations start from")
    phase_plan: Callable[[dict[str, Any]], Sequence[PhaseSpec]] | None = None
    # checks the resolved values as a whole (a list parameter's items …): raises ParamError
    validate: Callable[[dict[str, Any]], None] | None = None
    step_table: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    # perf stat on the server's processes unless the run says otherwise: off by default,
    # since counting every context switch of the server costs throughput (up to 10 % at
    # 30,000 point queries per second: bench/micro.py --perf-cost); on where it is the point
    perf_stat: bool = False
    # its virtual users are workloads/engine/driver.py's: it takes NATIVE_PARAMS (reconnect,
    # tolerate-lost-clients), appended to its own
    native: bool = False

    def __post_init__(self) -> None:
        if self.native:        # (once: dataclasses.replace runs this again)
            have = {p.name for p in self.params}
            object.__setattr__(self, "params", (*self.params, *(
                p for p in NATIVE_PARAMS if p.name not in have)))
        for ph in self.phases:
            if ph.role not in ROLES:
                raise ValueError(f"{self.name}: phase {ph.name} has role {ph.role!r}, "
                                 f"not one of {', '.join(ROLES)}")
        for m in self.metrics:
            if m.role not in METRIC_ROLES:
                raise ValueError(f"{self.name}: metric {m.key} has role {m.role!r}, "
                                 f"not one of {', '.join(METRIC_ROLES)}")
        heads = [m.key for m in self.metrics if m.headline]
        if len(heads) != 1:
            raise ValueError(f"{self.name}: declare exactly one headline metric, not {heads}")

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParamError(f"workload {self.name} has no parameter {name!r}; it has "
                         f"{', '.join(p.name for p in self.params)}")

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with parsed, range-checked values; unknown names fail loudly."""
        values = self.defaults()
        for key, raw in given.items():
            values[key] = self.param(key).parse(raw)
        if self.validate is not None:
            self.validate(values)
        return values

    # --- phases --------------------------------------------------------------------------
    def phase_specs(self, values: dict[str, Any] | None = None) -> list[PhaseSpec]:
        """The phases a run with these parameters goes through, in order."""
        v = self.defaults() if values is None else {**self.defaults(), **values}
        specs = list(self.phase_plan(v)) if self.phase_plan else list(self.phases)
        return [ph for ph in specs if not ph.when or evaluate(ph.when, v)]

    def planned_phases(self, values: dict[str, Any] | None = None) -> list[PlannedPhase]:
        v = self.defaults() if values is None else {**self.defaults(), **values}
        out = []
        for ph in self.phase_specs(v):
            secs = float(evaluate(ph.seconds, v)) if ph.seconds else None
            out.append(PlannedPhase(ph.name, ph.role, secs if secs and secs > 0 else None,
                                    ph.unit or (self.throughput_unit
                                                if ph.role in ("warmup", "measured", "step")
                                                else "")))
        return out

    def planned_seconds(self, values: dict[str, Any] | None = None) -> float:
        """Seconds of the phases whose length is known (loads are not)."""
        return sum(p.seconds or 0.0 for p in self.planned_phases(values))

    def phase(self, name: str, values: dict[str, Any] | None = None) -> PhaseSpec | None:
        """The phase called ``name`` in a run with these parameters (default: the
        defaults; a suite's plan may name phases after its parameters, as qr200)."""
        if self.phase_plan:
            v = self.defaults() if values is None else {**self.defaults(), **values}
            try:
                plan = list(self.phase_plan(v))
            except (ValueError, TypeError, KeyError):
                plan = []
            for ph in plan:
                if ph.name == name:
                    return ph
        return next((ph for ph in self.phases if ph.name == name), None)

    def phase_role(self, name: str, values: dict[str, Any] | None = None) -> str | None:
        ph = self.phase(name, values)
        return ph.role if ph else None

    def seconds_param(self, role: str) -> str | None:
        """The parameter that sets the length of the first phase with this role, when it is
        one plain parameter (what `versus run --duration/--warmup` set)."""
        for ph in self.phases:
            if ph.role == role and ph.seconds:
                name = ph.seconds.strip().replace("_", "-")
                if any(p.name == name for p in self.params):
                    return name
        return None

    # --- results -------------------------------------------------------------------------
    @property
    def headline(self) -> MetricSpec:
        return next(m for m in self.metrics if m.headline)

    def metric(self, key: str) -> MetricSpec | None:
        return next((m for m in self.metrics if m.key == key), None)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "description": self.description,
                "dialects": list(self.dialects),
                "phases": [p.to_json() for p in self.phase_specs()],
                "metrics": [m.to_json() for m in self.metrics],
                "charts": [c.to_json() for c in self.charts],
                "throughput_unit": self.throughput_unit, "op_count": self.op_count,
                "step_table": list(self.step_table),
                "params": [p.to_json() for p in self.params]}


# --- parameter expressions -------------------------------------------------------------------
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_CMPOPS = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt,
           ast.LtE: operator.le, ast.Eq: operator.eq, ast.NotEq: operator.ne}


def evaluate(expr: str, values: dict[str, Any]) -> Any:
    """Evaluate a phase expression: parameter names, numbers, strings, + - * / // %,
    comparisons, and/or/not, ``a if c else b``, ``x in (…)``. Nothing else is allowed."""
    names = {k.replace("-", "_"): v for k, v in values.items()}
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ValueError(f"bad phase expression {expr!r}") from None

    def ev(n: ast.AST) -> Any:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in names:
                raise ValueError(f"phase expression {expr!r} names {n.id!r}, not a parameter")
            return names[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return not ev(n.operand)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BoolOp):
            vals = [ev(x) for x in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.IfExp):
            return ev(n.body) if ev(n.test) else ev(n.orelse)
        if isinstance(n, ast.Tuple):
            return tuple(ev(x) for x in n.elts)
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            op, right = n.ops[0], ev(n.comparators[0])
            left = ev(n.left)
            if isinstance(op, ast.In):
                return left in right
            if isinstance(op, ast.NotIn):
                return left not in right
            if type(op) in _CMPOPS:
                return _CMPOPS[type(op)](left, right)
        raise ValueError(f"phase expression {expr!r}: {type(n).__name__} is not allowed")

    return ev(tree)
