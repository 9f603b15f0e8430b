"""Runs that go wrong on this computer: damaged stream lines, a server that dies mid-run."""
import tempfile
import shutil
import threading
from pathlib import Path

import os

from app.remote.embedded import EmbeddedPostgres
from app.remote.runner import RunController, RunRequest
from app.store.catalog import Catalog
from app.store.session import SessionFile


def test_garbage_line_in_the_stream_is_reported_and_nothing_is_lost(versus_home, pg_db,
                                                                  tmp_path):
    out = tmp_path / "g.versus"
    statuses = []
    injected = threading.Event()

    def on_events(run_id, evs):
        if not injected.is_set() and any(e["kind"] == "sample" for e in evs):
            injected.set()
            spool = versus_home / "host" / "runs" / run_id / "events.jsonl"    # VERSUS_HOME
            with open(spool, "ab") as f:
                f.write(b"Segmentation fault (core dumped)\n")

    req = RunRequest(target=pg_db, params={"duration": 3, "table-size": 1000}, session_path=out)
    outcome = RunController(req, Catalog(), on_events=on_events,
                            on_status=statuses.append).run()
    assert injected.is_set()
    assert outcome.status == "ok" and outcome.skipped_lines == 1
    assert "were not events and were skipped" in outcome.reason
    assert any("Segmentation fault" in s for s in statuses)
    with SessionFile(out) as s:
        rec = s.run(outcome.run_id)
        kinds = [e["kind"] for e in s.events(outcome.run_id)]
    assert rec.events == rec.last_seq and kinds[-1] == "end"


def test_server_down_mid_run_keeps_what_was_recorded(versus_home, tmp_path):
    base = Path(tempfile.mkdtemp(prefix="versus-emb-", dir="/tmp"))
    os.chmod(base, 0o755)          # the test's own folder; the server may run as 'nobody'
    pg = EmbeddedPostgres(base)
    try:
        url = pg.start()
        out = tmp_path / "down.versus"
        killed = threading.Event()

        def on_events(run_id, evs):
            if not killed.is_set() and sum(e["kind"] == "sample" for e in evs) >= 1:
                killed.set()
                threading.Thread(target=pg.stop, daemon=True).start()

        req = RunRequest(target=url, params={"duration": 60, "table-size": 1000},
                         session_path=out)
        outcome = RunController(req, Catalog(), on_events=on_events).run()
    finally:
        pg.stop()
        shutil.rmtree(base, ignore_errors=True)
    assert killed.is_set()
    assert outcome.status == "failed"
    assert "virtual user" in outcome.reason or "connection" in outcome.reason
    with SessionFile(out) as s:
        rec = s.run(outcome.run_id)
        evs = s.events(outcome.run_id)
    assert rec.status == "failed" and rec.events == rec.last_seq
    assert any(e["kind"] == "sample" and e["ops"]["point-query"] > 0 for e in evs)
    assert any(e["kind"] == "error" and "connection" in e["message"] for e in evs)
