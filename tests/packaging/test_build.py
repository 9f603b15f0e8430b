"""packaging/build.sh refuses a Python that lacks the project's dependencies (it built an app
that died at start with No module named 'tomli_w') and says which Python to use."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_build_refuses_a_python_without_the_projects_dependencies(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")],
                   check=True)
    py = tmp_path / "bare" / "bin" / "python"
    r = subprocess.run(["sh", "packaging/build.sh"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHON": str(py)})
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{py} lacks the project's dependencies" in r.stderr
    assert "tomli-w" in r.stderr and "PySide6-Essentials" in r.stderr
    assert "bootstrap.sh" in r.stderr and r.stdout == ""
