"""Server profiles as plain data: a configuration text (a postgresql.conf or my.cnf fragment
that may hold {{ expressions }} over the host and the run) plus its metadata.

On disk (profiles/<engine>/<name>.toml, see app.store.profiles):

    name = "bench"
    engine = "postgres"
    versions = ">=12, <19"       # which server versions it applies to ("" = all)
    description = "..."
    durable = true               # optional: crash safe (fsync / flush at commit) or not
    config = '''
    shared_buffers = {{ ram_mb * 0.25 | int }}MB
    '''
"""
from __future__ import annotations

import re
from dataclasses import dataclass

ENGINES = ("postgres", "mysql", "mariadb")
_CONSTRAINT = re.compile(r"^(>=|<=|==|=|>|<)?\s*(\d+(?:\.\d+){0,2})$")


class ProfileError(ValueError):
    """A profile that cannot be used, said as a sentence."""


def version_tuple(text: str) -> tuple[int, ...]:
    """'15.20 (Debian …)' -> (15, 20); 'PostgreSQL 18.6 on …' -> (18, 6); '' -> ()."""
    m = re.search(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", text or "")
    return tuple(int(g) for g in m.groups() if g is not None) if m else ()


def parse_versions(spec: str) -> list[tuple[str, tuple[int, ...]]]:
    """'>=12, <19' -> [('>=', (12,)), ('<', (19,))]; raises ProfileError for anything else."""
    out = []
    for part in (spec or "").split(","):
        part = part.strip()
        if not part:
            continue
        m = _CONSTRAINT.match(part)
        if not m:
            raise ProfileError(f"versions: {part!r} is not a version constraint; write "
                               f"for example \">=12\", \">=10.6, <11\" or \"8.0\"")
        out.append((m.group(1) or "==", tuple(int(x) for x in m.group(2).split("."))))
    return out


def _cmp(have: tuple[int, ...], op: str, want: tuple[int, ...]) -> bool:
    h = have[:len(want)] if op in ("==", "=") else have + (0,) * (len(want) - len(have))
    w = want
    return {"==": h == w, "=": h == w, ">=": h >= w, "<=": h[:len(w)] <= w, ">": h > w,
            "<": h < w}[op]


@dataclass
class Profile:
    name: str
    engine: str
    config: str
    versions: str = ""
    description: str = ""
    durable: bool | None = None
    path: str = ""               # where it was read from ("" for a new one)

    @property
    def id(self) -> str:
        return f"{self.engine}/{self.name}"

    @property
    def config_format(self) -> str:
        return "postgresql.conf" if self.engine == "postgres" else "my.cnf"

    def applies_to(self, version: str) -> bool:
        """Whether a server of this version (any text holding a version number) may use it."""
        have = version_tuple(version)
        if not have:
            return True
        return all(_cmp(have, op, want) for op, want in parse_versions(self.versions))

    def to_dict(self) -> dict:
        d = {"name": self.name, "engine": self.engine, "versions": self.versions,
             "description": self.description}
        if self.durable is not None:
            d["durable"] = self.durable
        d["config"] = self.config
        return d

    @classmethod
    def from_dict(cls, d: dict, path: str = "") -> "Profile":
        where = path or "the profile"
        if not isinstance(d, dict):
            raise ProfileError(f"{where}: a profile is a table of keys")
        for key in ("name", "engine", "config"):
            if key not in d:
                raise ProfileError(f"{where}: the key {key!r} is missing (a profile needs name, "
                                   f"engine and config)")
        for key in ("name", "engine", "config", "versions", "description"):
            if key in d and not isinstance(d[key], str):
                raise ProfileError(f"{where}: {key!r} must be a string")
        if "durable" in d and not isinstance(d["durable"], bool):
            raise ProfileError(f"{where}: 'durable' must be true or false")
        unknown = set(d) - {"name", "engine", "config", "versions", "description", "durable"}
        if unknown:
            raise ProfileError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; a profile "
                               f"has name, engine, versions, description, durable and config")
        name = d["name"].strip()
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
            raise ProfileError(f"{where}: the name {name!r} must be letters, digits, dots, "
                               f"dashes or underscores (up to 64)")
        if d["engine"] not in ENGINES:
            raise ProfileError(f"{where}: engine must be one of {', '.join(ENGINES)}, "
                               f"not {d['engine']!r}")
        try:
            parse_versions(d.get("versions", ""))
        except ProfileError as exc:
            raise ProfileError(f"{where}: {exc}") from None
        return cls(name=name, engine=d["engine"], config=d["config"],
                   versions=d.get("versions", ""), description=d.get("description", ""),
                   durable=d.get("durable"), path=path)
