"""Run a blocking call (SSH connect, keyring, session file read) off the GUI thread.

The result comes back as a queued signal to an object living in the GUI thread, which then
calls the given callback there: callbacks may touch widgets freely.
"""
from __future__ import annotations

import traceback
from typing import Any, Callable

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot


class _Relay(QObject):
    """Lives in the GUI thread; its slots run there whatever thread emitted."""

    succeeded = Signal(object)
    failed = Signal(object)

    def __init__(self, owner: "TaskRunner", on_done, on_error) -> None:
        super().__init__()
        self._owner, self._on_done, self._on_error = owner, on_done, on_error
        self.succeeded.connect(self._on_succeeded)
        self.failed.connect(self._on_failed)

    @Slot(object)
    def _on_succeeded(self, result: Any) -> None:
        if self._owner._release(self) and self._on_done is not None:
            self._on_done(result)

    @Slot(object)
    def _on_failed(self, exc: BaseException) -> None:
        if self._owner._release(self) and self._on_error is not None:
            self._on_error(exc)


class _Job(QRunnable):
    def __init__(self, fn: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self._fn, self._relay = fn, relay

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:           # noqa: BLE001 - handed to the GUI as a message
            exc.__versus_trace__ = traceback.format_exc()   # for the log, never a dialog
            self._relay.failed.emit(exc)
        else:
            self._relay.succeeded.emit(result)


class TaskRunner(QObject):
    """Background calls for one window or dialog.

    Jobs run on the shared pool, so closing a dialog never waits for a slow SSH connect;
    an answer that arrives after its owner is gone is dropped.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool.globalInstance()
        self._live: set[_Relay] = set()     # keeps relays alive until their answer arrives

    def submit(self, fn: Callable[[], Any], on_done: Callable[[Any], None] | None = None,
               on_error: Callable[[BaseException], None] | None = None) -> None:
        relay = _Relay(self, on_done, on_error)
        self._live.add(relay)
        self._pool.start(_Job(fn, relay))

    def busy(self) -> bool:
        return bool(self._live)

    def wait(self, msecs: int = 5000) -> bool:
        return self._pool.waitForDone(msecs)

    def _release(self, relay: _Relay) -> bool:
        """Forget the relay; True when the owner still exists to take the answer."""
        self._live.discard(relay)
        relay.deleteLater()
        return shiboken6.isValid(self)
