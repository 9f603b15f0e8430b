"""Where Versus keeps its files. VERSUS_HOME, when set, holds everything (tests, portable use)."""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def _home() -> Path | None:
    v = os.environ.get("VERSUS_HOME")
    return Path(v) if v else None


def config_dir() -> Path:
    h = _home()
    p = h / "config" if h else Path(platformdirs.user_config_dir("versus"))
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    return p


def data_dir() -> Path:
    h = _home()
    p = h / "data" if h else Path(platformdirs.user_data_dir("versus"))
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    return p


def sessions_dir() -> Path:
    p = data_dir() / "sessions"
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    return p


def known_hosts_file() -> Path:
    return config_dir() / "known_hosts"


def list_sessions(directory: Path | None = None) -> list[Path]:
    d = directory or sessions_dir()
    files = [p for p in d.glob("*.versus") if p.is_file()]
    return sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)
