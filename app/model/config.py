"""Hosts and targets as plain data (saved as TOML by app.store.catalog)."""
from __future__ import annotations

import ipaddress
from dataclasses import asdict, dataclass, fields

ENGINES = ("postgres", "mysql", "mariadb")
DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306, "mariadb": 3306}
LOCAL_HOST = "local"
EMBEDDED_TARGET = "embedded-postgres"


def address_problem(address: str) -> str:
    """Why `address` cannot be a host name or IP address, as a sentence; "" when it can.
    (A name's dot-separated parts have 1 to 63 characters, the whole at most 253.)"""
    a = (address or "").strip()
    if a.startswith("[") and a.endswith("]"):
        a = a[1:-1]
    if not a:
        return "the host address is empty; give a host name or an IP address"
    try:
        ipaddress.ip_address(a)
        return ""
    except ValueError:
        pass
    name = a[:-1] if a.endswith(".") else a
    for label in name.split("."):
        if not label:
            return (f"{address!r} is not a valid host name: it has an empty part (two dots in "
                    f"a row, or a dot at the start); check the address")
        try:
            size = len(label.encode("idna"))
        except UnicodeError:
            size = 64
        if size > 63:
            return (f"{address!r} is not a valid host name: the part {label[:20]!r}… is longer "
                    f"than 63 characters, the most a part between dots may have")
        bad = next((c for c in label if not (c.isalnum() or c in "-_")), None)
        if bad is not None:
            return (f"{address!r} is not a valid host name: {bad!r} is not a letter, digit or "
                    f"hyphen; check the address")
    if len(name) > 253:
        return f"{address[:40]!r}… is not a valid host name: longer than 253 characters"
    return ""


def port_problem(port) -> str:
    """Why `port` cannot be a TCP port, as a sentence; "" when it can."""
    try:
        n = int(str(port).strip())
    except ValueError:
        return f"{port!r} is not a port: give a number from 1 to 65535"
    return "" if 1 <= n <= 65535 else f"{n} is not a port: ports are 1 to 65535"


def python_problem(python: str) -> str:
    """Why `python` cannot be the command that runs the agent's Python on a host; "" when it
    can: a path or a name (python3, /opt/py/bin/python3.12), not a shell command line."""
    p = (python or "").strip()
    if p and all(c.isalnum() or c in "/._+-~" for c in p):
        return ""
    return (f"{python!r} is not a Python interpreter: give its name or path (python3, "
            f"/usr/bin/python3.11), without spaces or shell characters")


def host_problem(h: "HostConfig") -> str:
    """Why a host's address, port or Python cannot be what they claim; "" when they can."""
    return address_problem(h.address) or port_problem(h.port) or python_problem(h.python)


@dataclass
class HostConfig:
    name: str
    address: str = ""
    port: int = 22
    user: str = ""
    auth: str = "agent"          # agent | key | password
    key_file: str = ""
    python: str = "python3"

    @property
    def is_local(self) -> bool:
        return self.name == LOCAL_HOST

    @property
    def title(self) -> str:
        if self.is_local:
            return "This computer"
        who = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port != 22 else ""
        return f"{self.name} ({who}{self.address}{port})"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "HostConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class TargetConfig:
    name: str
    host: str = LOCAL_HOST
    engine: str = "postgres"
    address: str = "127.0.0.1"
    port: int = 5432
    user: str = ""
    database: str = ""

    @property
    def is_embedded(self) -> bool:
        return self.name == EMBEDDED_TARGET

    @property
    def title(self) -> str:
        if self.is_embedded:
            return "Embedded PostgreSQL"
        return f"{self.name} ({self.engine} {self.address}:{self.port})"

    def spec(self) -> dict:
        return {"engine": self.engine, "address": self.address, "port": int(self.port),
                "user": self.user, "database": self.database}

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TargetConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


BUILTIN_HOST = HostConfig(name=LOCAL_HOST, address="localhost")
BUILTIN_TARGET = TargetConfig(name=EMBEDDED_TARGET, host=LOCAL_HOST, engine="postgres",
                              address="127.0.0.1", port=0, user="postgres", database="versus")
