"""gather_facts on this machine and over SSH: one interface, the same answers."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

from app.remote.facts import format_facts, gather_facts
from app.remote.ssh import SSHTransport
from app.remote.transport import LocalTransport

pytestmark = pytest.mark.timeout(60)


def check_facts(facts):
    assert facts["cores"] == os.cpu_count()
    assert facts["kernel"] == os.uname().release
    assert facts["arch"] == os.uname().machine
    assert facts["mem_total_kb"] > 0
    assert facts["python"] == "Python %d.%d.%d" % sys.version_info[:3]
    assert facts["python_path"] == sys.executable
    psycopg = facts["drivers"]["psycopg"]
    assert psycopg and psycopg["version"] and psycopg["impl"] in ("binary", "c", "python")
    assert facts["tools"]["pgbench"] == shutil.which("pgbench") == "/usr/bin/pgbench"
    assert facts["tools"]["cc"] == shutil.which("cc")           # the micro suite's loop
    assert set(facts["servers"]["listening"]) == {"5432", "3306"}
    rows = dict(format_facts(facts))
    assert rows["Kernel"].startswith(os.uname().release)
    assert "pgbench" in rows["Tools"]
    assert rows["psycopg (PostgreSQL)"].startswith(psycopg["version"])
    # the micro suite's MySQL client, libmariadb3 (installed with libmariadb-dev here)
    lib = facts["drivers"]["libmariadb"]
    assert lib and lib["version"][0].isdigit(), lib
    assert rows["MariaDB Connector/C (prepared statements, the micro suite's)"] == lib["version"]


def test_facts_on_local_host():
    facts = gather_facts(LocalTransport(), python=sys.executable)
    check_facts(facts)


@pytest.mark.ssh
def test_facts_over_ssh(sshd, tmp_path):
    t = SSHTransport.connect(sshd.host, sshd.port, sshd.user, key_file=sshd.key_file,
                             use_agent=False, known_hosts_files=[sshd.known_hosts_file(tmp_path)],
                             app_known_hosts=tmp_path / "app_known_hosts",
                             ssh_config=tmp_path / "none")
    try:
        check_facts(gather_facts(t, python=sys.executable))
    finally:
        t.close()


def test_missing_interpreter_leaves_drivers_unknown():
    facts = gather_facts(LocalTransport(), python="versus-no-such-python")
    assert facts["python"] is None
    assert facts["drivers"] == {"psycopg": None, "pymysql": None, "MySQLdb": None,
                                "mariadb": None, "libmariadb": None}
    assert facts["kernel"] == os.uname().release
    assert "not found" in dict(format_facts(facts))["Python"]
