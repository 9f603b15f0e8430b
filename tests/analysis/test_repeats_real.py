"""Repeats on real runs: point-query against the machine's PostgreSQL in interleaved rounds.
The same configuration against itself is within noise and never fails the gate."""
from __future__ import annotations

import pytest

from app.analysis.matrix import gate, load_sides
from app.model.runset import SAME, RunRef
from tests.dbs import versus

pytestmark = pytest.mark.pg
ROUNDS = 3


@pytest.fixture(scope="module")
def rounds(tmp_path_factory, request):
    """ROUNDS rounds of two 2-s runs: A (1 client), then A again into a second file, so drift
    on the host falls on both sides alike."""
    import psycopg
    from tests.dbs import PG, unique
    d = tmp_path_factory.mktemp("rounds")
    home = d / "home"
    env = {"VERSUS_HOME": str(home), "PYTHON_KEYRING_BACKEND":
           "tests.keyring_backend.SuiteKeyring", "XDG_DATA_HOME": str(home / "xdg")}
    name = unique()
    with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    files = {k: d / f"{k}.versus" for k in ("a", "a2")}
    try:
        for _ in range(ROUNDS):
            for key, clients in (("a", 1), ("a2", 1)):
                r = versus("run", "--target", f"postgresql://postgres@127.0.0.1:5432/{name}",
                           "--workload", "point-query", "--duration", "2",
                           "--set", "table-size=2000", "--set", f"clients={clients}",
                           "--out", str(files[key]), env=env)
                assert r.returncode == 0, r.stdout + r.stderr
    finally:
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return files


def test_the_same_configuration_is_within_noise(rounds):
    comp, sides = load_sides([RunRef(str(rounds["a"])), RunRef(str(rounds["a2"]))])
    assert [len(s) for s in sides] == [ROUNDS, ROUNDS]
    g = gate(comp, sides, 0.95)
    [row] = g.rows
    assert row.interval is not None and row.interval.method == "paired"
    assert row.interval.cls(lower_is_better=False) == SAME
    assert g.outcome in ("pass", "inconclusive")
    r = versus("compare", str(rounds["a"]), str(rounds["a2"]), "--fail-below", "0.95")
    assert r.returncode in (0, 4), r.stdout + r.stderr
    assert ("PASS" in r.stdout) if r.returncode == 0 else ("INCONCLUSIVE" in r.stdout)
