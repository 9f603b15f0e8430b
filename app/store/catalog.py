"""Saved hosts and targets: hosts.toml and targets.toml in the config directory.

Plain files a user can read, diff and share; passwords never go here (see remote.secrets).
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

import tomli_w

from app.model.config import (BUILTIN_HOST, BUILTIN_TARGET, ENGINES, EMBEDDED_TARGET,
                              LOCAL_HOST, HostConfig, TargetConfig, host_problem)

from . import paths


class CatalogError(Exception):
    pass


def _valid_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 64 or any(c in name for c in "\n\r\t/\\\"'"):
        raise CatalogError(f"{name!r} cannot be a name: use up to 64 letters, digits, "
                           f"spaces, dots or dashes")
    return name


class Catalog:
    def __init__(self, config_dir: Path | None = None):
        self.dir = Path(config_dir) if config_dir else paths.config_dir()
        self.dir.mkdir(parents=True, exist_ok=True)

    def _load(self, fname: str) -> dict:
        p = self.dir / fname
        if not p.exists():
            return {}
        try:
            return tomllib.loads(p.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CatalogError(f"{p} is not valid TOML ({exc}); fix or remove it") from None

    def _save(self, fname: str, data: dict) -> None:
        p = self.dir / fname
        tmp = p.with_suffix(".tmp")
        tmp.write_text(tomli_w.dumps(data))
        os.replace(tmp, p)

    # --- hosts --------------------------------------------------------------------------
    def hosts(self) -> list[HostConfig]:
        saved = self._load("hosts.toml").get("hosts", {})
        return [BUILTIN_HOST] + [HostConfig.from_dict({**v, "name": k}) for k, v in saved.items()]

    def host(self, name: str) -> HostConfig | None:
        return next((h for h in self.hosts() if h.name == name), None)

    def save_host(self, h: HostConfig) -> None:
        name = _valid_name(h.name)
        problem = host_problem(h)
        if problem:
            raise CatalogError(problem)
        if name == LOCAL_HOST:
            raise CatalogError("'local' is this computer and cannot be redefined")
        if not h.address.strip():
            raise CatalogError("a host needs an address")
        data = self._load("hosts.toml")
        d = h.to_dict(); d.pop("name")
        data.setdefault("hosts", {})[name] = d
        self._save("hosts.toml", data)

    def remove_host(self, name: str) -> None:
        data = self._load("hosts.toml")
        data.get("hosts", {}).pop(name, None)
        self._save("hosts.toml", data)

    # --- targets ------------------------------------------------------------------------
    def targets(self) -> list[TargetConfig]:
        saved = self._load("targets.toml").get("targets", {})
        return [BUILTIN_TARGET] + [TargetConfig.from_dict({**v, "name": k})
                                   for k, v in saved.items()]

    def target(self, name: str) -> TargetConfig | None:
        return next((t for t in self.targets() if t.name == name), None)

    def save_target(self, t: TargetConfig) -> None:
        name = _valid_name(t.name)
        if name == EMBEDDED_TARGET:
            raise CatalogError("'embedded-postgres' is built in and cannot be redefined")
        if t.engine not in ENGINES:
            raise CatalogError(f"engine must be one of {', '.join(ENGINES)}")
        if not (0 < int(t.port) < 65536):
            raise CatalogError("the port must be between 1 and 65535")
        data = self._load("targets.toml")
        d = t.to_dict(); d.pop("name")
        data.setdefault("targets", {})[name] = d
        self._save("targets.toml", data)

    def remove_target(self, name: str) -> None:
        data = self._load("targets.toml")
        data.get("targets", {}).pop(name, None)
        self._save("targets.toml", data)
