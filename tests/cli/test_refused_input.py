"""Bad input is refused on the laptop before anything starts: exit 2, one sentence, no run
recorded (README: "2 bad input (nothing started)")."""
import shutil

import pytest

from tests.dbs import versus


def refused(tmp_path, *args: str) -> str:
    """Run `versus run ARGS --out F`; assert exit 2, no traceback, no session file."""
    out = tmp_path / "refused.versus"
    r = versus("run", *args, "--out", str(out), timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists() and not list((tmp_path / "versus-home").rglob("*.versus"))
    return r.stderr


@pytest.mark.pg
@pytest.mark.parametrize("sets, says", [
    (["queries=select;x"], "queries takes some of select, aggregate, update"),
    (["rows=1,abc"], "rows takes whole numbers separated by commas, not 'abc'"),
    (["rows=500", "table-size=100"], "at most table-size (100), not 500"),
])
def test_perf_trace_parameters_by_their_declaration(tmp_path, versus_home, pg_db, sets, says):
    args = [x for s in ["queries=select", "seconds=1", "table-size=100", *sets]
            for x in ("--set", s)]
    assert says in refused(tmp_path, "--target", pg_db, "--workload", "perf-trace", *args)


@pytest.mark.parametrize("db", ["pg_db", "mariadb_db"])
def test_a_sysbench_test_the_hosts_sysbench_does_not_know(request, db, tmp_path, versus_home):
    if not shutil.which("sysbench"):
        pytest.skip("sysbench is not installed (Debian: apt-get install sysbench)")
    said = refused(tmp_path, "--target", request.getfixturevalue(db), "--workload", "sysbench",
                   "--set", "test=oltp_nosuch")
    assert ("sysbench cannot run test=oltp_nosuch: FATAL: Cannot find benchmark "
            "'oltp_nosuch'") in said


@pytest.mark.parametrize("args, says", [
    (["--target", "postgresql://postgres@127.0.0.1;touch x:5432/postgres"],
     "'127.0.0.1;touch x' is not a valid host name: ';' is not a letter, digit or hyphen"),
    (["--target", "postgresql://postgres@127.0.0.1:99999/postgres"],
     "99999 is not a port: ports are 1 to 65535"),
    (["--target", "mysql://root@127.0.0.1:3306/x", "--host", "root@127.0.0.1:99999"],
     "99999 is not a port: ports are 1 to 65535"),
])
def test_a_url_or_host_that_cannot_be_what_it_claims(tmp_path, versus_home, args, says):
    assert says in refused(tmp_path, *args, "--workload", "point-query", "--duration", "1")


def test_host_add_refuses_a_python_that_is_a_shell_command(versus_home):
    r = versus("host", "add", "h1", "--address", "127.0.0.1", "--python", "python3;touch /tmp/x")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "'python3;touch /tmp/x' is not a Python interpreter" in r.stderr
    r = versus("host", "add", "h1", "--address", "127.0.0.1", "--port", "99999",
               "--password-stdin", input="secret\n")
    assert r.returncode == 2 and "99999 is not a port" in r.stderr
    assert "h1" not in versus("host", "list").stdout
    assert not (versus_home / "test-keyring.json").exists()    # the password was not kept


@pytest.mark.parametrize("sets, says", [
    (["rampup=30"], "rampup must be whole minutes for HammerDB (60, 120 …), not 30 s"),
    (["use-all-warehouses=off"], "the HammerDB kit's hdb always runs with allwarehouse true"),
])
def test_hammerdb_parameters_its_cli_cannot_run(tmp_path, versus_home, pg_db, sets, says):
    args = [x for s in sets for x in ("--set", s)]
    assert says in refused(tmp_path, "--target", pg_db, "--workload", "hammerdb", *args)
