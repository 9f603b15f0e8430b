"""The plan view: build a matrix, reorder and skip before the start, then a real plan on a
managed instance of Debian's PostgreSQL 15 (2 s runs), followed through its states."""
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.model.plan import parse_plan

PG15 = "/usr/lib/postgresql/15/bin"


@pytest.fixture
def workdir():
    """Data directories go here: our own folder, enterable by `nobody` (PostgreSQL as root)."""
    d = tempfile.mkdtemp(prefix="versus-plan-ui-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def make_plan_widget(qtbot, tmp_path, versus_home):
    from app.store.catalog import Catalog
    from app.ui.plan.view import PlanWidget
    made = []

    def make():
        w = PlanWidget(Catalog(tmp_path / "config"))
        qtbot.addWidget(w)
        w.resize(1200, 640)
        w.show()
        made.append(w)
        qtbot.waitUntil(lambda: w.profile_list.count() > 0, timeout=10_000)
        return w

    yield make
    for w in made:
        w.detach()
        qtbot.waitUntil(lambda: not w.is_following(), timeout=60_000)
        w.tasks.wait(10_000)


def labels(w):
    return [r.label for r in w.model.rows]


def states(w):
    return [r.state for r in w.model.rows]


def test_build_a_matrix_of_targets_profiles_and_values(make_plan_widget, qtbot, workdir):
    w = make_plan_widget()
    w.add_managed_target(PG15, "pg15", workdir)
    w.set_profiles_checked(["defaults", "bench"])
    w.params_edit.setText("duration=2, table-size=1000")
    w.vary_combo.setCurrentText("clients")
    w.values_edit.setText("1, 4, 16")
    with qtbot.waitSignal(w.plan_built, timeout=5000) as built:
        qtbot.mouseClick(w.build_button, Qt.MouseButton.LeftButton)
    assert built.args == [6]
    assert labels(w)[:3] == ["pg15 / bench / clients=1", "pg15 / bench / clients=4",
                             "pg15 / bench / clients=16"]
    assert set(states(w)) == {"waiting"}
    assert w.model.data(w.model.index(0, w.model.COLUMNS.index("Planned"))) == "2 s"
    assert w.start_button.isEnabled()
    # reorder before the start: the last run first
    for row in (5, 4, 3, 2, 1):
        w.select_row(row)
        qtbot.mouseClick(w.up_button, Qt.MouseButton.LeftButton)
    assert labels(w)[0] == "pg15 / defaults / clients=16"
    # skip one: it is left out of what is started, and the order is kept
    w.select_row(1)
    qtbot.mouseClick(w.skip_button, Qt.MouseButton.LeftButton)
    assert states(w)[1] == "skipped"
    plan = w.plan_to_run()
    assert [r.label for r in plan.expand()] == [labels(w)[0]] + labels(w)[2:]
    # what is saved opens again as the same runs
    out = os.path.join(workdir, "saved.toml")
    with qtbot.waitSignal(w.plan_saved, timeout=5000):
        w.save_plan(Path(out))
    again = parse_plan(open(out).read())
    assert [r.label for r in again.expand()] == [r.label for r in plan.expand()]


def test_the_embedded_target_is_listed_with_its_reason(make_plan_widget):
    w = make_plan_widget()
    items = [w.target_list.item(i) for i in range(w.target_list.count())]
    emb = next(it for it in items if it.data(0x0100)[1] == "embedded-postgres")
    assert "not in plans" in emb.text() and "managed instance" in emb.toolTip()
    assert not emb.flags() & Qt.ItemFlag.ItemIsUserCheckable


def test_a_bad_matrix_is_a_sentence(make_plan_widget, qtbot):
    w = make_plan_widget()
    qtbot.mouseClick(w.build_button, Qt.MouseButton.LeftButton)
    assert "tick at least one target" in w.message.text()
    w.add_managed_target(PG15, "pg15")
    w.params_edit.setText("duration")
    qtbot.mouseClick(w.build_button, Qt.MouseButton.LeftButton)
    assert "name=value" in w.message.text() and "Traceback" not in w.message.text()


def test_a_real_plan_on_postgresql_15_runs_skips_and_reorders(make_plan_widget, qtbot,
                                                              workdir, tmp_path):
    w = make_plan_widget()
    w.add_managed_target(PG15, "pg15", workdir)
    w.params_edit.setText("duration=2, table-size=1000")
    w.vary_combo.setCurrentText("clients")
    w.values_edit.setText("1, 2, 4")
    assert w.build()
    assert len(w.model.rows) == 3
    seen = []
    w.plan_state_changed.connect(lambda st: seen.append({r.label: r.state for r in st.runs}))
    with qtbot.waitSignal(w.plan_started, timeout=120_000):
        assert w.start(session_path=tmp_path / "plan.versus")
    assert w.plan_id.startswith("plan-")
    qtbot.waitUntil(lambda: len(w.model.rows) == 3 and all(r.run_id for r in w.model.rows),
                    timeout=30_000)
    ids = [r.run_id for r in w.model.rows]
    # while the first run goes: move the last one before the second, skip the (new) third
    w.select_row(2)
    qtbot.mouseClick(w.up_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.state is not None and
                    [r.run_id for r in w.state.runs][1:] == [ids[2], ids[1]], timeout=30_000)
    w.select_row(2)
    assert w.model.rows[2].run_id == ids[1]
    qtbot.mouseClick(w.skip_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(w.plan_ended, timeout=240_000) as ended:
        pass
    outcome = ended.args[0]
    assert getattr(outcome, "state", outcome) == "done", outcome
    final = {r.run_id: r.state for r in w.model.rows}
    assert final == {ids[0]: "done", ids[2]: "done", ids[1]: "skipped"}
    assert [r.run_id for r in w.model.rows] == [ids[0], ids[2], ids[1]]
    # states were seen on their way: something running before it was done
    first = w.model.rows[0].label
    assert any(s.get(first) in ("loading", "running") for s in seen)
    assert "done" in w.status_label.text()
    assert outcome.session_path == tmp_path / "plan.versus"
    assert not w.cancel_button.isEnabled() and not w.start_button.isEnabled()
    # the plan's thread may still be winding down just after plan_ended
    qtbot.waitUntil(lambda: w.build_button.isEnabled() and w.attach_button.isEnabled(),
                    timeout=15_000)
    # each done run shows its headline result (QPS), read from the session
    col = w.model.COLUMNS.index("Result")
    qtbot.waitUntil(lambda: all(w.model.data(w.model.index(i, col)).endswith("QPS")
                                for i, r in enumerate(w.model.rows) if r.state == "done"),
                    timeout=15_000)
    from app.analysis.compare import load_comparison
    from app.model.runset import RunRef
    comp = load_comparison([RunRef(str(outcome.session_path), ids[0])])
    qps = comp.phase_values(0, "measure")["qps"]
    assert w.model.data(w.model.index(0, col)) == f"{qps:,.0f} QPS"
    # the done runs go to Compare in one click
    assert w.compare_button.isEnabled()
    with qtbot.waitSignal(w.compare_requested, timeout=5000) as asked:
        w.select_row(0)
        qtbot.mouseClick(w.compare_button, Qt.MouseButton.LeftButton)
    assert [r.run_id for r in asked.args[0]] == [ids[0]]
    w.table.clearSelection()
    assert [r.run_id for r in w.done_refs()] == [ids[0], ids[2]]
    # the Sessions list tells the plan's runs apart: position and the varying value
    from app.ui.saved.session_view import read_sessions
    entry = next(e for e in read_sessions(tmp_path, [outcome.session_path])
                 if e.path == outcome.session_path)
    labels_ = [r.label for r in entry.runs]
    assert len(set(labels_)) == len(labels_) and any("clients=4" in x for x in labels_)


def test_the_plan_action_opens_one_plan_tab(make_window):
    w = make_window()
    assert "&Plan…" in [a.text() for a in w.toolbar.actions()]
    w.actions["plan"].trigger()
    w.actions["plan"].trigger()
    assert w.tabs.currentWidget() is w.plan_widget
    assert [w.tabs.tabText(i) for i in range(w.tabs.count())].count("Plan") == 1
    w.plan_widget.tasks.wait(10_000)
