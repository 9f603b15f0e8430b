"""Hosts and targets as plain data (saved as TOML by app.store.catalog)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

ENGINES = ("postgres", "mysql", "mariadb")
DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306, "mariadb": 3306}
LOCAL_HOST = "local"
EMBEDDED_TARGET = "embedded-postgres"


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
