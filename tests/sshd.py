"""A real OpenSSH server on loopback for the remote tests (registered in tests/conftest.py).

The server runs as the current user (root in CI) on a free 127.0.0.1 port with its own
host key, config, authorized_keys and pid file under a temporary folder; nothing global
is touched except creating /run/sshd, which sshd needs for privilege separation.
"""
from __future__ import annotations

import base64
import getpass
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SSHD = "/usr/sbin/sshd"


@dataclass
class SSHServer:
    host: str
    port: int
    user: str
    key_file: Path               # private key authorised for `user`
    host_key_fingerprint: str    # "SHA256:…" as ssh-keygen prints it
    host_public_key: str         # "ssh-ed25519 AAAA…" (type and base64, no comment)
    log_file: Path
    proc: subprocess.Popen = field(repr=False)

    @property
    def known_hosts_entry(self) -> str:
        return f"[{self.host}]:{self.port} {self.host_public_key}"

    def known_hosts_file(self, tmp_path: Path) -> Path:
        """Write a known_hosts under tmp_path that trusts this server; return its path."""
        path = Path(tmp_path) / "known_hosts_trusting_sshd"
        path.write_text(self.known_hosts_entry + "\n")
        return path

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ensure_sshd() -> None:
    if os.path.exists(SSHD):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", "openssh-server"]
    if subprocess.run(cmd, env=env).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, check=True)
        subprocess.run(cmd, env=env, check=True)


def keygen(path: Path, comment: str = "versus-test") -> Path:
    """Make an ed25519 key pair at path (and path.pub) with ssh-keygen, no passphrase."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment,
                    "-f", str(path)], check=True)
    return path


def public_line(pub_path: Path) -> str:
    """'type base64' of a .pub file, without its comment."""
    return " ".join(pub_path.read_text().split()[:2])


def sha256_fingerprint(public_line_: str) -> str:
    blob = base64.b64decode(public_line_.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _speaks_ssh(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            return s.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def start_sshd(d: Path, extra_config: str = "", keys_file: bool = True) -> SSHServer:
    """Start a private sshd with its keys and config in folder d (see the module doc);
    extra_config lines are added to its sshd_config ({d} is replaced by the folder).
    keys_file=False leaves d/authorized_keys to an AuthorizedKeysCommand in extra_config."""
    _ensure_sshd()
    if shutil.which("ssh-keygen") is None:
        pytest.fail("ssh-keygen is missing; install openssh-client")
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation dir
    host_key = keygen(d / "host_ed25519", "versus-test-host")
    user_key = keygen(d / "user_ed25519", "versus-test-user")
    (d / "authorized_keys").write_text((d / "user_ed25519.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    port = _free_port()
    config = d / "sshd_config"
    config.write_text(f"""\
ListenAddress 127.0.0.1
Port {port}
HostKey {host_key}
PidFile {d / "sshd.pid"}
AuthorizedKeysFile {d / "authorized_keys" if keys_file else "none"}
# the test folder lives under /tmp, which sshd's ownership checks reject
StrictModes no
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication yes
PermitEmptyPasswords no
KbdInteractiveAuthentication no
UsePAM no
Subsystem sftp internal-sftp
LogLevel VERBOSE
""" + extra_config.replace("{d}", str(d)))
    log_file = d / "sshd.log"
    with open(log_file, "wb") as log:
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 15
    while not _speaks_ssh(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"sshd did not start on port {port}:\n{log_file.read_text()}")
        time.sleep(0.05)
    host_line = public_line(d / "host_ed25519.pub")
    return SSHServer(host="127.0.0.1", port=port, user=getpass.getuser(), key_file=user_key,
                     host_key_fingerprint=sha256_fingerprint(host_line),
                     host_public_key=host_line, log_file=log_file, proc=proc)


def stop_sshd(server: SSHServer) -> None:
    # the whole group: the listener and any per-connection children it forked
    proc = server.proc
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    try:
        yield server
    finally:
        stop_sshd(server)
