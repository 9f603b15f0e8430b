"""One damaged event row in a session file (issue 15, item 6): it is skipped and named in one
sentence (run, event, what is wrong); every other run and event of the file still shows in
`versus show`, `compare` and `export`, with exit code 3 (damaged lines skipped)."""
import json
import shutil
import sqlite3

import pytest

from app.store.session import SessionFile
from tests.dbs import versus
from tests.recorded import load

A, B = "point-query-pg", "tpcc-pg"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two recorded real runs in one session file, written as a live run writes them."""
    path = tmp_path_factory.mktemp("damaged") / "two.versus"
    ids = []
    with SessionFile(path, readonly=False) as s:
        for name in (A, B):
            evs = load(name)
            hello = evs[0]
            s.add_run(hello["run_id"], hello["workload"], "recorded", "local", hello["params"])
            for i in range(0, len(evs), 7):
                s.append_events(hello["run_id"], evs[i:i + 7])
            s.finish_run(hello["run_id"], evs[-1].get("status", "?"))
            ids.append(hello["run_id"])
    return path, ids


def _seq_of(path, run_id, kind, nth=0):
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT seq FROM events WHERE run_id = ? AND kind = ? ORDER BY seq "
                          "LIMIT 1 OFFSET ?", (run_id, kind, nth)).fetchone()[0]
    finally:
        db.close()


def _spoil(src, dst, run_id, seq, sql_body):
    """A copy of the file with one row's body changed by SQL (the row's own body is ``body``),
    its derived numbers dropped so readers derive them from the damaged body."""
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    db.execute(f"UPDATE events SET {sql_body} WHERE run_id = ? AND seq = ?", (run_id, seq))
    db.execute("DELETE FROM derived WHERE run_id = ?", (run_id,))
    db.execute("DELETE FROM derived_state WHERE run_id = ?", (run_id,))
    db.commit()
    db.close()
    return dst


# (row kind, nth of that kind, SQL that damages it, words the sentence has)
DAMAGE = {
    "invalid JSON": ("phase", 0, "body = '{\"v\":1,\"seq\":'", "not JSON"),
    "wrong types": ("hello", 0, "body = json_set(body, '$.params', 'x', '$.host', 3)",
                    "'params' is not an object"),
    "missing fields": ("sample", 3, "body = json_remove(body, '$.t')", "no 't'"),
    "unknown kind": ("host", 2, "kind = 'zork', body = json_set(body, '$.kind', 'zork')",
                     "kind 'zork'"),
    "not an object": ("summary", 0, "body = '[1, 2, 3]'", "not a JSON object"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_one_damaged_row_is_skipped_and_named_and_the_rest_shows(two_runs, tmp_path, case):
    path, (ra, rb) = two_runs
    kind, nth, sql, words = DAMAGE[case]
    seq = _seq_of(path, ra, kind, nth)
    bad = _spoil(path, tmp_path / "bad.versus", ra, seq, sql)
    good = versus("show", "--json", str(path))
    assert good.returncode == 0 and not good.stderr
    good_runs = {r["id"]: r for r in json.loads(good.stdout)["runs"]}

    r = versus("show", str(bad))
    assert "Traceback" not in r.stderr
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines                   # one sentence, for the one row
    assert f"run {ra}" in lines[0] and f"event {seq} " in lines[0] and words in lines[0]
    assert f"run {ra}" in r.stdout and f"run {rb}" in r.stdout

    r = versus("show", "--json", str(bad))
    assert r.returncode == 3 and "Traceback" not in r.stderr
    shown = json.loads(r.stdout)
    runs = {x["id"]: x for x in shown["runs"]}
    assert len(shown["damaged"]) == 1 and f"event {seq} " in shown["damaged"][0]
    # the other run is untouched; the damaged run keeps every phase it had
    assert runs[rb]["phases"] == good_runs[rb]["phases"]
    assert ([p["name"] for p in runs[ra]["phases"]]
            == [p["name"] for p in good_runs[ra]["phases"]] or kind == "phase")
    assert runs[ra]["events"] == good_runs[ra]["events"]     # the row is still in the file

    r = versus("compare", f"{bad}:1", f"{bad}:2", "--json")
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
    assert f"event {seq} " in r.stderr and words in r.stderr
    assert len(json.loads(r.stdout)["runs"]) == 2

    for opt, out in (("--table", "t.md"), ("--series", "s.csv")):
        r = versus("export", f"{bad}:1", f"{bad}:2", opt, str(tmp_path / out))
        assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
        assert f"event {seq} " in r.stderr and words in r.stderr
        assert (tmp_path / out).stat().st_size > 0


def test_damaged_run_row_is_named_and_the_run_still_shows(two_runs, tmp_path):
    path, (ra, rb) = two_runs
    bad = tmp_path / "bad.versus"
    shutil.copy(path, bad)
    db = sqlite3.connect(bad)
    db.execute("UPDATE runs SET params = '{oops' WHERE id = ?", (ra,))
    db.commit()
    db.close()
    r = versus("show", str(bad))
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert f"run {ra}: its stored parameters are damaged" in r.stderr
    assert f"run {ra}" in r.stdout and f"run {rb}" in r.stdout


def test_a_long_garbage_value_is_not_quoted_whole(two_runs, tmp_path):
    path, (ra, _rb) = two_runs
    seq = _seq_of(path, ra, "phase")
    bad = _spoil(path, tmp_path / "bad.versus", ra, seq,
                 "seq = printf('%.500c', 'Z'), body = printf('%.500c', 'Q')")
    r = versus("show", str(bad))
    assert r.returncode == 3 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert "Z" * 40 + "… (500 characters) (phase) was skipped: its body is not JSON" in line
    assert len(line) < 250 and "Q" not in line


def test_sound_file_reports_nothing(two_runs):
    path, ids = two_runs
    with SessionFile(path) as s:
        for rid in ids:
            s.events(rid)
            assert s.check(rid) == []
        assert s.damaged() == []
