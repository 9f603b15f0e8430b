"""Passwords never go to a plain-text keyring (issue 15, item 8): with keyrings.alt installed,
the real keyring library picks its PlaintextKeyring on a machine without a desktop keyring
(or when PYTHON_KEYRING_BACKEND names it); Versus refuses it with a sentence saying what to
do, writes no password and saves no host or target, and reads none from such a file.

keyrings.alt is not a dependency of Versus (nor of its tests): when the interpreter running
the tests lacks it, it is installed with pip into a throwaway folder under /tmp and put on
the CLI's PYTHONPATH for these tests only."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def alt_path():
    """A PYTHONPATH on which keyrings.alt imports (the repository first)."""
    probe = subprocess.run([sys.executable, "-c", "import keyrings.alt"], capture_output=True)
    if probe.returncode == 0:
        yield str(ROOT)
        return
    with tempfile.TemporaryDirectory(prefix="versus-keyrings-alt-", dir="/tmp") as d:
        # its own dependencies (jaraco.*) come with keyring, which Versus depends on
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                            "--target", d, "keyrings.alt"], capture_output=True, text=True)
        if r.returncode:
            pytest.skip(f"keyrings.alt could not be installed for this test: {r.stderr[-300:]}")
        yield f"{ROOT}:{d}"


@pytest.fixture
def plain_env(tmp_path, alt_path):
    """No desktop keyring (no D-Bus session), no keyring configuration: the keyring library
    chooses by itself among what is installed."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS")}
    env.update(VERSUS_HOME=str(home), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=alt_path)
    return env


def _run(env, *args, input=None):
    return subprocess.run([sys.executable, "-m", "app.main", *args], capture_output=True,
                          text=True, env=env, input=input, cwd=str(ROOT), timeout=120)


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def test_the_keyring_library_itself_picks_the_plaintext_file_here(plain_env):
    """The premise: with keyrings.alt importable and no desktop keyring, keyring's own
    choice is the plain-text file."""
    r = subprocess.run([sys.executable, "-c", "import keyring; k = keyring.get_keyring(); "
                        "print(type(k).__module__, type(k).__name__)"],
                       capture_output=True, text=True, env=plain_env, cwd="/")
    assert r.stdout.split() == ["keyrings.alt.file", "PlaintextKeyring"], r.stdout + r.stderr


@pytest.mark.parametrize("forced", [False, True], ids=["chosen by keyring", "named in env"])
def test_a_plaintext_keyring_is_refused_and_nothing_is_written(plain_env, tmp_path, forced):
    if forced:
        plain_env["PYTHON_KEYRING_BACKEND"] = "keyrings.alt.file.PlaintextKeyring"
    for kind, args in (("target", ("--url", "postgresql://bench@127.0.0.1:5432/x")),
                       ("host", ("--address", "127.0.0.1", "--user", "bench"))):
        r = _run(plain_env, kind, "add", "box", *args, "--password-stdin",
                 input="s3cr3t-pw\n")
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "keyrings.alt.file.PlaintextKeyring" in r.stderr
        assert "not in a system keyring, so Versus stores no password there" in r.stderr
        assert "uninstall keyrings.alt or unset PYTHON_KEYRING_BACKEND" in r.stderr
        assert r.stderr.count("\n") == 1                      # one sentence
    # no keyring file, no saved host or target, the password nowhere on disk
    assert _files(tmp_path / "data") == []
    for p in _files(tmp_path):
        assert b"s3cr3t-pw" not in p.read_bytes(), p
    r = _run(plain_env, "target", "list")
    assert "box" not in r.stdout


def test_a_password_already_in_a_plaintext_file_is_not_read(plain_env):
    code = ("import keyring\n"
            "from keyrings.alt.file import PlaintextKeyring\n"
            "keyring.set_keyring(PlaintextKeyring())\n"
            "keyring.set_password('versus', 'target:old', 'leaked-pw')\n"
            "from app.remote.secrets import get_secret, keyring_status\n"
            "print(get_secret('target', 'old'))\n"
            "print(keyring_status())\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=plain_env, cwd=str(ROOT))
    out = r.stdout.splitlines()
    assert r.returncode == 0, r.stderr
    assert out[0] == "None" and out[1].startswith("(False, ")


def test_a_keyring_backend_that_cannot_be_loaded_is_a_sentence(plain_env, tmp_path):
    plain_env["PYTHON_KEYRING_BACKEND"] = "no_such_module.Keyring"
    r = _run(plain_env, "target", "add", "box", "--url", "postgresql://bench@127.0.0.1:5432/x",
             "--password-stdin", input="s3cr3t-pw\n")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "the keyring backend set in PYTHON_KEYRING_BACKEND cannot be loaded" in r.stderr
    assert "box" not in _run(plain_env, "target", "list").stdout
