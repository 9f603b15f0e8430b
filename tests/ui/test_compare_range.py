"""Compare's time axis (issue 20, item 6): it spans the runs shown, recomputed when its runs
change (it kept the previous runs' range, hiding most of longer ones), and the side-by-side
panes share it."""
from app.model.runset import RunRef
from tests.recorded import build_run


def test_compare_spans_the_new_runs_when_its_runs_change(make_window, qtbot, tmp_path):
    short = [build_run(tmp_path / f"s{n}.versus", f"s{n}", rate=900, p95=1, idle=50,
                       seconds=10) for n in (1, 2)]
    long = [build_run(tmp_path / f"l{n}.versus", f"l{n}", rate=900, p95=1, idle=50,
                      seconds=100) for n in (1, 2)]
    w = make_window()
    view = w.show_compare([RunRef(str(p)) for p in short])
    qtbot.waitUntil(lambda: view.comp is not None and len(view.comp.runs) == 2,
                    timeout=20_000)
    assert view.panes.x_view()[1] < 20
    view.set_runs([RunRef(str(p)) for p in long])
    qtbot.waitUntil(lambda: view.comp.runs[0].ref.run_id == "l1", timeout=20_000)
    lo, hi = view.panes.x_view()
    assert lo <= 0 and hi >= 100, (lo, hi)
    # side by side: every pane on the one time axis
    view.set_mode("side-by-side")
    ranges = {tuple(round(x, 6) for x in p.getViewBox().viewRange()[0])
              for _, _, p in view.panes.plots}
    assert len(ranges) == 1 and min(ranges)[1] >= 100, ranges
