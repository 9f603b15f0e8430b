"""Add or edit a target: engine, endpoint, user, database; check it answers."""
from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox,
                               QVBoxLayout, QWidget)

from app.model.text import as_sentence
from app.model.config import DEFAULT_PORTS, ENGINES, TargetConfig

from app.ui.dialogs.host_key import ask_host_key
from app.ui.common.tasks import TaskRunner

ENGINE_LABELS = {"postgres": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB"}


class TargetDialog(QDialog):
    target_saved = Signal(str)          # target name
    check_finished = Signal(bool)

    def __init__(self, catalog, target: TargetConfig | None = None,
                 default_host: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.editing = target
        self.tasks = TaskRunner(self)
        self._accepted_fingerprint: str | None = None
        self._then = None
        self.setWindowTitle("Edit target" if target else "Add target")
        self.setObjectName("target_dialog")
        self.setMinimumWidth(460)

        lay = QVBoxLayout(self)
        form = QFormLayout()
        form.setVerticalSpacing(8)
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("target_name")
        self.name_edit.setPlaceholderText("e.g. pg17-tuned")
        self.host_combo = QComboBox()
        self.host_combo.setObjectName("target_host")
        for h in catalog.hosts():
            self.host_combo.addItem(h.title, h.name)
        self.engine_combo = QComboBox()
        self.engine_combo.setObjectName("target_engine")
        for e in ENGINES:
            self.engine_combo.addItem(ENGINE_LABELS.get(e, e), e)
        self.address_edit = QLineEdit("127.0.0.1")
        self.address_edit.setObjectName("target_address")
        self.address_edit.setToolTip("Address as seen from the host (the driver runs there).")
        self.port_spin = QSpinBox()
        self.port_spin.setObjectName("target_port")
        self.port_spin.setRange(1, 65535)
        self.port_spin.setValue(5432)
        self.user_edit = QLineEdit()
        self.user_edit.setObjectName("target_user")
        self.database_edit = QLineEdit()
        self.database_edit.setObjectName("target_database")
        self.password_edit = QLineEdit()
        self.password_edit.setObjectName("target_password")
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setPlaceholderText("kept in the system keyring")
        self.keyring_label = QLabel("")
        self.keyring_label.setWordWrap(True)
        self.keyring_label.setProperty("role", "hint")
        form.addRow("Name", self.name_edit)
        form.addRow("Host", self.host_combo)
        form.addRow("Engine", self.engine_combo)
        form.addRow("Address", self.address_edit)
        form.addRow("Port", self.port_spin)
        form.addRow("User", self.user_edit)
        form.addRow("Database", self.database_edit)
        form.addRow("Password", self.password_edit)
        form.addRow("", self.keyring_label)
        lay.addLayout(form)

        row = QHBoxLayout()
        self.check_button = QPushButton("Check")
        self.check_button.setObjectName("check_button")
        self.check_button.setToolTip("Connects to the target from its host and reads the "
                                     "server version; saves nothing.")
        self.check_status = QLabel("")
        self.check_status.setObjectName("check_status")
        self.check_status.setWordWrap(True)
        row.addWidget(self.check_button)
        row.addWidget(self.check_status, 1)
        lay.addLayout(row)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setToolTip("Checks the target, then saves it (a target that does not "
                                    "answer is saved only if you say so)")
        lay.addWidget(self.buttons)
        self._save_anyway = False         # the check failed and the user may insist
        for edit in (self.name_edit, self.address_edit, self.user_edit, self.database_edit,
                     self.password_edit):
            edit.textEdited.connect(self._on_field_edited)
        self.port_spin.valueChanged.connect(self._on_field_edited)
        self.engine_combo.currentIndexChanged.connect(self._on_field_edited)
        self.host_combo.currentIndexChanged.connect(self._on_field_edited)

        self.engine_combo.currentIndexChanged.connect(self._on_engine_changed)
        self.check_button.clicked.connect(self._on_check_clicked)
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)
        if target is not None:
            self._fill(target)
            self.name_edit.setReadOnly(True)
        elif default_host:
            self.host_combo.setCurrentIndex(max(0, self.host_combo.findData(default_host)))
        from app.remote.secrets import keyring_status
        self.tasks.submit(keyring_status, self._on_keyring_status)

    def _fill(self, t: TargetConfig) -> None:
        self.name_edit.setText(t.name)
        self.host_combo.setCurrentIndex(max(0, self.host_combo.findData(t.host)))
        self.engine_combo.setCurrentIndex(max(0, self.engine_combo.findData(t.engine)))
        self.address_edit.setText(t.address)
        self.port_spin.setValue(int(t.port or DEFAULT_PORTS.get(t.engine, 5432)))
        self.user_edit.setText(t.user)
        self.database_edit.setText(t.database)

    def target_config(self) -> TargetConfig:
        return TargetConfig(name=self.name_edit.text().strip(),
                            host=self.host_combo.currentData() or "local",
                            engine=self.engine_combo.currentData(),
                            address=self.address_edit.text().strip() or "127.0.0.1",
                            port=self.port_spin.value(), user=self.user_edit.text().strip(),
                            database=self.database_edit.text().strip())

    @Slot()
    def _on_engine_changed(self, *_a) -> None:
        # Follow the engine's usual port unless the user typed another one.
        if self.port_spin.value() in DEFAULT_PORTS.values():
            self.port_spin.setValue(DEFAULT_PORTS[self.engine_combo.currentData()])

    def _on_keyring_status(self, status: tuple[bool, str]) -> None:
        ok, message = status
        self.keyring_label.setText(as_sentence(message))
        if not ok:
            self.password_edit.setEnabled(False)
            self.password_edit.setPlaceholderText("no keyring: passwords cannot be saved")
            self.keyring_label.setStyleSheet("color:#b00020")
        self._fit_text()

    def _say(self, text: str, colour: str = "") -> None:
        self.check_status.setText(text)
        self.check_status.setStyleSheet(f"color:{colour}" if colour else "")
        self._fit_text()

    def _fit_text(self) -> None:
        """Grow to hold a message's lines: a long error squeezed every field to a sliver and
        the keyring's warning was cut mid-line."""
        lay = self.layout()
        lay.activate()
        need = lay.totalHeightForWidth(self.width()) if lay.hasHeightForWidth() \
            else lay.totalSizeHint().height()
        if need > self.height():
            self.setMinimumHeight(need)
            self.resize(self.width(), need)

    def _save(self, then) -> None:
        """Save to the catalog (a small TOML write) and the password to the keyring (worker)."""
        from app.store.catalog import CatalogError
        t = self.target_config()
        if self.editing is None and self.catalog.target(t.name) is not None:
            self._say(f"A target named {t.name!r} exists; choose another name.", "#b00020")
            return
        try:
            self.catalog.save_target(t)
        except CatalogError as exc:
            self._say(str(exc), "#b00020")
            return
        self.editing = t                  # saved once: later saves update it
        self.name_edit.setReadOnly(True)
        self.target_saved.emit(t.name)
        password = self.password_edit.text()
        if not password:
            then(t)
            return
        from app.remote.secrets import set_secret

        def failed(exc: BaseException) -> None:
            self._say(f"The target was saved but its password was not: {exc}", "#b00020")

        self.tasks.submit(lambda: set_secret("target", t.name, password),
                          lambda _r: then(t), failed)

    def _on_field_edited(self, *_a) -> None:
        if self._save_anyway:             # a changed target is checked again before saving
            self._save_anyway = False
            self.save_button.setText("Save")

    @Slot()
    def _on_buttons_accepted(self) -> None:
        if self._save_anyway:
            self._save(lambda _t: self.accept())
        else:
            self._check(then=lambda: self._save(lambda _t: self.accept()))

    @Slot()
    def _on_check_clicked(self) -> None:
        self._check()

    def _check(self, then=None) -> None:
        """Connect to the target as the fields describe it (nothing saved yet); ``then`` runs
        when it answered."""
        t = self.target_config()
        if not t.name:
            self._say("Give the target a name.", "#b00020")
            return
        self._then = then
        self.check_button.setEnabled(False)
        self.save_button.setEnabled(False)
        self._say(f"Connecting to {t.address}:{t.port} from {t.host}…")
        fingerprint = self._accepted_fingerprint
        catalog = self.catalog
        password = self.password_edit.text() or None

        def work():
            from app.remote.runner import check_target
            return check_target(catalog, t.host, t, accept_fingerprint=fingerprint,
                                password=password)

        self.tasks.submit(work, self._on_check_succeeded, self._on_check_failed)

    def _on_check_succeeded(self, version: str) -> None:
        self.check_button.setEnabled(True)
        self.save_button.setEnabled(True)
        self._say(f"Connected: {version}", "#1a7f37")
        self.check_finished.emit(True)
        then, self._then = self._then, None
        if then is not None:
            then()

    def _on_check_failed(self, exc: BaseException) -> None:
        from app.remote.errors import UnknownHostKey
        self.check_button.setEnabled(True)
        self.save_button.setEnabled(True)
        then, self._then = self._then, None
        if isinstance(exc, UnknownHostKey):
            self._say("The host's key is unknown: check its fingerprint.")

            def accepted(fp: str) -> None:
                self._accepted_fingerprint = fp
                self._check(then)

            ask_host_key(self, exc, accepted)
            return
        text = str(exc) or type(exc).__name__
        if then is not None:
            # a target that does not answer is not saved unless the user insists
            self._save_anyway = True
            self.save_button.setText("Save anyway")
            text += " Nothing was saved: correct the fields and save again, or press " \
                    "Save anyway to keep it as it is."
        self._say(text, "#b00020")
        self.check_finished.emit(False)
