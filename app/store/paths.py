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


def new_file_problem(path: Path) -> str:
    """Why a file cannot be created or appended at `path`, as a sentence; "" when it can.
    Checked before anything starts, so a bad --out never costs a run."""
    path = Path(path)
    name = path.name
    if len(os.fsencode(name)) > 255:
        return (f"the file name {name[:40]}… is {len(os.fsencode(name))} bytes long; file "
                f"names may have at most 255: choose a shorter name")
    try:
        if path.is_dir():
            return f"{path} is a folder; give a file name"
        if path.exists():
            return "" if os.access(path, os.W_OK) else \
                f"cannot write {path}: permission denied (choose a file you can write)"
    except OSError as exc:
        return f"cannot use {path}: {exc.strerror or exc}"
    # the nearest existing folder on the way must be a folder we may write in
    parent = path.parent
    while True:
        try:
            if parent.exists():
                break
        except OSError as exc:
            return f"cannot use {path}: {exc.strerror or exc}"
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot create {path}: {parent} is a file, not a folder"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot create {path}: permission denied in {parent} (choose a folder you " \
               f"can write to)"
    for part in path.relative_to(parent).parts[:-1]:
        if len(os.fsencode(part)) > 255:
            return f"cannot create {path}: the folder name {part[:40]}… is longer than 255 bytes"
    return ""
