"""Profile files: the ones shipped in profiles/<engine>/ and the user's own in
<config>/profiles/<engine>/ (which win over a shipped one of the same name).

A reference to a profile is a path to a .toml file, "engine/name", or a bare name that is
looked up for a given engine.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

import tomli_w

from app.model.profile import ENGINES, Profile, ProfileError
from workloads import profiles as render_mod

from . import paths

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "profiles"


def user_dir() -> Path:
    return paths.config_dir() / "profiles"


def read_profile(path: str | Path) -> Profile:
    """Load and check one profile file; a malformed one raises ProfileError with a sentence."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(f"{p}: no such profile file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{p}: cannot be read ({exc})") from None
    return parse_profile(text, str(p))


def parse_profile(text: str, where: str = "the profile") -> Profile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{where} is not valid TOML ({exc}); a profile is name = \"…\", "
                           f"engine = \"…\", config = '''…''' and optional versions, "
                           f"description, durable") from None
    prof = Profile.from_dict(data, where)
    check_config(prof)
    return prof


def check_config(prof: Profile) -> None:
    """The config text's expressions are valid and, for MySQL/MariaDB, the text is a my.cnf
    fragment a managed server can take."""
    where = prof.path or prof.id
    try:
        render_mod.check(prof.config)
        if prof.engine != "postgres":
            render_mod.cnf_options(prof.config)
    except render_mod.ProfileError as exc:
        raise ProfileError(f"{where}: {exc}") from None


def _dirs() -> list[Path]:
    return [SHIPPED_DIR, user_dir()]


def list_profiles(engine: str | None = None) -> list[Profile]:
    """Every readable profile (user profiles replace shipped ones with the same id), sorted by
    engine and name. Malformed files are skipped here; load them by path to see why."""
    found: dict[str, Profile] = {}
    for d in _dirs():
        for eng in ENGINES if engine is None else (engine,):
            sub = d / eng
            if not sub.is_dir():
                continue
            for f in sorted(sub.glob("*.toml")):
                try:
                    prof = read_profile(f)
                except ProfileError:
                    continue
                if prof.engine == eng:
                    found[prof.id] = prof
    return sorted(found.values(), key=lambda p: (p.engine, p.name))


def broken_profiles() -> list[tuple[Path, str]]:
    """Profile files that cannot be used, with the reason (for a warning in the UI/CLI)."""
    out = []
    for d in _dirs():
        for f in sorted(d.glob("*/*.toml")):
            try:
                read_profile(f)
            except ProfileError as exc:
                out.append((f, str(exc)))
    return out


def load_profile(ref: str, engine: str | None = None) -> Profile:
    """A profile by path, "engine/name", or name (with engine)."""
    ref = ref.strip()
    if ref.endswith(".toml") or os.sep in ref and Path(ref).exists():
        prof = read_profile(Path(ref).expanduser())
        if engine and prof.engine != engine:
            raise ProfileError(f"{ref} is a {prof.engine} profile, not for {engine}")
        return prof
    eng, sep, name = ref.partition("/")
    if not sep:
        eng, name = engine or "", ref
    if eng not in ENGINES:
        raise ProfileError(f"profile {ref!r}: say which engine, e.g. postgres/{ref}")
    if engine and eng != engine:
        raise ProfileError(f"profile {ref!r} is for {eng}, not for {engine}")
    for d in reversed(_dirs()):
        f = d / eng / f"{name}.toml"
        if f.exists():
            return read_profile(f)
    have = ", ".join(p.name for p in list_profiles(eng)) or "none"
    raise ProfileError(f"no {eng} profile named {name!r} (there are: {have})")


def save_profile(prof: Profile, path: str | Path | None = None) -> Path:
    """Write a profile (checked first) to path, or to the user's profiles folder."""
    check_config(prof)
    p = Path(path) if path else user_dir() / prof.engine / f"{prof.name}.toml"
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(tomli_w.dumps(prof.to_dict(), multiline_strings=True), encoding="utf-8")
    os.replace(tmp, p)
    prof.path = str(p)
    return p
