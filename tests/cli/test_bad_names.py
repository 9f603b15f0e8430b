"""Hostile names get one sentence and exit 2 before anything starts, never a traceback."""
import pytest

from tests.dbs import versus


@pytest.mark.parametrize("host, says", [
    ("a..b", "empty part"),
    (".example.com", "empty part"),
    ("a" * 64 + ".example.com", "longer than 63 characters"),
    ("root@" + "b" * 70, "longer than 63 characters"),
])
def test_bad_host_name_is_one_sentence(versus_home, host, says):
    r = versus("run", "--host", host, "--target", "postgresql://u@127.0.0.1:5432/x",
               "--workload", "point-query", "--duration", "1")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and says in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = versus("host", "add", "bad", "--address", host.rpartition("@")[2])
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr


def test_out_name_too_long_or_under_a_file(versus_home, tmp_path):
    (tmp_path / "plain-file").write_text("x")
    for out, says in ((tmp_path / ("n" * 256 + ".versus"), "at most 255"),
                      (tmp_path / "plain-file" / "s.versus", "is a file, not a folder")):
        r = versus("run", "--target", "postgresql://u@127.0.0.1:5432/x", "--workload",
                   "point-query", "--duration", "1", "--out", str(out))
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr and says in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain-file", "versus-home"]
