import sqlite3

import pytest

from app.store.session import SCHEMA_VERSION, SessionError, SessionFile


def _ev(seq, kind="log", **kw):
    return {"v": 1, "seq": seq, "t": seq * 0.1, "kind": kind, **kw}


def test_events_are_stored_exactly_once(tmp_path):
    s = SessionFile(tmp_path / "a.versus", readonly=False)
    s.add_run("r1", "point-query", "t", "local", {"clients": 2})
    assert s.append_events("r1", [_ev(1), _ev(2), _ev(3)]) == 3
    assert s.append_events("r1", [_ev(2), _ev(3), _ev(4)]) == 1     # a resumed stream
    s.close()
    r = SessionFile(tmp_path / "a.versus")
    (run,) = r.runs()
    assert (run.events, run.last_seq, run.params) == (4, 4, {"clients": 2})
    assert [e["seq"] for e in r.events("r1")] == [1, 2, 3, 4]


def test_written_events_survive_without_close(tmp_path):
    s = SessionFile(tmp_path / "b.versus", readonly=False)
    s.add_run("r1", "w", "t", "h", {})
    s.append_events("r1", [_ev(1), _ev(2)])
    # a second reader sees committed rows while the writer is still open (WAL)
    assert SessionFile(tmp_path / "b.versus").run("r1").events == 2


def test_corrupt_file_is_refused_and_left_unchanged(tmp_path):
    p = tmp_path / "corrupt.versus"
    junk = b"this is not sqlite at all\x00\x01" * 100
    p.write_bytes(junk)
    for ro in (True, False):
        with pytest.raises(SessionError, match="not a Versus session file or it is damaged"):
            SessionFile(p, readonly=ro)
    assert p.read_bytes() == junk


def test_other_sqlite_file_is_refused(tmp_path):
    p = tmp_path / "other.db"
    c = sqlite3.connect(p); c.execute("CREATE TABLE x (a)"); c.commit(); c.close()
    with pytest.raises(SessionError, match="not a Versus session"):
        SessionFile(p, readonly=False)


def test_newer_session_format_is_refused(tmp_path):
    p = tmp_path / "new.versus"
    SessionFile(p, readonly=False).close()
    c = sqlite3.connect(p)
    c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    c.commit(); c.close()
    with pytest.raises(SessionError, match="newer Versus"):
        SessionFile(p)


def test_session_files_are_readable_by_their_owner_only(tmp_path):
    """Issue 15, item 12: a session (parameters, hosts, errors) is not world-readable, nor
    are SQLite's -wal and -shm files beside it, whatever the umask."""
    import os
    import stat
    old = os.umask(0o022)
    try:
        s = SessionFile(tmp_path / "private.versus", readonly=False)
        s.add_run("r1", "w", "t", "h", {})
        s.append_events("r1", [_ev(1)])
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
        s.close()
    finally:
        os.umask(old)
    assert modes == {"private.versus": 0o600, "private.versus-wal": 0o600,
                     "private.versus-shm": 0o600}
