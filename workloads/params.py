"""Declared workload parameters: the GUI turns them into a form, the CLI into --set options."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ParamError(ValueError):
    """A parameter value a user gave that the workload cannot take."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str                 # "int" | "float" | "bool" | "str" | "choice"
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

    def to_json(self) -> dict[str, Any]:
        d = {"name": self.name, "type": self.type, "default": self.default, "help": self.help,
             "min": self.min, "max": self.max, "unit": self.unit, "group": self.group}
        if self.choices:
            d["choices"] = list(self.choices)
        return d


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    dialects: tuple[str, ...]           # "postgres", "mysql" (mysql covers MariaDB)
    phases: tuple[str, ...]
    throughput_unit: str = "QPS"
    runner: str = ""                    # "module:function" run inside the agent
    extra: dict[str, Any] = field(default_factory=dict)

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
        return values

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "description": self.description,
                "dialects": list(self.dialects), "phases": list(self.phases),
                "throughput_unit": self.throughput_unit,
                "params": [p.to_json() for p in self.params]}
