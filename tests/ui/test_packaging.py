"""The packaged app (packaging/build.sh): a PyInstaller one-folder build and a Debian package
with the .desktop file and the icon; the built program runs the embedded default for 5 s
and exits 0, and its window comes up and closes cleanly. Slow: the build takes minutes."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(3600),
    pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="needs dpkg-deb (Debian)"),
]


@pytest.fixture(scope="module")
def built():
    pytest.importorskip("PyInstaller")
    r = subprocess.run(["bash", "packaging/build.sh"], cwd=ROOT, capture_output=True,
                       text=True, timeout=3000, env={**os.environ, "PYTHON": sys.executable})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    exe, deb = (ROOT / line for line in r.stdout.strip().splitlines()[-2:])
    return exe, deb


def test_the_debian_package_holds_the_app_its_launcher_and_icon(built):
    exe, deb = built
    assert exe.is_file() and os.access(exe, os.X_OK)
    assert deb.suffix == ".deb"
    info = subprocess.run(["dpkg-deb", "--info", str(deb)], capture_output=True, text=True,
                          check=True).stdout
    assert "Package: versus" in info
    files = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True,
                           text=True, check=True).stdout
    for path in ("./opt/versus/versus", "./usr/bin/versus",
                 "./usr/share/applications/versus.desktop",
                 "./usr/share/icons/hicolor/scalable/apps/versus.svg"):
        assert path in files, path
    # passwords only in a system keyring: the plain-text keyrings are not shipped
    assert "keyrings/alt" not in files and "keyrings.alt" not in files


def test_the_built_app_runs_the_embedded_default_for_5_s(built):
    exe, _deb = built
    home = tempfile.mkdtemp(prefix="versus-built-")
    env = {**os.environ, "VERSUS_HOME": home}
    env.pop("PYTHONPATH", None)                  # the frozen app brings its own modules
    r = subprocess.run([str(exe), "run", "--workload", "point-query", "--duration", "5",
                        "--set", "table-size=1000"], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "measure done" in r.stdout and "session saved" in r.stdout
    shutil.rmtree(home, ignore_errors=True)


def test_the_built_app_window_comes_up_and_closes(built):
    exe, _deb = built
    env = {**os.environ, "VERSUS_HOME": tempfile.mkdtemp(prefix="versus-built-"),
           "QT_QPA_PLATFORM": "offscreen", "VERSUS_EXIT_WHEN_SHOWN": "1"}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "window usable after" in r.stdout
