"""A dark theme for the screen, chosen or following the desktop, while slides and exports
stay light; and HiDPI: a window at scale 2 draws (and replays) at twice the pixels."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from app.model.runset import RunRef
from tests.recorded import build_run


@pytest.fixture
def light_after():
    yield
    from app.ui.common import theme
    theme.apply(QApplication.instance(), "light")


def test_dark_theme_on_screen_light_slides(make_window, qtbot, tmp_path, light_after):
    from app.ui.common import theme
    from app.ui.charts.render import render_image
    from app.analysis.compare import load_comparison
    w = make_window()
    w.actions["theme_dark"].trigger()
    assert theme.current() == "dark" and w.settings.get("ui/theme") == "dark"
    assert QApplication.instance().palette().color(QPalette.ColorRole.Window).lightness() < 60
    bg = w.dashboard.graphics.backgroundBrush().color()
    assert bg.lightness() < 60
    assert theme.colours()["chart_title"] in w.dashboard.plots["throughput"].titleLabel.text
    # an export made now is still a light slide: white page, dark title text
    a = build_run(tmp_path / "a.versus", "ra", rate=1000, p95=2.0, idle=50)
    img = render_image(load_comparison([RunRef(str(a))]), "throughput", (1280, 720))
    assert img.pixelColor(5, 5).name() == "#ffffff"
    dark_text = sum(1 for x in range(400, 880, 2) for y in range(5, 45)
                    if img.pixelColor(x, y).lightness() < 80)
    assert dark_text > 50
    # the live charts' hover readout is a dark box with light text too
    hair = w.dashboard.crosshair
    hair.show_at(1.0)
    _, box = hair._items[id(w.dashboard.plots["throughput"])]
    assert box.fill.color().lightness() < 60 and "#e6edf3" in box.textItem.toHtml()
    w.actions["theme_light"].trigger()
    assert theme.current() == "light"
    assert w.dashboard.graphics.backgroundBrush().color().lightness() > 200
    hair.show_at(1.0)                       # and light again once the theme is
    assert box.fill.color().lightness() > 200


def test_system_theme_follows_the_desktop(monkeypatch):
    from app.ui.common import theme
    monkeypatch.setattr(theme, "system_is_dark", lambda: True)
    assert theme.resolve("system") == "dark" and theme.resolve("light") == "light"
    monkeypatch.setattr(theme, "system_is_dark", lambda: False)
    assert theme.resolve("system") == "light" and theme.resolve("dark") == "dark"


HIDPI = r"""
import sys, tempfile
from pathlib import Path
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.ui.charts.dashboard import configure_pyqtgraph; configure_pyqtgraph()
from app.ui.compare.view import CompareWidget
from app.model.runset import RunRef
from tests.recorded import build_run
d = Path(tempfile.mkdtemp())
a = build_run(d / "a.versus", "ra", rate=1000, p95=2.0, idle=50, seconds=60)
v = CompareWidget(export_dir=d); v.resize(1000, 700); v.show()
v.set_runs([RunRef(str(a))]); v.tasks.wait(10000)
for _ in range(100):
    app.processEvents()
print("grab", v.grab().width(), v.grab().devicePixelRatio())
v.panes.freeze(20.0)
ov = v.overlay
img = ov.layer.toImage()
x0, x1, top, bottom = ov._spans[0]
v0, v1 = ov._ranges[0]
cx = x0 + (20.0 - v0) / (v1 - v0) * (x1 - x0)
r = ov.layer.devicePixelRatio()
def lit(a, b):
    return any(img.pixelColor(x, y).alpha() > 100 for x in range(int(a * r), int(b * r))
               for y in range(int(top * r), int(bottom * r)))
print("ratio", r, "left", lit(x0, cx - 2), "right", lit(cx + 3, x1))
"""


def test_hidpi_scale_2_draws_and_replays_at_twice_the_pixels(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QT_SCALE_FACTOR": "2",
           "PYTHONPATH": str(Path.cwd())}
    out = subprocess.run([sys.executable, "-c", HIDPI], env=env, capture_output=True,
                         text=True, timeout=120, cwd=str(Path.cwd()))
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    width, ratio = lines["grab"].split()
    assert int(width) == 2000 and float(ratio) == 2.0
    assert lines["ratio"] == "2.0 left True right False"
