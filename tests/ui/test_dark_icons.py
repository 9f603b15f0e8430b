"""Run and Stop in the dark theme (issue 20, item 10): their glyphs are drawn in a colour
that shows on their buttons (the style's black media glyphs vanished on dark grey)."""


def _mean_opaque_lightness(icon) -> float:
    img = icon.pixmap(32, 32).toImage()
    vals = [img.pixelColor(x, y) for x in range(img.width()) for y in range(img.height())]
    opaque = [c.lightness() for c in vals if c.alpha() > 128]
    assert opaque, "the icon draws nothing"
    return sum(opaque) / len(opaque)


def test_run_and_stop_glyphs_show_in_the_dark_theme(make_window, qtbot):
    w = make_window()
    try:
        w.set_theme("dark")
        qtbot.wait(20)
        assert _mean_opaque_lightness(w.stop_button.icon()) > 160
        assert _mean_opaque_lightness(w.run_button.icon()) > 160
        assert _mean_opaque_lightness(w.actions["run"].icon()) > 160
        w.set_theme("light")
        qtbot.wait(20)
        assert _mean_opaque_lightness(w.stop_button.icon()) < 100     # dark on light
    finally:
        w.set_theme("light")
