"""Replay that plays as if live (issue 14): while the clock runs the lines grow up to the
cursor and no further; paused, every line is whole again; dragging the scrubber moves the
cursor over a still picture of the whole lines; going back redraws the lines from there."""
import pytest
from PySide6.QtGui import QColor

from app.model.runset import RunRef
from tests.recorded import build_run


@pytest.fixture
def view(qtbot, tmp_path):
    from app.ui.charts.dashboard import configure_pyqtgraph
    from app.ui.compare.view import CompareWidget
    configure_pyqtgraph()
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50, seconds=60)
    b = build_run(tmp_path / "b.versus", "rb", rate=1300, p95=1.5, idle=40, seconds=60)
    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.resize(1300, 850)
    v.show()
    qtbot.waitExposed(v)
    with qtbot.waitSignal(v.comparison_loaded, timeout=15_000):
        v.set_runs([RunRef(str(a)), RunRef(str(b))])
    yield v
    v.clock.pause()
    v.tasks.wait(5000)


def run_pixels(img, colours, x0, x1, top, bottom):
    """Columns in [x0, x1) of the band [top, bottom] that hold a pixel of a run's colour."""
    want = [QColor(c) for c in colours]
    cols = set()
    for x in range(max(0, int(x0)), min(img.width(), int(x1))):
        for y in range(max(0, int(top)), min(img.height(), int(bottom))):
            c = img.pixelColor(x, y)
            if c.alpha() > 100 and any(abs(c.red() - w.red()) + abs(c.green() - w.green())
                                       + abs(c.blue() - w.blue()) < 90 for w in want):
                cols.add(x)
                break
    return cols


def cursor_x(ov, k):
    x0, x1, _top, _bottom = ov._spans[k]
    v0, v1 = ov._ranges[k]
    return x0 + (ov.t - v0) / (v1 - v0) * (x1 - x0)


def test_lines_grow_up_to_the_cursor_while_playing(view, qtbot):
    v = view
    colours = [r.colour for r in v.comp.runs]
    v.clock.set_position(20.0)
    v.clock.play()
    qtbot.waitUntil(lambda: v.overlay.frozen, timeout=5000)
    v.clock.pause()                     # hold still: the picture as the last frame left it
    v.panes.freeze(20.0)                # (pausing thaws; freeze again at a known time)
    ov = v.overlay
    assert ov.frozen and ov.grow
    k = [p for _n, _r, p in v.plots].index(v.plot("throughput"))
    x0, x1, top, bottom = ov._spans[k]
    cx = cursor_x(ov, k)
    layer = ov.layer.toImage()
    ratio = ov.layer.devicePixelRatio()
    scale = lambda x: x * ratio      # noqa: E731
    left = run_pixels(layer, colours, scale(x0), scale(cx - 2), scale(top), scale(bottom))
    right = run_pixels(layer, colours, scale(cx + 3), scale(x1), scale(top), scale(bottom))
    assert left and not right
    # the still picture under the layer has no lines (they are the layer's)
    bg = run_pixels(ov.pixmap.toImage(), colours, scale(x0), scale(x1), scale(top),
                    scale(bottom))
    assert not bg
    # on: more of the lines; back: redrawn from there
    v.panes.set_time(40.0)
    more = run_pixels(ov.layer.toImage(), colours, scale(cx + 3), scale(cursor_x(ov, k) - 2),
                      scale(top), scale(bottom))
    assert more
    v.panes.set_time(10.0)
    after = run_pixels(ov.layer.toImage(), colours, scale(cursor_x(ov, k) + 3), scale(x1),
                       scale(top), scale(bottom))
    assert not after
    v.panes.thaw()
    assert not ov.frozen and all(c.isVisible() for c in v.cursors)


def test_paused_lines_are_whole_and_scrubbing_uses_a_still_picture(view, qtbot):
    v = view
    colours = [r.colour for r in v.comp.runs]
    assert not v.overlay.frozen
    assert all(c.isVisible() for c in v.curves.values())
    v.replay_bar.scrub_started.emit()
    ov = v.overlay
    assert ov.frozen and not ov.grow
    v.clock.set_position(15.0)
    k = [p for _n, _r, p in v.plots].index(v.plot("throughput"))
    x0, x1, top, bottom = ov._spans[k]
    r = ov.pixmap.devicePixelRatio()
    whole = run_pixels(ov.pixmap.toImage(), colours, (cursor_x(ov, k) + 3) * r, x1 * r,
                       top * r, bottom * r)
    assert whole                       # the lines right of the cursor are in the picture
    assert ov.t == 15.0
    v.replay_bar.scrub_ended.emit()
    assert not ov.frozen
