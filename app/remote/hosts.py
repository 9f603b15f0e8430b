"""Resolve a host name or address to a connected Transport."""
from __future__ import annotations

import os
import re

from app.model.config import LOCAL_HOST, HostConfig, address_problem, host_problem, port_problem
from app.store import paths
from app.store.catalog import Catalog

from .errors import RemoteError
from .transport import LocalTransport, Transport

_ADHOC = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?P<addr>\[[^\]]+\]|[^:\s@]+)(?::(?P<port>\d+))?$")


def resolve_host(spec: str, catalog=None) -> HostConfig:
    """`local`, a saved host's name, or `[user@]address[:port]`."""
    spec = (spec or LOCAL_HOST).strip()
    if spec == LOCAL_HOST:
        return HostConfig(name=LOCAL_HOST, address="localhost")
    if catalog is not None:
        saved = catalog.host(spec)
        if saved:
            problem = host_problem(saved)
            if problem:
                raise RemoteError(f"saved host {spec!r}: {problem}")
            return saved
    m = _ADHOC.match(spec)
    if not m:
        raise RemoteError(f"{spec!r} is not a host: use 'local', a saved host's name, or "
                          f"[user@]address[:port]")
    problem = address_problem(m["addr"]) or (port_problem(m["port"]) if m["port"] else "")
    if problem:
        raise RemoteError(problem)
    return HostConfig(name=spec, address=m["addr"].strip("[]"), user=m["user"] or "",
                      port=int(m["port"] or 22), auth="agent")


def open_transport(host: HostConfig, accept_fingerprint: str | None = None,
                   password: str | None = None, key_file: str | None = None) -> Transport:
    if host.is_local:
        return LocalTransport()
    from .ssh import SSHTransport
    if password is None and host.auth == "password":
        from .secrets import get_secret
        password = get_secret("host", host.name)
    key = key_file or (host.key_file if host.auth == "key" else None)
    return SSHTransport.connect(
        host.address, host.port or None, host.user or None,
        key_file=os.path.expanduser(key) if key else None, password=password,
        use_agent=host.auth == "agent" or not key, accept_fingerprint=accept_fingerprint,
        app_known_hosts=paths.known_hosts_file())


def remove_host(catalog: Catalog, name: str) -> None:
    """Forget a saved host and its password in the keyring."""
    from .secrets import delete_secret
    catalog.remove_host(name)
    delete_secret("host", name)


def remove_target(catalog: Catalog, name: str) -> None:
    """Forget a saved target and its database password in the keyring."""
    from .secrets import delete_secret
    catalog.remove_target(name)
    delete_secret("target", name)
