"""Applying a profile to a running server (workloads.engine.servers.profile_apply), against
private managed
PostgreSQL 15 and MariaDB instances: never the shared servers on 5432 / 3306."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from workloads.engine.sql.db import SqlSession
from workloads.engine.servers.managed import ManagedServer, inspect
from workloads.engine.servers.profile_apply import apply
from workloads.profiles import host_context

PG15 = "/usr/lib/postgresql/15/bin"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="versus-apply-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def pg(workdir, tmp_path):
    srv = ManagedServer(inspect(PG15), os.path.join(workdir, "srv"), "max_connections = 50\n",
                        str(tmp_path))
    target = srv.start()
    assert target.port != 5432
    yield target
    srv.stop()


@pytest.fixture
def maria(workdir, tmp_path):
    srv = ManagedServer(inspect("/usr"), os.path.join(workdir, "srv"),
                        "[mysqld]\ninnodb_buffer_pool_size = 64M\n", str(tmp_path))
    target = srv.start()
    assert target.port != 3306
    yield target
    srv.stop()


def _scalar(target, q):
    db = SqlSession(target)
    try:
        return db.scalar(q)
    finally:
        db.close()


def test_postgres_alter_system_reload_and_restart_list(pg):
    text = ("work_mem = {{ 3 * 1024 }}kB   # reloadable\n"
            "max_connections = 77\n"
            "work_mme = 4MB\n")
    out = apply(pg, text, host_context(4))
    assert out["applied"] == ["work_mem"]
    assert out["needs_restart"] == ["max_connections"]
    assert [r["name"] for r in out["rejected"]] == ["work_mme"]
    assert 'unrecognized configuration parameter "work_mme"' in out["rejected"][0]["error"]
    assert out["persisted"] and not out["restarted"]
    assert _scalar(pg, "SHOW work_mem") == "3MB"              # live, in a new session
    assert _scalar(pg, "SHOW max_connections") == "50"        # until the restart
    assert _scalar(pg, "SELECT pending_restart FROM pg_settings "
                       "WHERE name = 'max_connections'") is True


def test_postgres_bad_value_is_rejected_in_the_servers_words(pg):
    out = apply(pg, "work_mem = lots\n", host_context(4))
    assert out["applied"] == [] and out["needs_restart"] == []
    assert 'invalid value for parameter "work_mem"' in out["rejected"][0]["error"]


def test_mariadb_set_global_and_read_only(maria):
    text = ("[mysqld]\n"
            "max_connections = 77\n"
            "sort_buffer_size = 1M\n"
            "innodb_log_buffer_size = 32M\n"
            "innodb_log_file_sizee = 64M\n")
    out = apply(maria, text, host_context(4))
    assert out["applied"] == ["max_connections", "sort_buffer_size"]
    assert out["needs_restart"] == ["innodb_log_buffer_size"]       # read-only
    assert [r["name"] for r in out["rejected"]] == ["innodb_log_file_sizee"]
    assert "Unknown system variable" in out["rejected"][0]["error"]
    assert out["persisted"] is False and any("SET PERSIST" in n for n in out["notes"])
    assert int(_scalar(maria, "SELECT @@global.max_connections")) == 77
    assert int(_scalar(maria, "SELECT @@global.sort_buffer_size")) == 1 << 20


def test_restart_command_runs_only_when_asked(pg, workdir):
    marker = os.path.join(workdir, "restarted")
    cmd = f"touch {marker}"
    out = apply(pg, "max_connections = 60\n", host_context(4), restart_command=cmd)
    assert not out["restarted"] and not os.path.exists(marker)
    out = apply(pg, "max_connections = 60\n", host_context(4), restart_command=cmd,
                restart=True)
    assert out["restarted"] and os.path.exists(marker)


def test_agent_subcommand(pg):
    req = {"target": {"engine": "postgres", "address": pg.address, "port": pg.port,
                      "user": pg.user, "database": pg.database},
           "config": "work_mem = 5MB\nshared_buffers = 64MB\n", "clients": 4}
    c = subprocess.run([sys.executable, "-m", "workloads.agent", "apply-profile"],
                       input=(json.dumps(req) + "\n\n").encode(), capture_output=True,
                       cwd=ROOT, timeout=60)
    out = json.loads(c.stdout.decode().strip().splitlines()[-1])
    assert c.returncode == 0, c.stderr
    assert out["ok"] and out["applied"] == ["work_mem"]
    assert out["needs_restart"] == ["shared_buffers"]


def test_cli_profile_apply(pg, tmp_path):
    prof = tmp_path / "p.toml"
    prof.write_text('name = "apply-test"\nengine = "postgres"\ndescription = "t"\n'
                    "config = '''\nwork_mem = 6MB\nmax_connections = 90\n'''\n")
    url = f"postgresql://{pg.user}@{pg.address}:{pg.port}/{pg.database}"
    c = subprocess.run([sys.executable, "-m", "app.cli", "profile", "apply", str(prof),
                        "--target", url, "--host", "local", "--json"],
                       capture_output=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "VERSUS_DB_PASSWORD": ""})
    assert c.returncode == 0, c.stderr.decode()
    out = json.loads(c.stdout)
    assert out["applied"] == ["work_mem"] and out["needs_restart"] == ["max_connections"]
    assert _scalar(pg, "SHOW work_mem") == "6MB"
