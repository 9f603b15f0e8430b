"""Tens of thousands of cross-thread signals must arrive intact.

Guards the PySide6 6.12 regression that dropped a reference to None on every void
call/emit and aborted the interpreter (none_dealloc) after a few thousand emits.
"""
import threading

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.model.series import SeriesStore
from app.ui.live.run_worker import RunWorker, start_worker_thread

from .stream import ReplayController, recorded_run

N = 20_000


class Emitter(QObject):
    pinged = Signal()               # void signal: the shape that crashed 6.12
    carried = Signal(object)        # None and Python objects through a queued connection
    counted = Signal(int)
    finished = Signal()

    @Slot()
    def emit_all(self):
        for i in range(N):
            self.pinged.emit()
            self.carried.emit(None if i % 2 else {"i": i})
            self.counted.emit(i)
        self.finished.emit()


class Receiver(QObject):
    def __init__(self):
        super().__init__()
        self.pings = self.nones = self.objects = self.counts = 0
        self.threads = set()

    @Slot()
    def on_pinged(self):
        self.pings += 1
        self.threads.add(threading.get_ident())
        return None

    @Slot(object)
    def on_carried(self, value):
        if value is None:
            self.nones += 1
        else:
            self.objects += 1

    @Slot(int)
    def on_counted(self, _i):
        self.counts += 1


def test_cross_thread_void_and_object_signals_survive(qtbot):
    emitter, receiver = Emitter(), Receiver()
    thread = QThread()
    emitter.moveToThread(thread)
    emitter.pinged.connect(receiver.on_pinged)
    emitter.carried.connect(receiver.on_carried)
    emitter.counted.connect(receiver.on_counted)
    thread.started.connect(emitter.emit_all)
    with qtbot.waitSignal(emitter.finished, timeout=60_000):
        thread.start()
    qtbot.waitUntil(lambda: receiver.counts == N, timeout=60_000)
    thread.quit()
    assert thread.wait(10_000)
    assert receiver.pings == N
    assert receiver.nones == N // 2 and receiver.objects == N // 2
    assert receiver.threads == {threading.get_ident()}     # slots ran on the GUI thread


def test_run_worker_delivers_twenty_thousand_batches(qtbot):
    # One event per batch: 20,000+ events_received signals through the real worker path.
    events = recorded_run(measure_s=7_000, prepare_s=2)
    assert len(events) >= N
    store = SeriesStore()
    from app.remote.runner import RunRequest

    def factory(request, catalog=None, on_events=None, on_status=None):
        return ReplayController(request, catalog, on_events, on_status, events=events, batch=1)

    worker = RunWorker(RunRequest(), store, controller_factory=factory)
    got = []
    worker.events_received.connect(lambda n: got.append(n))
    with qtbot.waitSignal(worker.run_finished, timeout=120_000) as blocker:
        thread = start_worker_thread(worker)
    qtbot.waitUntil(thread.isFinished, timeout=10_000)
    qtbot.waitUntil(lambda: sum(got) == len(events), timeout=30_000)
    assert len(got) == len(events) >= N
    assert blocker.args[0].status == "ok"
    assert store.count("throughput") == 7_000
