"""SSH hosts on paramiko: the `Transport` interface over one authenticated connection.

Host keys are checked against the user's known_hosts files and the app's own
known_hosts; an unknown key is refused (`UnknownHostKey`, carrying the fingerprint to
show) until the caller passes that exact fingerprint back as `accept_fingerprint`. A
changed key is always refused. Every word of a command is quoted with `shlex.join`, so
the remote login shell must be POSIX-like (sh, bash, dash, zsh, ksh).
"""
from __future__ import annotations

import base64
import errno
import getpass
import hashlib
import logging
import os
import posixpath
import re
import shlex
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Iterator

import paramiko
from paramiko.ssh_exception import NoValidConnectionsError

from .errors import (AuthFailed, ChannelLost, HostKeyMismatch, RemoteError, UnknownHostKey,
                     Unreachable)
from .transport import Completed, Stream, Transport

log = logging.getLogger(__name__)
# paramiko logs a dropped handshake with its traceback; the typed error says it in a sentence
logging.getLogger("paramiko").addHandler(logging.NullHandler())

DEFAULT_SSH_CONFIG = Path("~/.ssh/config")
DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")

# how often blocking reads wake up to notice a dead link or a deadline
_POLL = 0.2
_known_hosts_lock = threading.Lock()


class CommandTimedOut(RemoteError, TimeoutError):
    """A remote command outlived the timeout given to `run`."""


def app_known_hosts_path() -> Path:
    """The app's own known_hosts, next to its other config files."""
    from platformdirs import user_config_dir
    return Path(user_config_dir("versus")) / "known_hosts"


def fingerprint(pkey: paramiko.PKey) -> str:
    """The key's SHA256 fingerprint as OpenSSH prints it: 'SHA256:' + unpadded base64."""
    digest = hashlib.sha256(pkey.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def _normalise_fingerprint(fp: str | None) -> str | None:
    if not fp:
        return None
    fp = fp.strip().rstrip("=")
    return fp if fp.startswith("SHA256:") else "SHA256:" + fp


def known_hosts_name(host: str, port: int) -> str:
    """The name OpenSSH files a host under: 'host' on port 22, '[host]:port' otherwise."""
    return host if port == 22 else f"[{host}]:{port}"


def remember_host_key(path: Path, host: str, port: int, key: paramiko.PKey) -> None:
    """Append host's key to a known_hosts file atomically (temp file + os.replace)."""
    path = Path(path).expanduser()
    line = f"{known_hosts_name(host, port)} {key.get_name()} {key.get_base64()}\n"
    with _known_hosts_lock:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        old = path.read_bytes() if path.exists() else b""
        if old and not old.endswith(b"\n"):
            old += b"\n"
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(old + line.encode("ascii"))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _mentions_host(path: Path, host: str, port: int) -> bool:
    """Whether a known_hosts file has a line for host:port (plain or hashed names)."""
    try:
        keys = paramiko.HostKeys(str(path))
    except Exception:  # unreadable or malformed: it cannot be the one that matched
        return False
    return keys.lookup(known_hosts_name(host, port)) is not None


# ---------------------------------------------------------------- ~/.ssh/config

def _load_ssh_config(path: str | Path | None) -> paramiko.SSHConfig | None:
    p = Path(path if path is not None else DEFAULT_SSH_CONFIG).expanduser()
    if not p.is_file():
        return None
    try:
        return paramiko.SSHConfig.from_path(str(p))
    except Exception as exc:  # a broken config must not stop connections that don't need it
        log.warning("ignoring %s: %s", p, exc)
        return None


def _lookup(cfg: paramiko.SSHConfig | None, alias: str) -> dict:
    if cfg is None:
        return {}
    try:
        return dict(cfg.lookup(alias))
    except Exception as exc:  # e.g. `Match exec` needs the optional invoke package
        log.warning("could not apply ~/.ssh/config to %s: %s", alias, exc)
        return {}


def ssh_config_hosts(config_path: str | Path | None = None) -> list[dict]:
    """Concrete `Host` entries of an ssh config (default ~/.ssh/config), in file order.

    Patterns (with * or ?) and negations are skipped. Each entry:
    {"alias", "hostname", "port": int, "user": str|None, "identityfile": str|None}.
    """
    p = Path(config_path if config_path is not None else DEFAULT_SSH_CONFIG).expanduser()
    cfg = _load_ssh_config(p)
    if cfg is None:
        return []
    names: list[str] = []
    for line in p.read_text(errors="replace").splitlines():
        m = re.match(r"\s*host\s*[=\s]\s*(.+)$", line, re.IGNORECASE)
        if m:
            for name in shlex.split(m.group(1), comments=True):
                if not any(c in name for c in "*?!") and name not in names:
                    names.append(name)
    hosts = []
    for alias in names:
        found = _lookup(cfg, alias)
        files = found.get("identityfile") or []
        hosts.append({
            "alias": alias,
            "hostname": found.get("hostname", alias),
            "port": int(found.get("port", 22)),
            "user": found.get("user"),
            "identityfile": os.path.expanduser(files[0]) if files else None,
        })
    return hosts


# ---------------------------------------------------------------- the connection

class _Transport(paramiko.Transport):
    """Remembers whether the server said goodbye (SSH_MSG_DISCONNECT): a login that ends
    without one was cut by the link, not refused by the server."""

    server_disconnect: tuple[int, str] | None = None

    def _parse_disconnect(self, m):
        code, desc = m.get_int(), m.get_text()
        self.server_disconnect = (code, desc)
        self._log(logging.INFO, f"Disconnect (code {code:d}): {desc}")


def _settle_dead(t: "paramiko.Transport | None", within: float = 1.0) -> bool:
    """True when the transport is dead or dies within `within` seconds: after a failed
    request its reader thread may not have noticed the closed socket yet."""
    deadline = time.monotonic() + within
    while True:
        if t is None or not t.is_active():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


# ---------------------------------------------------------------- host keys

class _VerifyHostKey(paramiko.MissingHostKeyPolicy):
    """Called by paramiko only for hosts no known_hosts file mentions."""

    def __init__(self, host: str, port: int, accept: str | None, app_known_hosts: Path):
        self.host, self.port, self.accept, self.app_known_hosts = host, port, accept, app_known_hosts

    def missing_host_key(self, client, hostname, key):
        fp = fingerprint(key)
        if self.accept != fp:
            raise UnknownHostKey(self.host, self.port, key.get_name(), fp)
        remember_host_key(self.app_known_hosts, self.host, self.port, key)
        log.info("accepted and remembered %s key %s for %s:%s",
                 key.get_name(), fp, self.host, self.port)


def command_name(argv: list[str]) -> str:
    """What a command is, for a sentence: the agent's commands run as `env VAR=… python -m
    workloads.agent follow …`, which is 'the agent (follow)', not 'env'."""
    args = list(argv)
    if args and posixpath.basename(args[0]) == "env":
        args = args[1:]
        while args and "=" in args[0] and not args[0].startswith("-"):
            args = args[1:]
    if "-m" in args[:-1]:
        i = args.index("-m")
        module, rest = args[i + 1], args[i + 2:]
        if module.startswith("workloads."):
            sub = next((a for a in rest if not a.startswith("-")), "")
            return f"the agent ({sub})" if sub else "the agent"
        return module
    return posixpath.basename(args[0]) if args else "a command"


# ---------------------------------------------------------------- the transport

class _SSHStream(Stream):
    def __init__(self, chan: paramiko.Channel, owner: "SSHTransport", argv: list[str],
                 idle_timeout: float | None = None):
        self._chan, self._owner, self._argv = chan, owner, argv
        self._idle_timeout = idle_timeout
        self._err = bytearray()
        self._closed_by_us = False

    def _drain_stderr(self) -> None:
        while self._chan.recv_stderr_ready():
            self._err += self._chan.recv_stderr(65536)

    def _lost(self, detail: str = "") -> ChannelLost:
        return self._owner._lost(f"reading the output of {command_name(self._argv)}", detail)

    def chunks(self) -> Iterator[bytes]:
        chan = self._chan
        chan.settimeout(_POLL)
        last_data = time.monotonic()
        while True:
            self._drain_stderr()
            try:
                data = chan.recv(65536)
            except socket.timeout:
                if not self._owner.is_alive():
                    raise self._lost() from None
                idle = time.monotonic() - last_data
                if self._idle_timeout is not None and idle > self._idle_timeout:
                    # a frozen link: the socket is open but nothing moves; drop it so a
                    # reconnect can take over (paramiko's keepalives expect no answer)
                    self._owner.close()
                    raise self._lost(f"nothing arrived for {idle:.0f} s; the link looks "
                                     f"frozen") from None
                continue
            except OSError as exc:
                if self._closed_by_us:
                    return
                raise self._lost(str(exc)) from None
            last_data = time.monotonic()
            if data:
                yield data
                continue
            if self._closed_by_us:
                return
            # A command that ends normally sends EOF first; a link that dies does not.
            if not chan.eof_received or not self._owner.is_alive():
                raise self._lost()
            chan.status_event.wait(5)  # the exit status follows EOF
            self._drain_stderr()
            return

    def close(self) -> None:
        self._closed_by_us = True
        self._chan.close()

    def exit_status(self) -> int | None:
        """None while running; -1 if the command ended without a status (killed by a signal)."""
        if not self._chan.exit_status_ready():
            return None
        return self._chan.exit_status

    def stderr_text(self) -> str:
        try:
            self._drain_stderr()
        except OSError:
            pass
        return bytes(self._err).decode("utf-8", "replace")


class SSHTransport(Transport):
    """One authenticated SSH connection to a host. Make one with `SSHTransport.connect`."""

    def __init__(self, client: paramiko.SSHClient, host: str, port: int, user: str,
                 name: str | None = None):
        self._client = client
        self.host, self.port, self.user = host, port, user
        self.name = name or host
        self._sftp: paramiko.SFTPClient | None = None
        self._sftp_lock = threading.Lock()

    # -- connecting -------------------------------------------------------------------

    @classmethod
    def connect(cls, address: str, port: int | None = None, user: str | None = None, *,
                key_file: str | Path | None = None, password: str | None = None,
                passphrase: str | None = None, use_agent: bool = True,
                accept_fingerprint: str | None = None,
                known_hosts_files: list[str | Path] | None = None,
                app_known_hosts: str | Path | None = None,
                ssh_config: str | Path | None = None,
                connect_timeout: float = 10, auth_timeout: float = 15,
                keepalive: int = 15) -> "SSHTransport":
        """Connect, verify the host key, log in; raise a typed RemoteError on any failure.

        `address` may be a Host alias from the ssh config (default ~/.ssh/config), whose
        HostName, Port, User and IdentityFile apply unless given here. `port` and `user`
        default to the config's, then 22 and the local user name. Host keys are checked
        against `known_hosts_files` (default ~/.ssh/known_hosts) and `app_known_hosts`
        (default the app's config folder); an accepted key is written to the latter.
        Authentication tries `key_file` (or the config's IdentityFile), then ssh-agent if
        `use_agent`, then the default keys in ~/.ssh when no key file was named, then
        `password`. `passphrase` unlocks an encrypted key file.
        """
        cfg = _lookup(_load_ssh_config(ssh_config), address)
        host = cfg.get("hostname") or address
        port = int(port if port is not None else cfg.get("port", 22))
        user = user or cfg.get("user") or getpass.getuser()
        if key_file is None:
            for candidate in cfg.get("identityfile") or []:
                if Path(candidate).expanduser().is_file():
                    key_file = candidate
                    break
        if known_hosts_files is None:
            known_hosts_files = [DEFAULT_KNOWN_HOSTS]
        app_known_hosts = Path(app_known_hosts or app_known_hosts_path()).expanduser()
        where = f"{host}:{port}"

        pkey = cls._load_key(key_file, passphrase) if key_file is not None else None
        look_for_keys = key_file is None
        agent = use_agent and bool(os.environ.get("SSH_AUTH_SOCK"))

        client = paramiko.SSHClient()
        for f in [*known_hosts_files, app_known_hosts]:
            f = Path(f).expanduser()
            if f.is_file():
                try:
                    client.load_system_host_keys(str(f))
                except Exception as exc:
                    log.warning("could not read known_hosts %s: %s", f, exc)
        client.set_missing_host_key_policy(
            _VerifyHostKey(host, port, _normalise_fingerprint(accept_fingerprint),
                           app_known_hosts))
        try:
            client.connect(host, port=port, username=user, password=password, pkey=pkey,
                           passphrase=passphrase, allow_agent=agent,
                           look_for_keys=look_for_keys, timeout=connect_timeout,
                           banner_timeout=connect_timeout, auth_timeout=auth_timeout,
                           channel_timeout=connect_timeout, transport_factory=_Transport)
        except BaseException as exc:
            t = client.get_transport()
            dropped = cls._login_dropped(exc, t)
            client.close()
            if isinstance(exc, RemoteError):
                raise
            if dropped:
                raise Unreachable(f"the connection to {where} dropped during the login "
                                  f"({dropped}); the link or the host's sshd ended it — "
                                  f"try again.") from None
            # paramiko reports a dead handshake as "No existing session"; the reason is here
            saved = getattr(t, "saved_exception", None)
            if type(exc) is paramiko.SSHException and isinstance(saved, Exception):
                exc = saved
            if isinstance(exc, paramiko.BadHostKeyException):
                files = [str(Path(f).expanduser()) for f in [*known_hosts_files, app_known_hosts]
                         if _mentions_host(Path(f).expanduser(), host, port)]
                raise HostKeyMismatch(host, port, fingerprint(exc.expected_key),
                                      fingerprint(exc.key), files, str(app_known_hosts)) from None
            mapped = cls._map_connect_error(exc, where, user, connect_timeout, pkey, key_file,
                                            agent, look_for_keys, password is not None)
            if mapped is None:
                raise
            raise mapped from None
        client.get_transport().set_keepalive(keepalive)
        log.info("connected to %s@%s", user, where)
        return cls(client, host, port, user, name=address)

    @staticmethod
    def _login_dropped(exc: BaseException, t: "paramiko.Transport | None") -> str:
        """Why a login that failed was cut rather than refused ("" when it was refused).

        paramiko reports a connection that ends mid-login as an AuthenticationException,
        like a refusal. A real refusal is an answer: the transport is still up, or the
        server sent a disconnect message (e.g. too many authentication failures).
        """
        if not isinstance(exc, paramiko.AuthenticationException) or \
                isinstance(exc, paramiko.BadAuthenticationType):
            return ""
        if "timeout" in str(exc).lower():
            return "no answer to the login in time"
        if getattr(t, "server_disconnect", None) is not None:
            return ""
        return "the connection closed without an answer" if _settle_dead(t, 0.5) else ""

    @staticmethod
    def _load_key(key_file, passphrase) -> paramiko.PKey:
        path = Path(key_file).expanduser()
        try:
            return paramiko.PKey.from_path(path, password=passphrase)
        except FileNotFoundError:
            raise AuthFailed(f"the key file {path} does not exist; choose an existing "
                             f"private key file.") from None
        except paramiko.PasswordRequiredException:
            raise AuthFailed(f"the key file {path} is protected by a passphrase; enter the "
                             f"passphrase or add the key to ssh-agent.") from None
        except (paramiko.SSHException, ValueError, OSError) as exc:
            what = ("the passphrase is wrong or " if passphrase else "")
            raise AuthFailed(f"could not read the private key {path}: {what}it is not a key "
                             f"Versus understands ({exc}). Choose your private key file "
                             f"(not the .pub one).") from None

    @staticmethod
    def _map_connect_error(exc, where, user, timeout, pkey, key_file, agent, look_for_keys,
                           has_password) -> RemoteError | None:
        if isinstance(exc, paramiko.AuthenticationException):
            tried = []
            if pkey is not None:
                tried.append(f"the key {Path(key_file).expanduser()}")
            if agent:
                tried.append("the keys in ssh-agent")
            if look_for_keys:
                tried.append("the default keys in ~/.ssh")
            if has_password:
                tried.append("a password")
            allowed = getattr(exc, "allowed_types", None)
            accepts = f" The host accepts: {', '.join(allowed)}." if allowed else ""
            if not tried:
                return AuthFailed(f"{user}@{where} needs a login, and none was available: "
                                  f"choose a key file, start ssh-agent or enter a password."
                                  f"{accepts}")
            return AuthFailed(f"{user}@{where} refused the login (tried {', '.join(tried)})."
                              f"{accepts} Check the user name, add your public key to "
                              f"~/.ssh/authorized_keys on the host, or enter the right "
                              f"password.")
        reach = f"could not reach {where}"
        if isinstance(exc, UnicodeError):       # the resolver refused the name itself
            return Unreachable(f"{reach}: the host name is not valid (each part between dots "
                               f"must have 1 to 63 characters) — check the address.")
        if isinstance(exc, socket.gaierror):
            return Unreachable(f"{reach}: the name does not resolve — check the host name "
                               f"and your DNS or VPN.")
        if isinstance(exc, NoValidConnectionsError):
            refused = all(getattr(e, "errno", None) == errno.ECONNREFUSED
                          for e in exc.errors.values())
            if refused:
                return Unreachable(f"{reach}: connection refused — is sshd running and the "
                                   f"port right?")
            return Unreachable(f"{reach}: {exc.strerror} — check the address and port.")
        if isinstance(exc, ConnectionRefusedError):
            return Unreachable(f"{reach}: connection refused — is sshd running and the "
                               f"port right?")
        if isinstance(exc, (socket.timeout, TimeoutError)):
            return Unreachable(f"{reach}: no answer within {timeout:g} s — check the address, "
                               f"the port and any firewall or VPN in between.")
        if isinstance(exc, EOFError):
            return Unreachable(f"{reach}: the server closed the connection during the "
                               f"handshake — check its sshd logs (MaxStartups, AllowUsers).")
        if isinstance(exc, paramiko.SSHException) and "banner" in str(exc).lower() and \
                isinstance(exc.__context__, (EOFError, ConnectionError)):
            return Unreachable(f"{reach}: the server closed the connection during the "
                               f"handshake — check its sshd logs (MaxStartups, AllowUsers).")
        if isinstance(exc, paramiko.SSHException):
            # "No existing session": the key exchange did not finish within the timeout
            if "banner" in str(exc).lower() or "no existing session" in str(exc).lower():
                return Unreachable(f"{reach}: something answered but did not speak SSH "
                                   f"within {timeout:g} s — is this the SSH port?")
            return Unreachable(f"{reach}: the SSH handshake failed ({exc}). Check that the "
                               f"host runs a current OpenSSH server.")
        if isinstance(exc, OSError):
            return Unreachable(f"{reach}: {exc.strerror or exc} — check the address and your "
                               f"network.")
        return None

    # -- state ------------------------------------------------------------------------

    def _transport(self) -> paramiko.Transport:
        t = self._client.get_transport()
        if t is None or not t.is_active():
            raise self._lost("starting a command")
        return t

    def _lost(self, doing: str, detail: str = "") -> ChannelLost:
        why = f" ({detail})" if detail else ""
        return ChannelLost(f"lost the connection to {self.host}:{self.port} while {doing}"
                           f"{why}. Anything running detached on the host goes on; reconnect "
                           f"to continue.")

    def is_alive(self) -> bool:
        t = self._client.get_transport()
        return t is not None and t.is_active()

    @property
    def paramiko_transport(self) -> paramiko.Transport | None:
        """The underlying paramiko transport (for tests and diagnostics)."""
        return self._client.get_transport()

    def close(self) -> None:
        with self._sftp_lock:
            if self._sftp is not None:
                try:
                    self._sftp.close()
                except Exception:
                    pass
                self._sftp = None
        self._client.close()

    # -- commands ---------------------------------------------------------------------

    def _open(self, argv: list[str]) -> paramiko.Channel:
        if not argv:
            raise ValueError("empty command")
        try:
            chan = self._transport().open_session(timeout=15)
            chan.exec_command(shlex.join(str(a) for a in argv))
        except ChannelLost:
            raise
        except (paramiko.SSHException, OSError, EOFError) as exc:
            if _settle_dead(self._client.get_transport()):
                raise self._lost(f"starting {command_name(argv)}", str(exc)) from None
            raise
        return chan

    def run(self, argv, stdin=None, timeout=120, check=True) -> Completed:
        chan = self._open(argv)
        deadline = time.monotonic() + timeout
        feeder = None
        if stdin:
            # write from a thread: the command may fill its output before it reads input
            def feed():
                try:
                    chan.sendall(stdin)
                    chan.shutdown_write()
                except (OSError, EOFError, paramiko.SSHException):
                    pass
            feeder = threading.Thread(target=feed, daemon=True, name="ssh-stdin")
            feeder.start()
        else:
            chan.shutdown_write()  # commands that read stdin see EOF, not a hang
        out, err = bytearray(), bytearray()
        chan.settimeout(_POLL)
        try:
            while True:
                while chan.recv_stderr_ready():
                    err += chan.recv_stderr(65536)
                if time.monotonic() > deadline:
                    raise CommandTimedOut(
                        f"{command_name(argv)} on {self.host} did not finish within {timeout:g} s; Versus "
                        f"stopped waiting. Raise the timeout or check why it hangs.")
                try:
                    data = chan.recv(65536)
                except socket.timeout:
                    if not self.is_alive():
                        raise self._lost(f"running {command_name(argv)}") from None
                    continue
                if data:
                    out += data
                    continue
                if not chan.eof_received or not self.is_alive():
                    raise self._lost(f"running {command_name(argv)}")
                break
            if not chan.status_event.wait(max(1.0, deadline - time.monotonic())):
                raise CommandTimedOut(f"{command_name(argv)} on {self.host} closed its output but did "
                                      f"not exit within {timeout:g} s.")
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(65536)
            rc = chan.exit_status
        except OSError as exc:
            if isinstance(exc, RemoteError):
                raise
            raise self._lost(f"running {command_name(argv)}", str(exc)) from None
        finally:
            chan.close()
            if feeder is not None:
                feeder.join(1)
        c = Completed(rc, bytes(out), bytes(err))
        return c.check(argv) if check else c

    def stream(self, argv, idle_timeout=None) -> Stream:
        chan = self._open(argv)
        chan.shutdown_write()
        return _SSHStream(chan, self, list(argv), idle_timeout)

    # -- files (SFTP) -----------------------------------------------------------------

    def sftp(self) -> paramiko.SFTPClient:
        with self._sftp_lock:
            if self._sftp is None or self._sftp.sock.closed:
                try:
                    self._sftp = self._client.open_sftp()
                except (paramiko.SSHException, OSError, EOFError) as exc:
                    if _settle_dead(self._client.get_transport()):
                        raise self._lost("opening SFTP", str(exc)) from None
                    raise RemoteError(f"{self.host} refused SFTP ({exc}); enable the sftp "
                                      f"Subsystem in its sshd_config.") from None
            return self._sftp

    def _file_error(self, exc: Exception, doing: str, path: str) -> Exception:
        if isinstance(exc, EOFError) or isinstance(exc, paramiko.SSHException) and \
                _settle_dead(self._client.get_transport()) or not self.is_alive():
            return self._lost(doing)
        if isinstance(exc, PermissionError):
            return PermissionError(errno.EACCES, f"permission denied {doing} on {self.host}; "
                                   f"check the owner and mode of the folder", path)
        return exc

    def put_bytes(self, data, remote_path, mode=0o600) -> None:
        sftp = self.sftp()
        folder, name = posixpath.split(remote_path)
        tmp = posixpath.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            # create empty, set the mode, then write: the data is never readable by others
            with sftp.open(tmp, "wbx") as f:
                f.chmod(mode)
                f.set_pipelined(True)
                f.write(data)
            sftp.posix_rename(tmp, remote_path)  # atomic, replaces an existing file
        except (OSError, paramiko.SSHException, EOFError) as exc:
            try:
                sftp.remove(tmp)
            except Exception:
                pass
            raise self._file_error(exc, f"writing {remote_path}", remote_path) from None

    def mkdir_p(self, path, mode=0o700) -> None:
        sftp = self.sftp()
        parts = [p for p in path.split("/") if p]
        current = "/" if path.startswith("/") else ""
        for part in parts:
            current = posixpath.join(current, part) if current else part
            try:
                sftp.stat(current)
                continue
            except FileNotFoundError:
                pass
            except (OSError, paramiko.SSHException, EOFError) as exc:
                raise self._file_error(exc, f"checking {current}", current) from None
            try:
                sftp.mkdir(current, mode)
                sftp.chmod(current, mode)  # the server's umask applies to mkdir
            except (OSError, paramiko.SSHException, EOFError) as exc:
                raise self._file_error(exc, f"creating {current}", current) from None

    def exists(self, path) -> bool:
        try:
            self.sftp().stat(path)
            return True
        except FileNotFoundError:
            return False
        except (OSError, paramiko.SSHException, EOFError) as exc:
            raise self._file_error(exc, f"checking {path}", path) from None

    def home(self) -> str:
        try:
            return self.sftp().normalize(".")
        except (OSError, paramiko.SSHException, EOFError) as exc:
            raise self._file_error(exc, "finding the home folder", ".") from None
