"""The one place that touches QSettings: UI state only, behind typed defaults.

Hosts, targets and profiles live in the catalog (TOML files); secrets in the keyring.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from workloads.registry import WORKLOADS

ORGANIZATION = "Versus"
APPLICATION = "Versus"

# key -> default; the default's type is the value's type.
DEFAULTS: dict[str, Any] = {
    "window/geometry": QByteArray(),
    "window/state": QByteArray(),
    "window/main_splitter": QByteArray(),
    "window/run_splitter": QByteArray(),
    "run/host": "local",
    "run/target": "embedded-postgres",
    "run/workload": next(iter(WORKLOADS)),
    "run/perf_counters": False,      # perf stat on the server (costs throughput): when ticked
    "log/max_lines": 5000,
    "ui/theme": "system",            # system | light | dark (slides stay light)
    # what the export dialog was last given, so the next export starts there
    "export/dir": "",
    "export/format": "png",
    "export/size": "1920x1080",
    "export/scale": 1.0,
    "export/mode": "",
    "export/footer": False,
}


class Settings:
    """Typed access to UI settings in an INI file.

    By default ui.ini sits next to hosts.toml and targets.toml (so VERSUS_HOME moves it
    too, and there is one config folder, not two differing by case).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            from app.store.paths import config_dir
            path = config_dir() / "ui.ini"
        self._qs = QSettings(str(path), QSettings.Format.IniFormat)

    def get(self, key: str) -> Any:
        default = DEFAULTS[key]          # an unknown key is a bug: fail loudly
        value = self._qs.value(key, default)
        if isinstance(default, QByteArray):
            return value if isinstance(value, QByteArray) else QByteArray()
        if isinstance(default, bool):
            return value in (True, "true", "1", 1)
        try:
            return type(default)(value)
        except (TypeError, ValueError):
            return default

    def set(self, key: str, value: Any) -> None:
        if key not in DEFAULTS:
            raise KeyError(f"unknown setting {key!r}")
        self._qs.setValue(key, value)

    # Per-workload parameter values: the form remembers what the user typed last.
    def workload_params(self, workload: str) -> dict[str, Any]:
        raw = self._qs.value(f"params/{workload}", "")
        try:
            value = json.loads(raw) if raw else {}
        except (TypeError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def set_workload_params(self, workload: str, values: dict[str, Any]) -> None:
        self._qs.setValue(f"params/{workload}", json.dumps(values))

    def sync(self) -> None:
        self._qs.sync()
