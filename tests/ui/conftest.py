import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


@pytest.fixture
def versus_home(tmp_path, monkeypatch):
    """Everything the app writes (catalog, sessions, known_hosts) under one temp folder."""
    home = tmp_path / "versus-home"
    home.mkdir()
    monkeypatch.setenv("VERSUS_HOME", str(home))
    return home


@pytest.fixture
def make_window(qtbot, tmp_path, versus_home):
    """Build a MainWindow on a temp catalog, sessions folder and settings file."""
    from app.store.catalog import Catalog
    from app.ui.application import apply_theme
    from app.ui.main_window import MainWindow
    from app.ui.common.settings import Settings
    from PySide6.QtWidgets import QApplication

    apply_theme(QApplication.instance())
    made = []

    def make(**kw):
        sessions = tmp_path / "sessions"
        sessions.mkdir(exist_ok=True)
        w = MainWindow(Catalog(tmp_path / "config"), sessions,
                       settings=Settings(tmp_path / "ui.ini"), **kw)
        qtbot.addWidget(w)
        w.resize(1400, 900)
        w.show()
        made.append(w)
        return w

    yield make
    for w in made:
        # Let background reads finish before the window goes away.
        w.tasks.wait(10_000)
