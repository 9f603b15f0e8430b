"""Replay time: the one clock every chart, cursor and value follows, and the bar that drives it.

    clock = ReplayClock()
    bar = ReplayBar(clock, actions)         # step back, play/pause, step on; scrubber, speed
    clock.play()                            # Space does the same

The scrubber, the step buttons, the play timer, a click on a chart and a drag of a cursor all
move this one clock (STYLE.md: "Replay has exactly one clock").
"""
from __future__ import annotations

import math

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QSlider, QStyle, \
    QToolButton, QWidget

from app.model.scale import fmt_clock

RATES = (1, 2, 5, 10, 20, 50, 100)
FRAME_MS = 33                 # ~30 frames a second while playing
SLIDER_STEPS_PER_S = 10


class ReplayClock(QObject):
    """Replay time: a position on the aligned time axis, a rate, loop, playing or not."""

    position_changed = Signal(float)
    playing_changed = Signal(bool)
    rate_changed = Signal(float)
    loop_changed = Signal(bool)
    range_changed = Signal(float, float)

    def __init__(self, parent: QObject | None = None, frame_ms: int = FRAME_MS) -> None:
        super().__init__(parent)
        self._pos = 0.0
        self._rate = 1.0
        self._loop = False
        self._lo, self._hi = 0.0, 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(frame_ms)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._wall = QElapsedTimer()

    # state
    @property
    def position(self) -> float:
        return self._pos

    @property
    def rate(self) -> float:
        return self._rate

    @property
    def loop(self) -> bool:
        return self._loop

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def range(self) -> tuple[float, float]:
        return self._lo, self._hi

    # changes
    def set_range(self, lo: float, hi: float) -> None:
        hi = max(hi, lo)
        if (lo, hi) != (self._lo, self._hi):
            self._lo, self._hi = lo, hi
            self.range_changed.emit(lo, hi)
        self.set_position(self._pos)

    def set_position(self, t: float) -> None:
        t = min(max(float(t), self._lo), self._hi)
        if t != self._pos:
            self._pos = t
            self.position_changed.emit(t)

    def set_rate(self, rate: float) -> None:
        rate = min(max(float(rate), 1.0), 100.0)
        if rate != self._rate:
            self._rate = rate
            self.rate_changed.emit(rate)

    def set_loop(self, loop: bool) -> None:
        if bool(loop) != self._loop:
            self._loop = bool(loop)
            self.loop_changed.emit(self._loop)

    def play(self) -> None:
        if self.playing or self._hi <= self._lo:
            return
        if self._pos >= self._hi:
            self.set_position(self._lo)
        self._wall.start()
        self._timer.start()
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if self.playing:
            self._timer.stop()
            self.playing_changed.emit(False)

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def step(self, direction: int = 1) -> None:
        """One second of play at the current rate, forwards or back."""
        self.set_position(self._pos + direction * self._rate)

    def advance(self, wall_seconds: float) -> None:
        """What the timer does each frame: move on by wall time × rate; at the end, loop
        or stop there."""
        t = self._pos + wall_seconds * self._rate
        if t >= self._hi:
            if self._loop and self._hi > self._lo:
                t = self._lo + (t - self._hi) % (self._hi - self._lo)
            else:
                self.set_position(self._hi)
                self.pause()
                return
        self.set_position(t)

    @Slot()
    def _on_timer_timeout(self) -> None:
        self.advance(self._wall.restart() / 1000.0)


class ReplayBar(QWidget):
    """Step back, play/pause, step on, a scrubber, the time, the speed and loop: a view of the
    clock that writes back only through the clock's methods."""

    scrub_started = Signal()          # the scrubber is being dragged
    scrub_ended = Signal()

    def __init__(self, clock: ReplayClock, actions: dict[str, QAction],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.clock = clock
        self.actions = actions
        bar = QHBoxLayout(self)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setSpacing(6)

        def button(action: QAction, name: str) -> QToolButton:
            b = QToolButton()
            b.setObjectName(name)
            b.setDefaultAction(action)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)      # Space is the clock's, not a button's
            b.setAutoRaise(True)
            bar.addWidget(b)
            return b

        button(actions["step_back"], "step_back_button")
        self.play_button = button(actions["play_pause"], "play_button")
        button(actions["step_forward"], "step_forward_button")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("replay_slider")
        self.slider.setToolTip("Replay position (drag to scrub)")
        bar.addWidget(self.slider, 1)
        self.time_label = QLabel("0:00 / 0:00")
        self.time_label.setObjectName("replay_time")
        self.time_label.setMinimumWidth(130)
        bar.addWidget(self.time_label)
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("speed_combo")
        for r in RATES:
            self.speed_combo.addItem(f"{r}×", float(r))
        self.speed_combo.setToolTip("Replay speed")
        bar.addWidget(self.speed_combo)
        self.loop_box = QCheckBox("Loop")
        self.loop_box.setObjectName("loop_box")
        self.loop_box.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        bar.addWidget(self.loop_box)

        actions["play_pause"].triggered.connect(clock.toggle)
        actions["step_back"].triggered.connect(lambda: clock.step(-1))
        actions["step_forward"].triggered.connect(lambda: clock.step(1))
        actions["loop"].toggled.connect(clock.set_loop)
        self.loop_box.toggled.connect(clock.set_loop)
        self.slider.valueChanged.connect(self._on_slider_value_changed)
        self.slider.sliderPressed.connect(self.scrub_started)
        self.slider.sliderReleased.connect(self.scrub_ended)
        self.speed_combo.currentIndexChanged.connect(
            lambda _i: clock.set_rate(self.speed_combo.currentData()))
        clock.position_changed.connect(self._on_clock_position_changed)
        clock.playing_changed.connect(self._on_clock_playing_changed)
        clock.rate_changed.connect(self._on_clock_rate_changed)
        clock.loop_changed.connect(self._on_clock_loop_changed)
        clock.range_changed.connect(self._on_clock_range_changed)

    @Slot(float)
    def _on_clock_position_changed(self, t: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(int(round(t * SLIDER_STEPS_PER_S)))
        self.slider.blockSignals(False)
        _lo, hi = self.clock.range()
        self.time_label.setText(f"{fmt_clock(t)} / {fmt_clock(hi)}")

    @Slot(bool)
    def _on_clock_playing_changed(self, playing: bool) -> None:
        a = self.actions["play_pause"]
        icon = "SP_MediaPause" if playing else "SP_MediaPlay"
        a.setIcon(self.style().standardIcon(getattr(QStyle.StandardPixmap, icon)))
        a.setText("Pause" if playing else "Play")

    @Slot(float)
    def _on_clock_rate_changed(self, rate: float) -> None:
        i = self.speed_combo.findData(float(rate))
        self.speed_combo.blockSignals(True)
        if i < 0:
            self.speed_combo.addItem(f"{rate:g}×", float(rate))
            i = self.speed_combo.count() - 1
        self.speed_combo.setCurrentIndex(i)
        self.speed_combo.blockSignals(False)

    @Slot(bool)
    def _on_clock_loop_changed(self, loop: bool) -> None:
        for w in (self.loop_box, self.actions["loop"]):
            w.blockSignals(True)
            w.setChecked(loop)
            w.blockSignals(False)

    @Slot(float, float)
    def _on_clock_range_changed(self, lo: float, hi: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(int(math.floor(lo * SLIDER_STEPS_PER_S)),
                             int(math.ceil(hi * SLIDER_STEPS_PER_S)))
        self.slider.setPageStep(max(1, int((hi - lo) * SLIDER_STEPS_PER_S / 20)))
        self.slider.blockSignals(False)
        self._on_clock_position_changed(self.clock.position)

    @Slot(int)
    def _on_slider_value_changed(self, value: int) -> None:
        self.clock.set_position(value / SLIDER_STEPS_PER_S)


class ReplayOverlay:
    """Replay drawn as if live: while the clock runs, each chart shows its lines only up to
    the cursor and they grow as it moves (the PlotJuggler way); paused, the charts show all
    of their data again and the cursor can be scrubbed over that still picture.

    Stroking every curve again each frame costs tens of milliseconds per chart (Qt re-strokes
    thousands of points), so ``freeze()`` grabs the charts once without their lines, turns
    each line into a polyline of pixels (at most four points a pixel column: first, lowest,
    highest, last, so no peak is lost), and a plain widget on top paints: the grabbed
    background, a layer of lines that only the new segments are added to as the clock moves
    on (redrawn from the start when it moves back), and one cursor per chart. A frame costs
    two blits and a few short line segments. ``freeze()`` again after a zoom, pan, resize or
    new data. bench/replay_fps.py measures it with 4 runs of 2 h.
    """

    def __init__(self, view, plots, curves_of, colour: str = "#222222", width: float = 1.5,
                 grow: bool = True):
        import pyqtgraph as pg

        overlay_self = self

        class _Widget(QWidget):
            def paintEvent(self, _ev):                       # noqa: N802 (Qt name)
                overlay_self._paint(self)

        self.view = view
        self.plots = list(plots)
        self.curves_of = curves_of            # plot -> [PlotDataItem] drawn on it
        self.grow = grow
        self.pen = pg.mkPen(colour, width=width)
        self.widget = _Widget(view)
        self.widget.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        # it paints every pixel: Qt must not repaint the charts underneath first
        self.widget.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.widget.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.widget.hide()
        self.pixmap = None                    # the charts without their lines (or with them)
        self.layer = None                     # the lines drawn so far
        self.painted = 0                      # frames painted (the benchmark checks it)
        self.t: float | None = None
        self._drawn_t: float | None = None
        self._spans: list[tuple[float, float, float, float]] = []   # per plot: x0,x1,top,bottom
        self._ranges: list[tuple[float, float]] = []
        # per line: its plot's index, pen, and pixel x, time and pixel y of its points
        self._lines: list[tuple] = []

    @property
    def frozen(self) -> bool:
        return self.pixmap is not None

    def freeze(self, grow: bool | None = None) -> None:
        """Grab the charts as they are now and show the overlay on top of them: with the
        lines growing from nothing (``grow``, playing), or whole (a still picture to scrub
        over, where a frame costs one blit)."""
        if grow is not None:
            self.grow = grow
        import numpy as np
        from PySide6.QtGui import QPixmap
        self.widget.hide()
        curves = [(p, c) for p in self.plots for c in self.curves_of(p)]
        if self.grow:
            for _p, c in curves:
                c.setVisible(False)
        self.pixmap = self.view.grab()
        if self.grow:
            for _p, c in curves:
                c.setVisible(True)
        self.widget.setGeometry(0, 0, self.view.width(), self.view.height())
        self._spans, self._ranges, self._lines = [], [], []
        ratio = self.pixmap.devicePixelRatio()
        for p in self.plots:
            vb = p.getViewBox()
            rect = vb.mapRectToScene(vb.boundingRect())
            tl = self.view.mapFromScene(rect.topLeft())
            br = self.view.mapFromScene(rect.bottomRight())
            span = (tl.x(), br.x(), tl.y(), br.y())
            self._spans.append(span)
            (v0, v1), (w0, w1) = vb.viewRange()
            self._ranges.append((v0, v1))
            if not self.grow:
                continue
            log = p.getAxis("left").logMode
            for c in self.curves_of(p):
                x, y = c.xData, c.yData
                if x is None or not len(x):
                    continue
                y = np.log10(np.where(y > 0, y, np.nan)) if log else np.asarray(y, float)
                px = span[0] + (np.asarray(x, float) - v0) / (v1 - v0) * (span[1] - span[0])
                py = span[3] - (y - w0) / ((w1 - w0) or 1.0) * (span[3] - span[2])
                self._lines.append((len(self._spans) - 1, c.opts["pen"],
                                    *_column_polyline(px, np.asarray(x, float), py)))
        self.layer = QPixmap(self.pixmap.size())
        self.layer.setDevicePixelRatio(ratio)
        self.layer.fill(Qt.GlobalColor.transparent)
        self._drawn_t = None
        self.widget.show()
        self.widget.raise_()

    def thaw(self) -> None:
        self.widget.hide()
        self.pixmap = self.layer = None
        self._lines = []

    def set_time(self, t: float | None) -> None:
        self.t = t
        if self.grow and self.layer is not None and t is not None:
            self._extend(t)
        self.widget.update()

    def _extend(self, t: float) -> None:
        """Add the segments between the last drawn time and t to the lines layer (from
        the start when the clock went back)."""
        import numpy as np
        from PySide6.QtCore import QRectF
        from PySide6.QtGui import QPainter
        if self._drawn_t is not None and t < self._drawn_t:
            self.layer.fill(Qt.GlobalColor.transparent)
            self._drawn_t = None
        p = QPainter(self.layer)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        for k, pen, xs, ts, ys in self._lines:
            a = 0 if self._drawn_t is None else max(0, int(np.searchsorted(ts, self._drawn_t,
                                                                          "right")) - 1)
            b = int(np.searchsorted(ts, t, "right"))
            if b - a < 2:
                continue
            x0, x1, top, bottom = self._spans[k]
            p.setClipRect(QRectF(x0, top, x1 - x0, bottom - top))    # its own plot only
            p.setPen(pen)
            _draw_polyline(p, xs[a:b], ys[a:b])
        p.end()
        self._drawn_t = t

    def _paint(self, w) -> None:
        from PySide6.QtGui import QPainter
        if self.pixmap is None:
            return
        self.painted += 1
        p = QPainter(w)
        p.drawPixmap(0, 0, self.pixmap)
        if self.grow and self.layer is not None:
            p.drawPixmap(0, 0, self.layer)
        if self.t is not None:
            p.setPen(self.pen)
            for (x0, x1, top, bottom), (v0, v1) in zip(self._spans, self._ranges):
                if v1 > v0 and v0 <= self.t <= v1:
                    x = x0 + (self.t - v0) / (v1 - v0) * (x1 - x0)
                    p.drawLine(int(round(x)), int(top), int(round(x)), int(bottom))
        p.end()


def _column_polyline(px, t, py):
    """A curve in pixels as at most four points a pixel column (first, lowest, highest, last
    in time order), keeping the time of each point and NaN where the curve has a gap."""
    import numpy as np
    ok = np.isfinite(py)
    if not ok.any():
        return np.zeros(0), np.zeros(0), np.zeros(0)
    col = np.floor(px).astype(np.int64)
    # a new group where the column changes or a gap starts/ends
    brk = np.ones(len(px), bool)
    brk[1:] = (col[1:] != col[:-1]) | (ok[1:] != ok[:-1])
    starts = np.flatnonzero(brk)
    xs, ts, ys = [], [], []
    for s, e in zip(starts, list(starts[1:]) + [len(px)]):
        if not ok[s]:
            xs.append(px[s])
            ts.append(t[s])
            ys.append(np.nan)                   # a gap: the polyline breaks here
            continue
        seg = py[s:e]
        idx = sorted({s, s + int(np.argmin(seg)), s + int(np.argmax(seg)), e - 1})
        for i in idx:
            xs.append(px[i])
            ts.append(t[i])
            ys.append(py[i])
    return np.asarray(xs), np.asarray(ts), np.asarray(ys)


def _draw_polyline(p, xs, ys) -> None:
    import numpy as np
    from PySide6.QtCore import QPointF
    finite = np.isfinite(ys)
    start = None
    for i in range(len(xs) + 1):
        if i < len(xs) and finite[i]:
            if start is None:
                start = i
            continue
        if start is not None and i - start >= 2:
            p.drawPolyline([QPointF(float(x), float(y))
                            for x, y in zip(xs[start:i], ys[start:i])])
        start = None
