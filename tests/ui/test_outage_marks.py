"""Every chart marks an outage (reconnect=on): the live dashboard, the saved-run view, the
compare view and the exported charts shade the time the virtual users were down and mark the
first error as "outage 1" (tests/fixtures/streams/point-query-pg-outage.jsonl, a real run
whose private PostgreSQL was killed and started again)."""
from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor

from app.analysis.results import new_store
from app.model.runset import RunRef
from tests.recorded import load, session_of

NAME = "point-query-pg-outage"


@pytest.fixture
def outage():
    return next(e for e in load(NAME) if e["kind"] == "outage" and e["state"] == "end")


def _regions(plot: pg.PlotItem) -> list[tuple[float, float]]:
    return [tuple(round(x, 3) for x in item.getRegion())
            for item in plot.items if isinstance(item, pg.LinearRegionItem)]


def _labels(plot: pg.PlotItem) -> list[str]:
    return [item.label.toPlainText().strip() for item in plot.items
            if isinstance(item, pg.InfiniteLine) and item.label is not None]


def _reddish(img, x: int, y: int) -> bool:
    c = QColor(img.pixelColor(x, y))
    return c.red() > c.green() + 15 and c.red() > c.blue() + 15


def test_live_dashboard_shades_the_outage_on_every_chart(qtbot, tmp_path, outage):
    from app.ui.charts.dashboard import DashboardWidget
    store = new_store()
    w = DashboardWidget(store)
    qtbot.addWidget(w)
    w.resize(1100, 800)
    w.show()
    evs = load(NAME)
    cut = next(i for i, e in enumerate(evs) if e["kind"] == "outage")
    store.ingest(evs[:cut + 1])               # the outage has started, nobody is back yet
    w.refresh(force=True)
    t0 = outage["first_error_t"]
    for plot in w.plots.values():
        ((a, b),) = _regions(plot)
        assert a == pytest.approx(t0, abs=1e-3) and b == pytest.approx(store.state().last_t,
                                                                       abs=1e-3)
    assert "outage 1" in _labels(w.plots["throughput"])
    store.ingest(evs[cut + 1:])
    w.refresh(force=True)
    for plot in w.plots.values():
        assert _regions(plot) == [(pytest.approx(t0, abs=1e-3),
                                   pytest.approx(outage["reconnected_t"], abs=1e-3))]
    img = w.grab().toImage()
    img.save(str(tmp_path / "live-outage.png"))
    plot = w.plots["throughput"]
    vb = plot.getViewBox()
    mid = vb.mapViewToScene(pg.Point((t0 + outage["reconnected_t"]) / 2, 0))
    top = vb.sceneBoundingRect().top() + 5
    assert _reddish(img, int(mid.x()), int(top + 20))


def test_saved_run_view_marks_and_names_the_outage(qtbot, tmp_path, outage):
    from app.ui.saved.session_view import SessionViewWidget, load_run
    path = session_of(NAME, tmp_path)
    view = SessionViewWidget()
    qtbot.addWidget(view)
    view.resize(1300, 900)
    view.show()
    loaded = load_run(path, outage_run_id())
    view.show_run(loaded)
    plot = view.dashboard.plots["throughput"]
    assert _regions(plot) == [(pytest.approx(outage["first_error_t"], abs=1e-3),
                               pytest.approx(outage["reconnected_t"], abs=1e-3))]
    assert "outage 1 in measure at" in view.result.text()
    assert "reconnected after" in view.result.text() and view.result.isVisibleTo(view)
    view.grab().save(str(tmp_path / "saved-run-outage.png"))


def outage_run_id() -> str:
    return load(NAME)[0]["run_id"]


def test_compare_view_and_export_shade_the_outage(qtbot, tmp_path, outage):
    from app.ui.charts.dashboard import configure_pyqtgraph
    from app.ui.compare.view import CompareWidget
    from app.ui.charts.render import render_image
    from app.analysis.compare import load_comparison
    configure_pyqtgraph()
    refs = [RunRef(str(session_of(NAME, tmp_path))), RunRef(str(session_of("point-query-pg",
                                                                            tmp_path)))]
    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.resize(1300, 850)
    v.show()
    qtbot.waitExposed(v, timeout=5_000)
    with qtbot.waitSignal(v.comparison_loaded, timeout=60_000):
        v.set_runs(refs)
    shaded = [(name, run) for name, run, plot in v.panes.plots if _regions(plot)]
    assert shaded and {name for name, _ in shaded} == {name for name, _r, _p in v.panes.plots}
    v.grab().save(str(tmp_path / "compare-outage.png"))
    v.clock.pause()
    v.tasks.wait(10_000)
    comp = load_comparison(refs)
    img = render_image(comp, "throughput", (1280, 720))
    img.save(str(tmp_path / "export-outage.png"))
    # the shaded stretch is at the outage's time on the exported chart's time axis
    from app.ui.charts.render import ChartScene
    scene = ChartScene(comp, "throughput", (1280, 720))
    (plot,) = scene.plots
    assert _regions(plot) == [(pytest.approx(outage["first_error_t"], abs=1e-3),
                               pytest.approx(outage["reconnected_t"], abs=1e-3))]
    assert "outage 1" in _labels(plot)
    vb = plot.getViewBox()
    mid = vb.mapViewToScene(pg.Point((outage["first_error_t"] + outage["reconnected_t"]) / 2,
                                     0))
    assert _reddish(img, int(mid.x()), int(vb.sceneBoundingRect().top() + 30))
