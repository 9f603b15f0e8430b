"""Runs one RunController off the GUI thread and hands its events to a SeriesStore.

The controller calls ``on_events`` from this worker's thread; the batch goes into the store
under its lock and a signal tells the GUI there is something new. The GUI merges on a
coalescing timer, so the signal carries only a count, never the data.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from app.model.series import SeriesStore


class RunWorker(QObject):
    run_started = Signal(str)          # run_id, once the controller knows it
    events_received = Signal(int)      # how many events were added to the store
    status_changed = Signal(str)       # a short line from the controller ("connecting…")
    run_finished = Signal(object)      # RunOutcome
    run_failed = Signal(object)        # the exception; str(exc) is a user sentence

    def __init__(self, request: Any, store: SeriesStore, catalog: Any = None,
                 controller_factory: Callable[..., Any] | None = None) -> None:
        super().__init__()
        self.request = request
        self.store = store
        self.catalog = catalog
        self._factory = controller_factory
        self._controller = None
        self._lock = threading.Lock()
        self._stop_requested = False
        self._announced = False
        self.events_total = 0

    @Slot()
    def start(self) -> None:
        """Runs in the worker thread (connected to QThread.started)."""
        try:
            factory = self._factory
            if factory is None:
                from app.remote.runner import RunController   # imported late: heavy, optional
                factory = RunController
            controller = factory(self.request, catalog=self.catalog,
                                 on_events=self._on_controller_events,
                                 on_status=self._on_controller_status)
            with self._lock:
                self._controller = controller
                stop_now = self._stop_requested
            if stop_now:          # Stop was pressed while the controller was being built
                controller.stop()
            outcome = controller.run()
        except Exception as exc:           # noqa: BLE001 - becomes a sentence in the GUI
            self.run_failed.emit(exc)
        else:
            self.run_finished.emit(outcome)

    def stop(self) -> None:
        """Called from the GUI thread; never blocks it (stop may talk to a remote host)."""
        with self._lock:
            self._stop_requested = True
            controller = self._controller
        if controller is not None:
            threading.Thread(target=controller.stop, name="versus-stop", daemon=True).start()

    # --- controller callbacks (worker thread) -----------------------------------------------
    def _on_controller_events(self, run_id: str, events: list[dict]) -> None:
        if not self._announced and run_id:
            self._announced = True
            self.run_started.emit(run_id)
        added = self.store.ingest(events)
        self.events_total += added
        if added:
            self.events_received.emit(added)

    def _on_controller_status(self, text: str) -> None:
        self.status_changed.emit(str(text))


class AttachWorker(QObject):
    """Brings the rest of one open run into its session file (app.remote.attach), off the
    GUI thread."""
    status_changed = Signal(str)
    attach_finished = Signal(object)   # app.remote.attach.Attached, or None (nothing open)
    attach_failed = Signal(object)     # the exception; str(exc) is a user sentence

    def __init__(self, session_path: str, run_id: str, catalog: Any = None) -> None:
        super().__init__()
        self.session_path, self.run_id, self.catalog = session_path, run_id, catalog
        self._attacher = None
        self._left = threading.Event()

    @Slot()
    def start(self) -> None:
        try:
            from pathlib import Path
            from app.remote.attach import Attacher, find_open_runs
            runs = [o for o in find_open_runs([Path(self.session_path)])
                    if o.run.id == self.run_id]
            self._attacher = Attacher(self.catalog, on_status=self.status_changed.emit)
            if self._left.is_set():
                self._attacher.leave()
            done = self._attacher.attach(runs)
        except Exception as exc:           # noqa: BLE001 - becomes a sentence in the GUI
            self.attach_failed.emit(exc)
        else:
            self.attach_finished.emit(done[0] if done else None)

    def leave(self) -> None:
        """Stop bringing the run in (it goes on on its host); never blocks."""
        self._left.set()
        if self._attacher is not None:
            threading.Thread(target=self._attacher.leave, daemon=True).start()


def start_worker_thread(worker, name: str = "versus-run", ends=None) -> QThread:
    """Move the worker to a new thread and start it; the thread quits on any of `ends`
    (default: the run worker's run_finished and run_failed).

    The caller keeps both objects referenced until ``thread.finished``: Python owns them,
    and a QThread collected while running aborts the process.
    """
    thread = QThread()
    thread.setObjectName(name)
    worker.moveToThread(thread)
    thread.started.connect(worker.start)
    # Direct: quit from the worker thread itself, so the thread ends even while the GUI
    # thread is busy (quit is thread-safe).
    for signal in ends or (worker.run_finished, worker.run_failed):
        signal.connect(thread.quit, Qt.ConnectionType.DirectConnection)
    thread.start()
    return thread
