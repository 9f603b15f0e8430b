"""Server profiles: browse them by engine, edit one with highlighting, render it for a host,
check it against a running server, diff two, save a copy.

Files are read and written in background tasks; the check runs on the target's host.
"""
from __future__ import annotations

import difflib
import html
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import (QColor, QFont, QFontDatabase, QSyntaxHighlighter, QTextCharFormat,
                           QTextCursor, QTextFormat)
from PySide6.QtWidgets import (QButtonGroup, QComboBox, QDialog,
                               QDialogButtonBox, QFormLayout, QHBoxLayout, QInputDialog, QLabel,
                               QLineEdit, QListWidget, QListWidgetItem, QMessageBox,
                               QPlainTextEdit, QPushButton, QRadioButton, QSpinBox, QSplitter,
                               QTabWidget, QTextEdit, QTreeWidget, QTreeWidgetItem,
                               QVBoxLayout, QWidget)

from app.model.profile import ENGINES, Profile, ProfileError
from app.store import profiles as store
from workloads import profiles as render_mod

from app.ui.common.tasks import TaskRunner

ENGINE_LABELS = {"postgres": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB"}
ROLE = Qt.ItemDataRole.UserRole
EDITING = "(this editor)"

COLOURS = {"comment": "#6a737d", "name": "#0550ae", "value": "#116329", "expr": "#8250df",
           "expr_bg": "#f3eefe", "group": "#953800", "error": "#cf222e"}


def mono_font() -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    f.setPointSizeF(max(9.0, f.pointSizeF()))
    return f


def _fmt(colour: str, bold: bool = False, italic: bool = False,
         background: str | None = None) -> QTextCharFormat:
    f = QTextCharFormat()
    f.setForeground(QColor(colour))
    if bold:
        f.setFontWeight(QFont.Weight.DemiBold)
    f.setFontItalic(italic)
    if background:
        f.setBackground(QColor(background))
    return f


class ProfileHighlighter(QSyntaxHighlighter):
    """postgresql.conf / my.cnf lines: comments, [groups], setting names, values and
    {{ host expressions }}."""

    _EXPR = re.compile(r"\{\{.*?\}\}")
    _SETTING = re.compile(r"^(\s*)([A-Za-z_][\w.\-]*)(\s*=?\s*)(.*)$")

    def __init__(self, document) -> None:
        super().__init__(document)
        self.formats = {
            "comment": _fmt(COLOURS["comment"], italic=True),
            "group": _fmt(COLOURS["group"], bold=True),
            "name": _fmt(COLOURS["name"], bold=True),
            "value": _fmt(COLOURS["value"]),
            "expr": _fmt(COLOURS["expr"], bold=True, background=COLOURS["expr_bg"]),
        }

    def highlightBlock(self, text: str) -> None:
        stripped = text.lstrip()
        if not stripped:
            return
        if stripped[0] in "#;":
            self.setFormat(0, len(text), self.formats["comment"])
            return
        if stripped.startswith("[") and stripped.rstrip().endswith("]"):
            self.setFormat(0, len(text), self.formats["group"])
            return
        body, comment_at = text, self._comment_start(text)
        if comment_at is not None:
            body = text[:comment_at]
            self.setFormat(comment_at, len(text) - comment_at, self.formats["comment"])
        m = self._SETTING.match(body)
        if m:
            self.setFormat(m.start(2), len(m.group(2)), self.formats["name"])
            if m.group(4):
                self.setFormat(m.start(4), len(m.group(4).rstrip()), self.formats["value"])
        for e in self._EXPR.finditer(body):
            self.setFormat(e.start(), e.end() - e.start(), self.formats["expr"])

    @staticmethod
    def _comment_start(text: str) -> int | None:
        quote = None
        for i, c in enumerate(text):
            if c in "'\"":
                quote = None if quote == c else (quote or c)
            elif c == "#" and quote is None and "{{" not in text[i:i + 1]:
                return i
        return None


class DiffHighlighter(QSyntaxHighlighter):
    """A unified diff: added lines green, removed red, hunk headers blue."""

    def __init__(self, document) -> None:
        super().__init__(document)
        self.formats = {"+": _fmt("#116329", background="#dafbe1"),
                        "-": _fmt("#82071e", background="#ffebe9"),
                        "@": _fmt("#0550ae", bold=True, background="#ddf4ff")}

    def highlightBlock(self, text: str) -> None:
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), _fmt("#57606a", bold=True))
        elif text[:1] in self.formats:
            self.setFormat(0, len(text), self.formats[text[:1]])


@dataclass
class ListedProfile:
    profile: Profile | None
    path: str
    error: str = ""


def read_all() -> list[ListedProfile]:
    """Every profile, and every file that cannot be used with its reason (runs in a task)."""
    out = [ListedProfile(p, p.path) for p in store.list_profiles()]
    out += [ListedProfile(None, str(path), why) for path, why in store.broken_profiles()]
    return out


def read_raw(path: str) -> tuple[dict, str]:
    """What can be salvaged from a file that does not load: its keys, or its text."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}, text
    return (data if isinstance(data, dict) else {}), text


def unified_diff(a: str, b: str, a_name: str, b_name: str) -> str:
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), a_name, b_name, lineterm="",
                                 n=3)
    return "\n".join(lines)


def side_by_side_html(a: str, b: str, a_name: str, b_name: str) -> str:
    """An HTML table of the two texts, changed rows coloured."""
    al, bl = a.splitlines(), b.splitlines()
    rows = []
    colours = {"equal": ("", ""), "replace": ("#ffebe9", "#dafbe1"),
               "delete": ("#ffebe9", "#f6f8fa"), "insert": ("#f6f8fa", "#dafbe1")}
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, al, bl, autojunk=False).get_opcodes():
        left, right = al[i1:i2], bl[j1:j2]
        for k in range(max(len(left), len(right))):
            lc, rc = colours[op]
            lt = html.escape(left[k]) if k < len(left) else ""
            rt = html.escape(right[k]) if k < len(right) else ""
            ln = str(i1 + k + 1) if k < len(left) else ""
            rn = str(j1 + k + 1) if k < len(right) else ""
            rows.append(
                f'<tr><td nowrap align="right" style="color:#8c959f">{ln}&nbsp;</td>'
                f'<td width="49%" style="white-space:pre-wrap; background:'
                f'{lc or "transparent"}">{lt}</td>'
                f'<td nowrap align="right" style="color:#8c959f">{rn}&nbsp;</td>'
                f'<td width="49%" style="white-space:pre-wrap; background:'
                f'{rc or "transparent"}">{rt}</td></tr>')
    head = (f'<tr><th></th><th align="left">{html.escape(a_name)}</th><th></th>'
            f'<th align="left">{html.escape(b_name)}</th></tr>')
    return ('<table width="100%" cellspacing="0" cellpadding="2">' + head + "".join(rows)
            + "</table>")


class ProfileEditorDialog(QDialog):
    profiles_loaded = Signal(int)          # how many entries the list shows
    profile_saved = Signal(str)            # path written
    check_finished = Signal(object)        # ProfileCheck
    check_failed = Signal(str)             # a sentence
    message_changed = Signal(str)

    def __init__(self, catalog: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog = catalog
        self.setObjectName("ProfileEditorDialog")
        self.setWindowTitle("Server profiles")
        self.tasks = TaskRunner(self)
        self.entries: list[ListedProfile] = []
        self.current: ListedProfile | None = None
        self.last_check: Any = None
        self._build()
        self._connect()
        self._validate_timer = QTimer(self)
        self._validate_timer.setSingleShot(True)
        self._validate_timer.setInterval(250)
        self._validate_timer.timeout.connect(self._on_validate_timer_timeout)
        self.resize(1180, 760)
        self.reload()

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        self.tree = QTreeWidget()
        self.tree.setObjectName("profile_tree")
        self.tree.setHeaderHidden(True)
        self.tree.setIndentation(14)
        self.tree.setMinimumWidth(220)

        # metadata
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("name_edit")
        self.engine_combo = QComboBox()
        self.engine_combo.setObjectName("engine_combo")
        for e in ENGINES:
            self.engine_combo.addItem(ENGINE_LABELS[e], e)
        self.versions_edit = QLineEdit()
        self.versions_edit.setObjectName("versions_edit")
        self.versions_edit.setPlaceholderText("all versions, or e.g. >=12, <19")
        self.description_edit = QLineEdit()
        self.description_edit.setObjectName("description_edit")
        self.durable_combo = QComboBox()
        self.durable_combo.setObjectName("durable_combo")
        for text, value in (("not said", None), ("durable (fsync on)", True),
                            ("not durable (no fsync)", False)):
            self.durable_combo.addItem(text, value)
        meta = QFormLayout()
        meta.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.name_edit, 2)
        row.addWidget(QLabel("Engine"))
        row.addWidget(self.engine_combo, 1)
        row.addWidget(QLabel("Versions"))
        row.addWidget(self.versions_edit, 1)
        meta.addRow("Name", row)
        row2 = QHBoxLayout()
        row2.addWidget(self.description_edit, 3)
        row2.addWidget(self.durable_combo, 1)
        meta.addRow("Description", row2)

        # editor
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("config_editor")
        self.editor.setFont(mono_font())
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setPlaceholderText("shared_buffers = {{ ram_mb * 0.25 | int }}MB")
        self.highlighter = ProfileHighlighter(self.editor.document())
        self.message = QLabel("")
        self.message.setObjectName("profile_message")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # check against a server
        self.target_combo = QComboBox()
        self.target_combo.setObjectName("check_target_combo")
        self.target_combo.setEditable(True)
        self.target_combo.setMinimumWidth(240)
        self.target_combo.lineEdit().setPlaceholderText("saved target or postgresql://… URL")
        self._fill_targets()
        self.check_button = QPushButton("Check against server")
        self.check_button.setObjectName("check_button")
        self.problem_list = QListWidget()
        self.problem_list.setObjectName("problem_list")
        self.problem_list.setMaximumHeight(110)
        self.problem_list.setVisible(False)
        check_row = QHBoxLayout()
        check_row.addWidget(QLabel("Server"))
        check_row.addWidget(self.target_combo, 1)
        check_row.addWidget(self.check_button)

        edit_page = QWidget()
        ep = QVBoxLayout(edit_page)
        ep.setContentsMargins(0, 6, 0, 0)
        ep.addWidget(self.editor, 1)
        ep.addLayout(check_row)
        ep.addWidget(self.problem_list)

        # render preview
        ctx = render_mod.host_context()
        self.ram_spin = QSpinBox()
        self.ram_spin.setObjectName("ram_spin")
        self.ram_spin.setRange(256, 64 * 1024 * 1024)
        self.ram_spin.setSingleStep(1024)
        self.ram_spin.setSuffix(" MB")
        self.ram_spin.setValue(int(ctx["ram_mb"]) or 16384)
        self.cores_spin = QSpinBox()
        self.cores_spin.setObjectName("cores_spin")
        self.cores_spin.setRange(1, 4096)
        self.cores_spin.setValue(int(ctx["cores"]))
        self.clients_spin = QSpinBox()
        self.clients_spin.setObjectName("clients_spin")
        self.clients_spin.setRange(1, 100_000)
        self.clients_spin.setValue(16)
        self.preview = QPlainTextEdit()
        self.preview.setObjectName("render_preview")
        self.preview.setReadOnly(True)
        self.preview.setFont(mono_font())
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.preview_highlighter = ProfileHighlighter(self.preview.document())
        render_page = QWidget()
        rp = QVBoxLayout(render_page)
        rp.setContentsMargins(0, 6, 0, 0)
        rrow = QHBoxLayout()
        for label, w in (("RAM", self.ram_spin), ("Cores", self.cores_spin),
                         ("Clients", self.clients_spin)):
            rrow.addWidget(QLabel(label))
            rrow.addWidget(w)
        rrow.addStretch(1)
        rp.addLayout(rrow)
        rp.addWidget(self.preview, 1)

        # diff
        self.diff_left = QComboBox()
        self.diff_left.setObjectName("diff_left")
        self.diff_right = QComboBox()
        self.diff_right.setObjectName("diff_right")
        self.unified_radio = QRadioButton("Unified")
        self.unified_radio.setObjectName("unified_radio")
        self.side_radio = QRadioButton("Side by side")
        self.side_radio.setObjectName("side_radio")
        self.side_radio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.unified_radio)
        group.addButton(self.side_radio)
        self.diff_unified = QPlainTextEdit()
        self.diff_unified.setObjectName("diff_unified")
        self.diff_unified.setReadOnly(True)
        self.diff_unified.setFont(mono_font())
        self.diff_unified.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_highlighter = DiffHighlighter(self.diff_unified.document())
        self.diff_side = QTextEdit()
        self.diff_side.setObjectName("diff_side")
        self.diff_side.setReadOnly(True)
        self.diff_side.document().setDefaultFont(mono_font())
        self.diff_side.document().setDefaultStyleSheet(
            "pre { margin: 0; } th { color: #57606a; }")
        diff_page = QWidget()
        dp = QVBoxLayout(diff_page)
        dp.setContentsMargins(0, 6, 0, 0)
        drow = QHBoxLayout()
        drow.addWidget(self.diff_left, 1)
        drow.addWidget(QLabel("→"))
        drow.addWidget(self.diff_right, 1)
        drow.addWidget(self.side_radio)
        drow.addWidget(self.unified_radio)
        dp.addLayout(drow)
        dp.addWidget(self.diff_side, 1)
        dp.addWidget(self.diff_unified, 1)
        self.diff_unified.setVisible(False)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("profile_tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(edit_page, "Configuration")
        self.tabs.addTab(render_page, "Rendered for host")
        self.tabs.addTab(diff_page, "Diff")

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(8, 0, 0, 0)
        rl.addLayout(meta)
        rl.addWidget(self.message)
        rl.addWidget(self.tabs, 1)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        split.setSizes([250, 930])
        split.setCollapsible(1, False)

        self.new_button = QPushButton("New")
        self.new_button.setObjectName("new_button")
        self.diff_button = QPushButton("Diff…")
        self.diff_button.setObjectName("diff_button")
        self.save_button = QPushButton("Save as…")
        self.save_button.setObjectName("save_as_button")
        self.save_button.setProperty("role", "primary")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.addButton(self.new_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.diff_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.ActionRole)

        lay = QVBoxLayout(self)
        lay.addWidget(split, 1)
        lay.addWidget(self.buttons)

    def _fill_targets(self) -> None:
        self.target_combo.addItem("Embedded PostgreSQL (this computer)", "embedded-postgres")
        if self.catalog is None:
            return
        for t in self.catalog.targets():
            if t.name == "embedded-postgres":
                continue
            self.target_combo.addItem(f"{t.name} · {ENGINE_LABELS.get(t.engine, t.engine)}",
                                      t.name)

    def _connect(self) -> None:
        self.tree.currentItemChanged.connect(self._on_tree_current_changed)
        self.editor.textChanged.connect(self._on_editor_text_changed)
        for w in (self.name_edit, self.versions_edit, self.description_edit):
            w.textChanged.connect(self._on_editor_text_changed)
        self.engine_combo.currentIndexChanged.connect(self._on_editor_text_changed)
        self.durable_combo.currentIndexChanged.connect(self._on_editor_text_changed)
        for s in (self.ram_spin, self.cores_spin, self.clients_spin):
            s.valueChanged.connect(self._on_render_inputs_changed)
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.check_button.clicked.connect(self._on_check_button_clicked)
        self.problem_list.itemActivated.connect(self._on_problem_list_activated)
        self.problem_list.itemClicked.connect(self._on_problem_list_activated)
        self.diff_left.currentIndexChanged.connect(self._on_diff_inputs_changed)
        self.diff_right.currentIndexChanged.connect(self._on_diff_inputs_changed)
        self.side_radio.toggled.connect(self._on_diff_inputs_changed)
        self.new_button.clicked.connect(self._on_new_button_clicked)
        self.diff_button.clicked.connect(self._on_diff_button_clicked)
        self.save_button.clicked.connect(self._on_save_button_clicked)
        self.buttons.rejected.connect(self.reject)

    # ------------------------------------------------------------------ the list
    def reload(self, select: str | None = None) -> None:
        """Read the profiles in a task; select the given id or path when they arrive."""
        want = select or (self._current_key())
        self.tasks.submit(read_all, lambda entries: self._on_profiles_read(entries, want),
                          self._on_profiles_read_failed)

    def _current_key(self) -> str | None:
        c = self.current
        if c is None:
            return None
        return c.profile.id if c.profile else c.path

    def _on_profiles_read(self, entries: list[ListedProfile], want: str | None) -> None:
        self.entries = entries
        self.tree.blockSignals(True)
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        select_item = None
        for e in ENGINES:
            top = QTreeWidgetItem([ENGINE_LABELS[e]])
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            f = top.font(0)
            f.setBold(True)
            top.setFont(0, f)
            groups[e] = top
            self.tree.addTopLevelItem(top)
        for i, entry in enumerate(entries):
            if entry.profile is not None:
                p = entry.profile
                item = QTreeWidgetItem([p.name])
                shipped = Path(p.path).is_relative_to(store.SHIPPED_DIR) if p.path else False
                item.setToolTip(0, f"{p.id}: {p.description or 'no description'}\n{p.path}"
                                   + ("\n(shipped with Versus)" if shipped else ""))
                if not shipped:
                    item.setText(0, f"{p.name}  (yours)")
                groups[p.engine].addChild(item)
                key = p.id
            else:
                path = Path(entry.path)
                eng = path.parent.name if path.parent.name in groups else "postgres"
                item = QTreeWidgetItem([f"{path.stem}  (cannot be used)"])
                item.setForeground(0, QColor(COLOURS["error"]))
                item.setToolTip(0, entry.error)
                groups[eng].addChild(item)
                key = entry.path
            item.setData(0, ROLE, i)
            if want is not None and want in (key, entry.path):
                select_item = item
        for top in groups.values():
            top.setExpanded(True)
            top.setHidden(top.childCount() == 0)
        self.tree.blockSignals(False)
        self._fill_diff_choices()
        if select_item is None and want is None:
            first = next((g.child(0) for g in groups.values() if g.childCount()), None)
            select_item = first
        if select_item is not None:
            self.tree.setCurrentItem(select_item)
        self.profiles_loaded.emit(len(entries))

    def _on_profiles_read_failed(self, exc: BaseException) -> None:
        self.show_message(f"Could not read the profiles: {exc}", error=True)

    def select(self, key: str) -> bool:
        """Select a listed profile by id ("postgres/bench") or by file path."""
        it = self._find_item(key)
        if it is not None:
            self.tree.setCurrentItem(it)
        return it is not None

    def _find_item(self, key: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                it = top.child(j)
                e = self.entries[it.data(0, ROLE)]
                if (e.profile and e.profile.id == key) or e.path == key:
                    return it
        return None

    @Slot(QTreeWidgetItem, QTreeWidgetItem)
    def _on_tree_current_changed(self, item: QTreeWidgetItem | None, _prev=None) -> None:
        if item is None or item.data(0, ROLE) is None:
            return
        entry = self.entries[item.data(0, ROLE)]
        self.current = entry
        self._clear_problems()
        if entry.profile is not None:
            self._show_profile(entry.profile)
            # the diff compares the saved profile with what the editor holds
            self.set_diff(entry.profile.id, EDITING, unified=self.unified_radio.isChecked())
            return
        # A file that cannot be used: show why, and what can be salvaged of it to fix.
        self.tasks.submit(lambda: read_raw(entry.path),
                          lambda raw: self._on_broken_read(entry, raw),
                          lambda exc: self.show_message(entry.error, error=True))

    def _on_broken_read(self, entry: ListedProfile, raw: tuple[dict, str]) -> None:
        data, text = raw
        config = data.get("config") if isinstance(data.get("config"), str) else None
        self._fill_fields(str(data.get("name", Path(entry.path).stem)),
                          str(data.get("engine", Path(entry.path).parent.name)),
                          str(data.get("versions", "")), str(data.get("description", "")),
                          data.get("durable") if isinstance(data.get("durable"), bool) else None,
                          config if config is not None else text)
        self.show_message(entry.error, error=True)

    def _show_profile(self, p: Profile) -> None:
        self._fill_fields(p.name, p.engine, p.versions, p.description, p.durable, p.config)
        self.show_message("")

    def _fill_fields(self, name, engine, versions, description, durable, config) -> None:
        widgets = (self.name_edit, self.engine_combo, self.versions_edit, self.description_edit,
                   self.durable_combo, self.editor)
        for w in widgets:
            w.blockSignals(True)
        self.name_edit.setText(name)
        idx = self.engine_combo.findData(engine)
        self.engine_combo.setCurrentIndex(max(0, idx))
        self.versions_edit.setText(versions)
        self.description_edit.setText(description)
        self.description_edit.setCursorPosition(0)
        self.durable_combo.setCurrentIndex(max(0, self.durable_combo.findData(durable)))
        self.editor.setPlainText(config)
        for w in widgets:
            w.blockSignals(False)
        self._refresh_views()

    # ------------------------------------------------------------------ the edited profile
    def edited_profile(self) -> Profile:
        """The profile as the fields say now; ProfileError with a sentence when it is wrong."""
        d: dict[str, Any] = {"name": self.name_edit.text().strip(),
                             "engine": self.engine_combo.currentData(),
                             "versions": self.versions_edit.text().strip(),
                             "description": self.description_edit.text().strip(),
                             "config": self.editor.toPlainText()}
        if self.durable_combo.currentData() is not None:
            d["durable"] = self.durable_combo.currentData()
        prof = Profile.from_dict(d, "this profile")
        store.check_config(prof)
        return prof

    def show_message(self, text: str, error: bool = False) -> None:
        colour = COLOURS["error"] if error else COLOURS["comment"]
        self.message.setStyleSheet(f"color: {colour};")
        self.message.setText(text)
        self.message.setVisible(bool(text))
        self.message_changed.emit(text)

    @Slot()
    def _on_editor_text_changed(self, *_args) -> None:
        self._validate_timer.start()

    @Slot()
    def _on_validate_timer_timeout(self) -> None:
        self._refresh_views()

    def _refresh_views(self) -> None:
        try:
            self.edited_profile()
        except ProfileError as exc:
            self.show_message(str(exc), error=True)
        else:
            if self.current is None or self.current.profile is not None:
                self.show_message("")
        self._render_preview()
        self._fill_diff_choices()
        self._show_diff()

    @Slot()
    def _on_render_inputs_changed(self, *_args) -> None:
        self._render_preview()

    def render_context(self) -> dict[str, float]:
        ram = self.ram_spin.value()
        return {"ram_mb": ram, "ram_gb": ram // 1024, "cores": self.cores_spin.value(),
                "clients": self.clients_spin.value()}

    def _render_preview(self) -> None:
        try:
            text = render_mod.render(self.editor.toPlainText(), self.render_context())
        except render_mod.ProfileError as exc:
            self.preview.setPlainText(f"# cannot be rendered: {exc}")
            return
        self.preview.setPlainText(text)

    @Slot(int)
    def _on_tabs_current_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.preview.parentWidget():
            self._render_preview()

    # ------------------------------------------------------------------ check against a server
    def check_target(self) -> str:
        idx = self.target_combo.currentIndex()
        text = self.target_combo.currentText().strip()
        if idx >= 0 and self.target_combo.itemText(idx) == text:
            return self.target_combo.itemData(idx) or text
        return text

    @Slot()
    def _on_check_button_clicked(self) -> None:
        self.start_check()

    def start_check(self, target: str | None = None) -> None:
        try:
            prof = self.edited_profile()
        except ProfileError as exc:
            self.show_message(str(exc), error=True)
            self.check_failed.emit(str(exc))
            return
        target = target or self.check_target()
        if not target:
            self.show_message("Choose a server to check the profile against.", error=True)
            return
        from app.remote.profile_check import check_profile_on_target
        catalog, clients = self.catalog, self.clients_spin.value()
        self.check_button.setEnabled(False)
        self.check_button.setText("Checking…")
        self._clear_problems()
        self.show_message(f"Checking against {target}…")
        self.tasks.submit(lambda: check_profile_on_target(prof, target, catalog,
                                                          clients=clients),
                          self._on_check_done, self._on_check_error)

    def _on_check_done(self, result: Any) -> None:
        self._check_ended()
        self.last_check = result
        version = (result.version or "").split(" on ")[0].split(",")[0]
        if result.ok:
            self.show_message(f"{version} accepts all {result.checked} settings.")
        else:
            n = len(result.problems)
            self.show_message(f"{version}: {n} of {result.checked} settings would not be "
                              f"accepted (underlined below).", error=True)
        self._show_problems(result.problems)
        self.check_finished.emit(result)

    def _on_check_error(self, exc: BaseException) -> None:
        self._check_ended()
        text = str(exc) or type(exc).__name__
        self.show_message(f"Could not check the profile: {text}", error=True)
        self.check_failed.emit(text)

    def _check_ended(self) -> None:
        self.check_button.setEnabled(True)
        self.check_button.setText("Check against server")

    def _clear_problems(self) -> None:
        self.problem_list.clear()
        self.problem_list.setVisible(False)
        self.editor.setExtraSelections([])

    def _show_problems(self, problems: list) -> None:
        self.problem_list.clear()
        selections = []
        doc = self.editor.document()
        for p in problems:
            tag = "unknown name" if p.kind == "unknown" else "rejected value"
            item = QListWidgetItem(f"line {p.line} · {tag}: {p.message}")
            item.setData(ROLE, p.line)
            item.setForeground(QColor(COLOURS["error"]))
            self.problem_list.addItem(item)
            block = doc.findBlockByNumber(p.line - 1)
            if not block.isValid():
                continue
            text = block.text()
            want = p.name if p.kind == "unknown" else (p.value or p.name)
            col = text.find(want) if want else -1
            if p.kind == "rejected" and col < 0:       # a value produced by an expression
                col = text.find("=") + 1 if "=" in text else 0
                length = len(text) - col
            else:
                col, length = (max(0, col), len(want)) if col >= 0 else (0, len(text))
            sel = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(QColor(COLOURS["error"]))
            fmt.setToolTip(p.message)
            sel.format = fmt
            cur = QTextCursor(block)
            cur.setPosition(block.position() + col)
            cur.setPosition(block.position() + col + length, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cur
            selections.append(sel)
            line_sel = QTextEdit.ExtraSelection()
            lf = QTextCharFormat()
            lf.setBackground(QColor("#fff5f5"))
            lf.setProperty(QTextFormat.Property.FullWidthSelection, True)
            line_sel.format = lf
            line_sel.cursor = QTextCursor(block)
            selections.insert(0, line_sel)
        self.editor.setExtraSelections(selections)
        self.problem_list.setVisible(bool(problems))

    @Slot(QListWidgetItem)
    def _on_problem_list_activated(self, item: QListWidgetItem) -> None:
        block = self.editor.document().findBlockByNumber(int(item.data(ROLE)) - 1)
        if block.isValid():
            self.tabs.setCurrentIndex(0)
            self.editor.setTextCursor(QTextCursor(block))
            self.editor.setFocus()

    def problem_lines(self) -> list[int]:
        """The editor lines marked by the last check (1-based)."""
        return sorted({s.cursor.blockNumber() + 1 for s in self.editor.extraSelections()})

    # ------------------------------------------------------------------ diff
    def _fill_diff_choices(self) -> None:
        names = [EDITING] + [e.profile.id for e in self.entries if e.profile is not None]
        for combo in (self.diff_left, self.diff_right):
            keep = combo.currentText()
            combo.blockSignals(True)
            if [combo.itemText(i) for i in range(combo.count())] != names:
                combo.clear()
                combo.addItems(names)
            combo.setCurrentIndex(max(0, combo.findText(keep)))
            combo.blockSignals(False)

    def _text_of(self, choice: str) -> str:
        if choice == EDITING:
            return self.editor.toPlainText()
        for e in self.entries:
            if e.profile is not None and e.profile.id == choice:
                return e.profile.config
        return ""

    def set_diff(self, left: str, right: str, unified: bool = False) -> None:
        self.diff_left.setCurrentText(left)
        self.diff_right.setCurrentText(right)
        (self.unified_radio if unified else self.side_radio).setChecked(True)
        self._show_diff()

    @Slot()
    def _on_diff_inputs_changed(self, *_args) -> None:
        self._show_diff()

    def _show_diff(self) -> None:
        a_name, b_name = self.diff_left.currentText(), self.diff_right.currentText()
        a, b = self._text_of(a_name), self._text_of(b_name)
        side = self.side_radio.isChecked()
        self.diff_side.setVisible(side)
        self.diff_unified.setVisible(not side)
        if a == b:
            same = f"{a_name} and {b_name} have the same configuration text."
            self.diff_unified.setPlainText(same)
            self.diff_side.setHtml(f"<p>{html.escape(same)}</p>")
            return
        if side:
            self.diff_side.setHtml(side_by_side_html(a, b, a_name, b_name))
        else:
            self.diff_unified.setPlainText(unified_diff(a, b, a_name, b_name))

    @Slot()
    def _on_diff_button_clicked(self) -> None:
        self.tabs.setCurrentIndex(2)
        self._show_diff()

    # ------------------------------------------------------------------ new, save as
    @Slot()
    def _on_new_button_clicked(self) -> None:
        self.current = None
        self.tree.setCurrentItem(None)
        self._clear_problems()
        engine = self.engine_combo.currentData() or "postgres"
        example = ("# one setting a line; {{ expressions }} use ram_mb, ram_gb, cores, clients\n"
                   "shared_buffers = {{ ram_mb * 0.25 | int }}MB\n") if engine == "postgres" \
            else "[mysqld]\ninnodb_buffer_pool_size = {{ ram_mb * 0.5 | int }}M\n"
        self._fill_fields("my-profile", engine, "", "", None, example)

    @Slot()
    def _on_save_button_clicked(self) -> None:
        try:
            prof = self.edited_profile()
        except ProfileError as exc:
            self.show_message(str(exc), error=True)
            return
        suggestion = prof.name if self.current is None or self.current.profile is None or \
            self.current.profile.name != prof.name else f"{prof.name}-copy"
        dlg = QInputDialog(self)
        dlg.setObjectName("save_as_name")
        dlg.setWindowTitle("Save profile as")
        dlg.setLabelText(f"Name of the {ENGINE_LABELS[prof.engine]} profile "
                         f"(saved in {store.user_dir() / prof.engine}):")
        dlg.setTextValue(suggestion)
        dlg.textValueSelected.connect(self.save_as)
        dlg.open()

    def save_as(self, name: str) -> None:
        """Save the edited profile under a new name in the user's profiles folder."""
        name = name.strip()
        try:
            prof = self.edited_profile()
            prof = Profile.from_dict({**prof.to_dict(), "name": name}, "this profile")
        except ProfileError as exc:
            self.show_message(str(exc), error=True)
            return
        target = store.user_dir() / prof.engine / f"{prof.name}.toml"
        if target.exists() and (self.current is None or self.current.path != str(target)):
            answer = QMessageBox.question(self, "Replace profile?",
                                          f"{target} exists. Replace it?")
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.tasks.submit(lambda: store.save_profile(prof, target),
                          self._on_profile_written, self._on_profile_write_failed)

    def _on_profile_written(self, path: Path) -> None:
        self.show_message(f"Saved {path}.")
        self.profile_saved.emit(str(path))
        self.reload(select=str(path))

    def _on_profile_write_failed(self, exc: BaseException) -> None:
        self.show_message(f"Could not save the profile: {exc}", error=True)

