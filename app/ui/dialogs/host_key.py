"""Ask the user to accept an unknown SSH host key, showing its fingerprint. Non-blocking."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QMessageBox, QWidget


def ask_host_key(parent: QWidget, exc: Any, on_accept: Callable[[str], None],
                 on_reject: Callable[[], None] | None = None) -> QMessageBox:
    """Open a window-modal question; ``on_accept(fingerprint)`` runs only on an explicit yes."""
    box = QMessageBox(parent)
    box.setObjectName("host_key_box")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Unknown host key")
    box.setText(f"{exc.host}:{exc.port} presented a host key Versus has not seen before.")
    box.setInformativeText(
        f"{exc.key_type} key fingerprint:\n{exc.fingerprint}\n\n"
        "Compare it with the fingerprint the host's administrator gives you "
        "(ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub). Accept only if they match.")
    accept = box.addButton("Accept and connect", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    fingerprint = exc.fingerprint

    def on_finished(_result: int) -> None:
        box.deleteLater()
        if box.clickedButton() is accept:
            on_accept(fingerprint)
        elif on_reject is not None:
            on_reject()

    box.finished.connect(on_finished)
    box.open()
    return box
