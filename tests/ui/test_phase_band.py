"""Phase names never hide data (issue 20, item 2): in Compare every phase name sits in a band
above the highest point of its pane (they were drawn at 92/80/68 % of the height, over the
curves), and a short phase's name is cut to its room with the full name on hover."""
from app.model.runset import RunRef
from app.model.scale import fit_labels, phase_labels
from tests.recorded import build_run


def test_phase_names_sit_above_every_point(make_window, qtbot, tmp_path):
    runs = [build_run(tmp_path / f"{n}.versus", n, rate=1000, p95=1, idle=50,
                      phases=("prepare", "point-query.warmup", "point-query"), seconds=10)
            for n in ("ra", "rb")]
    w = make_window()
    view = w.show_compare([RunRef(str(p)) for p in runs])
    qtbot.waitUntil(lambda: view.comp is not None and len(view.comp.runs) == 2,
                    timeout=20_000)
    for mode in ("overlay", "side-by-side"):
        view.set_mode(mode)
        qtbot.wait(50)
        checked, over, bare = 0, [], []
        for name, _run, plot in view.panes.plots:
            vb = plot.getViewBox()
            top = max((c.yData.max() for c in plot.listDataItems()
                       if c.yData is not None and len(c.yData)), default=None)
            if top is None or plot.getAxis("left").logMode:
                continue
            for item in plot.items:
                label = getattr(item, "label", None)
                if label is None or not label.isVisible() or not label.toPlainText():
                    continue
                rect = vb.mapSceneToView(label.sceneBoundingRect()).boundingRect()
                if rect.top() <= top:
                    over.append((name, label.toPlainText(), rect.top(), top))
                if not label.toolTip():
                    bare.append(label.toPlainText())
                checked += 1
        assert checked >= 3, mode
        assert not over, (mode, over)                  # no name where a curve can be
        assert not bare, (mode, bare)                  # every name has its full one on hover


def test_a_short_phase_is_cut_to_its_room_with_its_full_name_kept():
    marks = phase_labels([(0, "prepare"), (8, "point-query.warmup"), (14, "point-query")],
                         0, 100, min_gap=0.01)
    fitted = fit_labels(marks, 0, 100, glyphs=150)
    assert [f[3] for f in fitted] == ["prepare", "point-query.warmup", "point-query"]
    assert fitted[0][1] == "prepare"                       # 12 glyphs of room: fits
    assert fitted[1][1] == "point-…"                       # 9 glyphs, 2 kept free
    assert fitted[2][1] == "point-query"
    # near the right edge names go left of their lines: two in one gap share it
    marks = phase_labels([(0, "prepare"), (80, "update-index"), (90, "insert.warmup")],
                         0, 100, min_gap=0.01)
    fitted = fit_labels(marks, 0, 100, glyphs=150)
    assert [f[2] for f in fitted] == [False, False, True]
    gap = (90 - 80) * 1.5                                  # glyphs between the two lines
    assert len(fitted[1][1]) + len(fitted[2][1]) < gap, fitted     # they share it
