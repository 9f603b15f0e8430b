"""Add or edit a host: address, port, user, how to authenticate; test it and show its facts."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDialog, QDialogButtonBox,
                               QFileDialog, QFormLayout, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QPushButton, QSpinBox, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from app.model.text import as_sentence
from app.model.config import HostConfig

from app.ui.dialogs.host_key import ask_host_key
from app.ui.common.tasks import TaskRunner

AUTH_CHOICES = (("agent", "SSH agent"), ("key", "Key file"), ("password", "Password"))


class HostDialog(QDialog):
    host_saved = Signal(str)            # host name
    test_finished = Signal(bool)        # whether the connection test succeeded

    def __init__(self, catalog, host: HostConfig | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.editing = host
        self.tasks = TaskRunner(self)
        self._accepted_fingerprint: str | None = None
        self._ssh_hosts: list[dict] = []
        self.setWindowTitle("Edit host" if host else "Add host")
        self.setObjectName("host_dialog")
        self.setMinimumWidth(520)

        lay = QVBoxLayout(self)
        form = QFormLayout()
        form.setVerticalSpacing(8)
        self.ssh_config_combo = QComboBox()
        self.ssh_config_combo.setObjectName("ssh_config_combo")
        self.ssh_config_combo.addItem("Reading ~/.ssh/config…", None)
        self.ssh_config_combo.setEnabled(False)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("host_name")
        self.name_edit.setPlaceholderText("a short name, e.g. bench-1")
        self.address_edit = QLineEdit()
        self.address_edit.setObjectName("host_address")
        self.address_edit.setPlaceholderText("hostname or IP address")
        self.port_spin = QSpinBox()
        self.port_spin.setObjectName("host_port")
        self.port_spin.setRange(1, 65535)
        self.port_spin.setValue(22)
        self.user_edit = QLineEdit()
        self.user_edit.setObjectName("host_user")
        self.user_edit.setPlaceholderText("login name (default: yours)")
        self.auth_combo = QComboBox()
        self.auth_combo.setObjectName("host_auth")
        for key, text in AUTH_CHOICES:
            self.auth_combo.addItem(text, key)
        self.key_edit = QLineEdit()
        self.key_edit.setObjectName("host_key_file")
        self.key_edit.setPlaceholderText("~/.ssh/id_ed25519")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_clicked)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(browse)
        self.key_row = QWidget()
        self.key_row.setLayout(key_row)
        key_row.setContentsMargins(0, 0, 0, 0)
        self.password_edit = QLineEdit()
        self.password_edit.setObjectName("host_password")
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setPlaceholderText("kept in the system keyring")
        self.keyring_label = QLabel("")
        self.keyring_label.setWordWrap(True)
        self.keyring_label.setProperty("role", "hint")
        self.python_edit = QLineEdit("python3")
        self.python_edit.setObjectName("host_python")
        self.python_edit.setToolTip("The Python 3.9+ interpreter that runs the agent on the host.")
        form.addRow("From SSH config", self.ssh_config_combo)
        form.addRow("Name", self.name_edit)
        form.addRow("Address", self.address_edit)
        form.addRow("Port", self.port_spin)
        form.addRow("User", self.user_edit)
        form.addRow("Authentication", self.auth_combo)
        form.addRow("Key file", self.key_row)
        form.addRow("Password", self.password_edit)
        form.addRow("", self.keyring_label)
        form.addRow("Python", self.python_edit)
        self._form = form
        lay.addLayout(form)

        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("test_button")
        self.test_status = QLabel("")
        self.test_status.setObjectName("test_status")
        self.test_status.setWordWrap(True)
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_status, 1)
        lay.addLayout(test_row)
        self.facts_table = QTableWidget(0, 2)
        self.facts_table.setObjectName("facts_table")
        self.facts_table.setHorizontalHeaderLabels(["Fact", "Value"])
        self.facts_table.verticalHeader().setVisible(False)
        self.facts_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.facts_table.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.ResizeToContents)
        self.facts_table.horizontalHeader().setStretchLastSection(True)
        self.facts_table.setWordWrap(True)
        self.facts_table.hide()
        lay.addWidget(self.facts_table, 1)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

        self.auth_combo.currentIndexChanged.connect(self._on_auth_changed)
        self.ssh_config_combo.activated.connect(self._on_ssh_config_activated)
        self.test_button.clicked.connect(self._on_test_clicked)
        if host is not None:
            self._fill(host)
            self.name_edit.setReadOnly(True)      # the name is the key in hosts.toml
        self._on_auth_changed()
        # ~/.ssh/config and the keyring are disk/D-Bus reads: never on the GUI thread.
        from app.remote.ssh import ssh_config_hosts
        self.tasks.submit(ssh_config_hosts, self._on_ssh_config_read,
                          lambda exc: self._on_ssh_config_read([]))
        from app.remote.secrets import keyring_status
        self.tasks.submit(keyring_status, self._on_keyring_status)

    def _fill(self, h: HostConfig) -> None:
        self.name_edit.setText(h.name)
        self.address_edit.setText(h.address)
        self.port_spin.setValue(int(h.port or 22))
        self.user_edit.setText(h.user)
        self.auth_combo.setCurrentIndex(max(0, self.auth_combo.findData(h.auth)))
        self.key_edit.setText(h.key_file)
        self.python_edit.setText(h.python or "python3")

    def host_config(self) -> HostConfig:
        return HostConfig(name=self.name_edit.text().strip(),
                          address=self.address_edit.text().strip(),
                          port=self.port_spin.value(), user=self.user_edit.text().strip(),
                          auth=self.auth_combo.currentData(),
                          key_file=self.key_edit.text().strip(),
                          python=self.python_edit.text().strip() or "python3")

    # --- reactions -------------------------------------------------------------------------
    @Slot()
    def _on_auth_changed(self, *_a) -> None:
        auth = self.auth_combo.currentData()
        self._form.setRowVisible(self.key_row, auth == "key")
        self._form.setRowVisible(self.password_edit, auth == "password")
        self._form.setRowVisible(self.keyring_label, auth == "password")

    def _on_ssh_config_read(self, hosts: list[dict]) -> None:
        self._ssh_hosts = hosts
        self.ssh_config_combo.clear()
        if not hosts:
            self.ssh_config_combo.addItem("No Host entries in ~/.ssh/config", None)
            self.ssh_config_combo.setEnabled(False)
            return
        self.ssh_config_combo.addItem("Choose a Host entry to fill the form…", None)
        for h in hosts:
            alias = h.get("alias") or h.get("name")
            self.ssh_config_combo.addItem(f"{alias}  ({h.get('hostname')})", h)
        self.ssh_config_combo.setEnabled(True)

    @Slot(int)
    def _on_ssh_config_activated(self, index: int) -> None:
        h = self.ssh_config_combo.itemData(index)
        if not h:
            return
        alias = h.get("alias") or h.get("name") or ""
        if not self.name_edit.isReadOnly():
            self.name_edit.setText(alias)
        self.address_edit.setText(h.get("hostname") or alias)
        self.port_spin.setValue(int(h.get("port") or 22))
        self.user_edit.setText(h.get("user") or "")
        if h.get("identityfile"):
            self.auth_combo.setCurrentIndex(self.auth_combo.findData("key"))
            self.key_edit.setText(h["identityfile"])

    def _on_keyring_status(self, status: tuple[bool, str]) -> None:
        ok, message = status
        self.keyring_ok = ok
        self.keyring_label.setText(as_sentence(message))
        if not ok:
            self.password_edit.setEnabled(False)
            self.password_edit.setPlaceholderText("no keyring: passwords cannot be saved")
            self.keyring_label.setStyleSheet("color:#b00020")

    @Slot()
    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "SSH private key",
                                              str(Path("~/.ssh").expanduser()))
        if path:
            self.key_edit.setText(path)

    @Slot()
    def _on_test_clicked(self) -> None:
        h = self.host_config()
        if not h.address:
            self.test_status.setText("Enter an address first.")
            return
        if not h.name:
            h.name = h.address
        password = self.password_edit.text() if h.auth == "password" else None
        fingerprint = self._accepted_fingerprint
        self.test_button.setEnabled(False)
        self.test_status.setText(f"Connecting to {h.address}:{h.port}…")
        self.test_status.setStyleSheet("")

        def work():
            from app.remote.facts import format_facts, gather_facts
            from app.remote.hosts import open_transport
            transport = open_transport(h, accept_fingerprint=fingerprint,
                                       password=password or None)
            try:
                return format_facts(gather_facts(transport, python=h.python))
            finally:
                transport.close()

        self.tasks.submit(work, self._on_test_succeeded, self._on_test_failed)

    def _on_test_succeeded(self, rows: list[tuple[str, str]]) -> None:
        self.test_button.setEnabled(True)
        self.test_status.setText("Connected.")
        self.test_status.setStyleSheet("color:#1a7f37")
        self.facts_table.setRowCount(len(rows))
        for i, (label, value) in enumerate(rows):
            self.facts_table.setItem(i, 0, QTableWidgetItem(label))
            item = QTableWidgetItem(value)
            item.setToolTip(value)             # long paths are elided in the cell
            self.facts_table.setItem(i, 1, item)
        self.facts_table.resizeRowsToContents()
        self.facts_table.show()
        self.test_finished.emit(True)

    def _on_test_failed(self, exc: BaseException) -> None:
        from app.remote.errors import UnknownHostKey
        self.test_button.setEnabled(True)
        if isinstance(exc, UnknownHostKey):
            self.test_status.setText("The host's key is unknown: check its fingerprint.")

            def accepted(fp: str) -> None:
                self._accepted_fingerprint = fp
                self._on_test_clicked()

            ask_host_key(self, exc, accepted)
            return
        self.test_status.setText(str(exc) or type(exc).__name__)
        self.test_status.setStyleSheet("color:#b00020")
        self.test_finished.emit(False)

    @Slot()
    def _on_buttons_accepted(self) -> None:
        from app.store.catalog import CatalogError
        h = self.host_config()
        if self.editing is None and self.catalog.host(h.name) is not None:
            self.test_status.setText(f"A host named {h.name!r} exists; choose another name.")
            self.test_status.setStyleSheet("color:#b00020")
            return
        try:
            self.catalog.save_host(h)
        except CatalogError as exc:
            self.test_status.setText(str(exc))
            self.test_status.setStyleSheet("color:#b00020")
            return
        password = self.password_edit.text()
        if h.auth == "password" and password:
            from app.remote.secrets import set_secret
            self.buttons.setEnabled(False)
            self.tasks.submit(lambda: set_secret("host", h.name, password),
                              lambda _r: self._saved(h.name), self._on_secret_failed)
        else:
            self._saved(h.name)

    def _on_secret_failed(self, exc: BaseException) -> None:
        self.buttons.setEnabled(True)
        # Never fall back to a plain file: say so and let the user decide.
        self.test_status.setText(f"The host was saved but its password was not: {exc}")
        self.test_status.setStyleSheet("color:#b00020")
        self.host_saved.emit(self.host_config().name)

    def _saved(self, name: str) -> None:
        self.host_saved.emit(name)
        self.accept()
