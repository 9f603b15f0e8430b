"""The test suite's keyring. The machines that run the tests have no desktop keyring (no
D-Bus session with an unlocked Secret Service collection), so tests that save passwords
point PYTHON_KEYRING_BACKEND here: a JSON file in the test's VERSUS_HOME, mode 0600. It is
never chosen on its own (not registered with keyring) and never ships with Versus."""
from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend

NAME = "tests.keyring_backend.SuiteKeyring"


class SuiteKeyring(KeyringBackend):
    priority = 0

    @property
    def _file(self) -> Path:
        home = os.environ.get("VERSUS_HOME")
        if not home:
            raise RuntimeError("the test keyring lives in VERSUS_HOME, which is not set")
        return Path(home) / "test-keyring.json"

    def _load(self) -> dict:
        try:
            return json.loads(self._file.read_text())
        except FileNotFoundError:
            return {}

    def _save(self, data: dict) -> None:
        fd = os.open(self._file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)

    def get_password(self, service, username):
        return self._load().get(f"{service}\0{username}")

    def set_password(self, service, username, password):
        data = self._load()
        data[f"{service}\0{username}"] = password
        self._save(data)

    def delete_password(self, service, username):
        data = self._load()
        data.pop(f"{service}\0{username}", None)
        self._save(data)


def keyrings_alt_folder(dest: Path) -> Path | None:
    """A folder from which keyrings.alt imports: none needed (None) when this interpreter has
    it; else pip installs it into `dest` (keyrings.alt is no dependency of Versus nor of its
    tests, only the plain-text keyring these tests must see refused)."""
    import importlib.util
    import subprocess
    import sys
    try:
        if importlib.util.find_spec("keyrings.alt") is not None:
            return None
    except ModuleNotFoundError:         # no keyrings namespace at all
        pass
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--target", str(dest), "keyrings.alt"], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"keyrings.alt could not be installed: {r.stderr[-300:]}")
    return dest
