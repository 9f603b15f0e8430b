"""Outages read back (tests/fixtures/streams/point-query-pg-outage.jsonl: a real point-query
run with reconnect=on whose private PostgreSQL was killed and started again mid-run, recorded
by tests/workloads/test_outage.py): the live store, the comparison's one mark list, `show`
in text and JSON, and the slide deck's marks."""
from __future__ import annotations

import json

from app.analysis.compare import load_comparison
from app.analysis.deck import deck_chart
from app.analysis.results import new_store
from app.model.outages import describe, outages
from app.model.runset import RunRef
from tests.dbs import versus
from tests.recorded import load, session_of

NAME = "point-query-pg-outage"


def _end_event() -> dict:
    return next(e for e in load(NAME) if e["kind"] == "outage" and e["state"] == "end")


def test_outage_model_reads_start_and_end_and_an_open_outage():
    evs = load(NAME)
    (o,) = outages(evs)
    end = _end_event()
    assert (o.id, o.phase, o.t0, o.t_back) == (1, "measure", end["first_error_t"],
                                               end["reconnected_t"])
    assert o.t0 < o.t_back <= o.down_until(999.0)
    start_only = [e for e in evs if e["kind"] == "outage" and e["state"] == "start"]
    (open_one,) = outages(start_only)
    assert open_one.t_back is None and open_one.down_until(42.0) == 42.0
    text = describe(end)
    assert text.startswith("outage 1 in measure at ") and "reconnected after" in text
    assert "errors: connection refused" in text


def test_live_store_lists_the_outage_and_notes_it():
    store = new_store()
    evs = load(NAME)
    for i in range(0, len(evs), 5):
        store.ingest(evs[i:i + 5])
    (o,) = store.outages()
    assert o.t_back == _end_event()["reconnected_t"]
    notes = [n.text for n in store.notes_after(0)]
    assert any("Outage 1 in measure: virtual user" in t for t in notes), notes
    end = next(t for t in notes if t.startswith("Outage 1 in measure at"))
    assert "reconnected after" in end
    # the sentence keeps its units' case ("QPS", not "qps": str.capitalize lowered them)
    assert " QPS after " in end and "qps" not in end, end


def test_a_clause_becomes_a_sentence_with_its_case_kept():
    from app.model.text import as_sentence
    assert as_sentence("the disk holding /tmp/x.versus is full; 16,813 QPS") == \
        "The disk holding /tmp/x.versus is full; 16,813 QPS."
    assert as_sentence("PostgreSQL stopped.") == "PostgreSQL stopped."
    assert as_sentence("no keyring", end="") == "No keyring" and as_sentence("  ") == ""


def test_comparison_marks_the_outage_in_the_one_phase_mark_list(tmp_path):
    comp = load_comparison([RunRef(str(session_of(NAME, tmp_path)))])
    end = _end_event()
    marks = comp.phase_marks([0])
    assert (end["first_error_t"], "outage 1") in marks
    assert [m[1] for m in marks][:2] == ["prepare", "measure"]
    (span,) = comp.outage_spans([0])
    assert span == (end["first_error_t"], end["reconnected_t"], "outage 1")
    # the slide deck's charts take their marks from that list
    chart = deck_chart(comp, "throughput")
    assert any("outage 1" in label for _x, label in chart.panels[0].marks)


def test_show_prints_the_outage_in_text_and_json(tmp_path, versus_home):
    path = session_of(NAME, tmp_path)
    r = versus("show", str(path))
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if "outage 1 in measure" in ln)
    assert "reconnected after" in line and "virtual users affected" in line
    assert "errors: connection refused" in line
    r = versus("show", str(path), "--json")
    assert r.returncode == 0, r.stderr
    phases = {p["name"]: p for p in json.loads(r.stdout)["runs"][0]["phases"]}
    (o,) = phases["measure"]["outages"]
    assert o["reconnect_s"] > 0 and o["errors"]["connection refused"] > 0
    assert o["recovery"] == "reached" and o["recovery_s"] >= o["reconnect_s"]
    assert "outages" not in phases["prepare"]


def test_run_progress_prints_the_outage_as_it_starts_and_ends():
    import io
    from app.cli.console import Progress
    out = io.StringIO()
    Progress(out, None)("run", load(NAME))
    lines = [ln for ln in out.getvalue().splitlines() if "outage 1" in ln]
    assert len(lines) == 2, lines
    assert "lost its connection" in lines[0] and lines[0].rstrip().endswith("reconnecting")
    assert "reconnected after" in lines[1]
