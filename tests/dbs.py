"""Databases of the tests' own on the machine's PostgreSQL and MariaDB (unique names,
dropped afterwards; no server setting is changed)."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

PG = dict(host="127.0.0.1", port=5432, user="postgres")
MY = dict(host="127.0.0.1", port=3306, user="root", password="")


def unique(prefix: str = "versus_t") -> str:
    return f"{prefix}_{secrets.token_hex(4)}"


@pytest.fixture
def pg_db():
    import psycopg
    name = unique()
    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def mariadb_db():
    import pymysql
    name = unique()
    c = pymysql.connect(**MY, autocommit=True)
    c.cursor().execute(f"CREATE DATABASE `{name}`")
    c.close()
    yield f"mysql://root@127.0.0.1:3306/{name}"
    c = pymysql.connect(**MY, autocommit=True)
    c.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")
    c.close()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two point-query sessions recorded for real on the machine's PostgreSQL (1 and 2
    clients), shared by the tests of one module."""
    from tests.recorded import record_pg_sessions
    d = tmp_path_factory.mktemp("recorded")
    home = d / "home"
    home.mkdir()
    return record_pg_sessions(d, home, n=2, duration=2)


def query(url: str, sql: str) -> list[tuple]:
    """Rows of one statement (none for a statement without rows) on the test's own
    autocommit connection to a database of pg_db or mariadb_db."""
    from urllib.parse import urlsplit
    db = urlsplit(url).path.lstrip("/")
    if url.startswith("postgresql"):
        import psycopg
        with psycopg.connect(**PG, dbname=db, autocommit=True) as c:
            cur = c.execute(sql)
            return cur.fetchall() if cur.description else []
    import pymysql
    c = pymysql.connect(**MY, database=db, autocommit=True)
    try:
        cur = c.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        c.close()


@pytest.fixture
def service_workdir():
    """A folder of the test's own under /tmp that `nobody` (PostgreSQL's user when the tests
    run as root) can enter: where managed servers put their data."""
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="versus-svc-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def versus_home(tmp_path, monkeypatch):
    """An isolated Versus config/data folder and a file keyring for this test."""
    home = tmp_path / "versus-home"
    home.mkdir()
    monkeypatch.setenv("VERSUS_HOME", str(home))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.keyring_backend.SuiteKeyring")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.delenv("VERSUS_DB_PASSWORD", raising=False)
    return home


def versus(*args: str, env: dict | None = None, timeout: float = 180,
           input: str | None = None) -> subprocess.CompletedProcess:
    """The CLI as a real process."""
    return subprocess.run([sys.executable, "-m", "app.main", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})},
                          input=input, cwd=str(Path(__file__).resolve().parents[1]))
