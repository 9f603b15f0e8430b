"""SSHTransport against a real OpenSSH server on loopback (fixture `sshd` in tests/sshd.py)."""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import time
import uuid

import paramiko
import pytest

from app.remote.errors import (AuthFailed, ChannelLost, HostKeyMismatch, UnknownHostKey,
                               Unreachable)
from app.remote.ssh import SSHTransport, fingerprint, ssh_config_hosts
from tests.sshd import keygen, public_line, sha256_fingerprint

pytestmark = [pytest.mark.ssh, pytest.mark.timeout(60)]


def connect(sshd, tmp_path, **kw):
    """Connect with an isolated set of known_hosts files that trust the test server."""
    kw.setdefault("key_file", sshd.key_file)
    kw.setdefault("use_agent", False)
    kw.setdefault("known_hosts_files", [sshd.known_hosts_file(tmp_path)])
    kw.setdefault("app_known_hosts", tmp_path / "app_known_hosts")
    kw.setdefault("ssh_config", tmp_path / "no_ssh_config")
    return SSHTransport.connect(sshd.host, sshd.port, sshd.user, **kw)


@pytest.fixture
def ssh(sshd, tmp_path):
    t = connect(sshd, tmp_path)
    yield t
    t.close()


def test_fixture_fingerprint_matches_ssh_keygen(sshd, tmp_path):
    pub = tmp_path / "host.pub"
    pub.write_text(sshd.host_public_key + "\n")
    out = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", str(pub)],
                         capture_output=True, text=True, check=True).stdout
    assert out.split()[1] == sshd.host_key_fingerprint


def test_run_delivers_hostile_arguments_verbatim(ssh, tmp_path):
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    hostile = [f"$(touch {marker})", f"`touch {marker}`", "it's", '"double"', "a\nb",
               f"; touch {marker}", "; rm -rf /nonexistent-versus", "*", "$HOME", "a  b",
               "back\\slash", "", "-n", "ünïcödé"]
    c = ssh.run(["printf", "%s\\0", *hostile])
    assert c.rc == 0
    assert c.stdout.decode().split("\0")[:-1] == hostile
    assert not marker.exists()


def test_run_reports_exit_status_stderr_and_stdin(ssh):
    c = ssh.run(["sh", "-c", "cat; echo oops >&2; exit 3"], stdin=b"in\n", check=False)
    assert (c.rc, c.stdout, c.stderr) == (3, b"in\n", b"oops\n")
    from app.remote.errors import CommandFailed
    with pytest.raises(CommandFailed, match="exited with 3: oops"):
        ssh.run(["sh", "-c", "echo oops >&2; exit 3"])


def test_run_reads_large_stdout_and_stderr_together(ssh):
    # 4 MB on each stream, interleaved: reading one while the other fills must not hang
    script = "head -c 4000000 /dev/zero; head -c 4000000 /dev/zero >&2; head -c 10 /dev/zero"
    c = ssh.run(["sh", "-c", script], timeout=30)
    assert (len(c.stdout), len(c.stderr)) == (4000010, 4000000)
    assert ssh.home() == os.path.expanduser("~")


def test_unknown_host_key_is_refused_then_accepted_and_remembered(sshd, tmp_path):
    app_known = tmp_path / "app" / "known_hosts"
    kw = dict(known_hosts_files=[], app_known_hosts=app_known)
    with pytest.raises(UnknownHostKey) as err:
        connect(sshd, tmp_path, **kw)
    assert err.value.fingerprint == sshd.host_key_fingerprint
    assert (err.value.host, err.value.port, err.value.key_type) == (
        sshd.host, sshd.port, "ssh-ed25519")
    assert sshd.host_key_fingerprint in str(err.value)
    assert not app_known.exists()

    with pytest.raises(UnknownHostKey):  # a different fingerprint is not consent
        connect(sshd, tmp_path, accept_fingerprint="SHA256:" + "A" * 43, **kw)

    t = connect(sshd, tmp_path, accept_fingerprint=err.value.fingerprint, **kw)
    assert t.run(["echo", "ok"]).stdout == b"ok\n"
    t.close()
    assert app_known.read_text() == f"[{sshd.host}]:{sshd.port} {sshd.host_public_key}\n"
    assert not [p for p in app_known.parent.iterdir() if p.name.endswith(".tmp")]

    t = connect(sshd, tmp_path, **kw)  # remembered: no fingerprint needed any more
    assert t.is_alive()
    t.close()
    assert len(app_known.read_text().splitlines()) == 1


def test_changed_host_key_is_refused_even_with_accept_fingerprint(sshd, tmp_path):
    other = public_line(keygen(tmp_path / "impostor").with_suffix(".pub"))
    known = tmp_path / "known_hosts"
    known.write_text(f"[{sshd.host}]:{sshd.port} {other}\n")
    app_known = tmp_path / "app_known_hosts"
    for accept in (None, sshd.host_key_fingerprint):
        with pytest.raises(HostKeyMismatch) as err:
            connect(sshd, tmp_path, known_hosts_files=[known], app_known_hosts=app_known,
                    accept_fingerprint=accept)
        assert err.value.expected == sha256_fingerprint(other)
        assert err.value.got == sshd.host_key_fingerprint
        # the sentence names the file holding the old key and the app's own known_hosts
        assert str(known) in str(err.value) and str(app_known) in str(err.value)
    assert not app_known.exists()


def test_wrong_key_file_is_auth_failed(sshd, tmp_path):
    wrong = keygen(tmp_path / "stranger")
    with pytest.raises(AuthFailed, match="refused the login.*stranger"):
        connect(sshd, tmp_path, key_file=wrong)
    with pytest.raises(AuthFailed, match="does not exist"):
        connect(sshd, tmp_path, key_file=tmp_path / "missing")


def test_wrong_password_is_auth_failed_and_not_echoed(sshd, tmp_path):
    secret = "not-the-password-" + uuid.uuid4().hex
    with pytest.raises(AuthFailed) as err:
        connect(sshd, tmp_path, key_file=None, password=secret, use_agent=False)
    assert "password" in str(err.value)
    assert secret not in str(err.value) and secret not in repr(err.value.__cause__)


def test_closed_port_is_unreachable_fast(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(Unreachable, match="connection refused — is sshd running"):
        SSHTransport.connect("127.0.0.1", port, "root", known_hosts_files=[],
                             app_known_hosts=tmp_path / "kh", ssh_config=tmp_path / "none",
                             use_agent=False, connect_timeout=5)
    assert time.monotonic() - started < 3


def test_port_that_does_not_speak_ssh_is_unreachable(tmp_path):
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        with pytest.raises(Unreachable, match="did not speak SSH"):
            SSHTransport.connect("127.0.0.1", srv.getsockname()[1], "root",
                                 known_hosts_files=[], app_known_hosts=tmp_path / "kh",
                                 ssh_config=tmp_path / "none", use_agent=False,
                                 connect_timeout=1)


def test_files_round_trip_with_modes(ssh, tmp_path):
    base = tmp_path / "remote"
    deep = f"{base}/a/b/c"
    assert not ssh.exists(deep)
    ssh.mkdir_p(deep, 0o700)
    ssh.mkdir_p(deep, 0o700)  # idempotent
    for d in (base, base / "a", base / "a" / "b", base / "a" / "b" / "c"):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    target = f"{deep}/secret.txt"
    ssh.put_bytes(b"first", target, 0o600)
    ssh.put_bytes(b"second\x00\xff", target, 0o640)  # replaces atomically
    assert ssh.exists(target)
    assert (base / "a/b/c/secret.txt").read_bytes() == b"second\x00\xff"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert os.listdir(deep) == ["secret.txt"]  # no temp files left behind
    assert ssh.home() == os.path.expanduser("~")


def test_stream_yields_output_as_it_arrives(ssh):
    s = ssh.stream(["sh", "-c", "for i in 1 2 3; do echo $i; sleep 0.2; done; echo done >&2"])
    started = time.monotonic()
    seen = []
    for chunk in s.chunks():
        seen.append((time.monotonic() - started, chunk))
    assert b"".join(c for _, c in seen) == b"1\n2\n3\n"
    assert len(seen) >= 3
    # incremental: the first line arrived well before the last (the command sleeps 0.4 s)
    assert seen[-1][0] - seen[0][0] >= 0.3
    assert s.exit_status() == 0
    assert s.stderr_text() == "done\n"
    s.close()


def test_stream_close_stops_reading_a_follow_command(ssh):
    s = ssh.stream(["sh", "-c", "while :; do echo tick; sleep 0.05; done"])
    it = s.chunks()
    assert b"tick" in next(it)
    s.close()
    assert list(it) == []
    assert ssh.run(["true"]).rc == 0  # the connection survives


def test_dropped_link_during_stream_raises_channel_lost(sshd, tmp_path):
    t = connect(sshd, tmp_path)
    s = t.stream(["sh", "-c", "while :; do echo tick; sleep 0.1; done"])
    it = s.chunks()
    assert b"tick" in next(it)
    sock = t.paramiko_transport.sock
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    started = time.monotonic()
    with pytest.raises(ChannelLost, match="lost the connection"):
        for _ in it:
            pass
    assert time.monotonic() - started < 5
    assert not t.is_alive()
    with pytest.raises(ChannelLost):
        t.run(["true"])
    t.close()


def test_ssh_config_hosts_and_alias_connect(sshd, tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text(f"""\
Host bench versus-bench
    HostName {sshd.host}
    Port {sshd.port}
    User {sshd.user}
    IdentityFile {sshd.key_file}

Host *.example.com other?
    User nobody

Host db1
    HostName db1.internal
""")
    hosts = ssh_config_hosts(config)
    assert [h["alias"] for h in hosts] == ["bench", "versus-bench", "db1"]
    assert hosts[0] == {"alias": "bench", "hostname": sshd.host, "port": sshd.port,
                        "user": sshd.user, "identityfile": str(sshd.key_file)}
    assert hosts[2]["hostname"] == "db1.internal" and hosts[2]["port"] == 22
    assert ssh_config_hosts(tmp_path / "missing") == []

    t = SSHTransport.connect("bench", ssh_config=config, use_agent=False,
                             known_hosts_files=[sshd.known_hosts_file(tmp_path)],
                             app_known_hosts=tmp_path / "app_known_hosts")
    assert (t.host, t.port, t.user, t.name) == (sshd.host, sshd.port, sshd.user, "bench")
    assert t.run(["echo", "via alias"]).stdout == b"via alias\n"
    t.close()


def test_fingerprint_matches_openssh(sshd):
    key = paramiko.PKey.from_path(sshd.key_file)
    out = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", str(sshd.key_file)],
                         capture_output=True, text=True, check=True).stdout
    assert fingerprint(key) == out.split()[1]


def test_run_timeout_raises_and_keeps_the_connection(ssh):
    from app.remote.ssh import CommandTimedOut
    started = time.monotonic()
    with pytest.raises(CommandTimedOut, match="did not finish within 0.5 s"):
        ssh.run(["sleep", "5"], timeout=0.5)
    assert time.monotonic() - started < 2
    assert ssh.run(["echo", "still here"]).stdout == b"still here\n"


def test_keepalive_is_set(ssh):
    packetizer = ssh.paramiko_transport.packetizer
    assert packetizer._Packetizer__keepalive_interval == 15  # private; no public getter
