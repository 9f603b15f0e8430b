#!/bin/sh
# Build Versus for Linux: a PyInstaller one-folder app (build/dist/versus/) and one file to
# install it, a Debian package (build/versus_VERSION_ARCH.deb) made with dpkg-deb.
#
#     bash packaging/build.sh            (uses .venv/bin/python, or $PYTHON)
#
# Why a .deb and not an AppImage: an AppImage needs the AppImage runtime (the type2-runtime
# binary prepended to the squashfs image), which appimagetool and the PyPI builders
# (appimage, pyproject-appimage, python-appimage) download from the project's releases at
# build time; neither PyPI nor Debian ships it, and builds here must not download. dpkg-deb
# is part of Debian itself. See packaging/README.md.
set -eu
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
out=build
# The build freezes what this Python has: without the project's dependencies it makes an app
# that dies at start (No module named 'tomli_w'). Refuse, and say which Python to use.
lacking() {
"$py" - <<'PY'
import re
from importlib import metadata
deps = re.search(r"^dependencies = \[(.*?)^\]", open("pyproject.toml").read(), re.S | re.M)
names = [re.match(r"[A-Za-z0-9._-]+", d).group(0)
         for d in re.findall(r'^\s*"([^"]+)"', deps.group(1), re.M)]
lacks = []
for n in names:
    try:
        metadata.version(n)
    except metadata.PackageNotFoundError:
        lacks.append(n)
print(", ".join(lacks))
PY
}
missing=$(lacking 2>&1) || missing="(its dependencies cannot be read: $missing)"
if [ -n "$missing" ]; then
    echo "build.sh: $py lacks the project's dependencies: $missing. Build with the Python" \
         "Versus is installed in: bash packaging/bootstrap.sh app creates .venv (then run" \
         "build.sh again), or PYTHON=/path/to/python after 'pip install -e .' into it." >&2
    exit 2
fi
"$py" -m PyInstaller --version >/dev/null 2>&1 || "$py" -m pip install -q "pyinstaller>=6.10"
"$py" -m PyInstaller --noconfirm --log-level WARN --distpath "$out/dist" \
    --workpath "$out/work" packaging/versus.spec

version=$("$py" -c "import app; print(app.__version__)")
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
pkg="$out/deb/versus_${version}_${arch}"
rm -rf "$pkg"
mkdir -p "$pkg/DEBIAN" "$pkg/opt" "$pkg/usr/bin" "$pkg/usr/share/applications" \
    "$pkg/usr/share/icons/hicolor/scalable/apps" "$pkg/usr/share/mime/packages"
cp -a "$out/dist/versus" "$pkg/opt/versus"
ln -s /opt/versus/versus "$pkg/usr/bin/versus"
cp resources/versus.desktop "$pkg/usr/share/applications/versus.desktop"
cp resources/versus.svg "$pkg/usr/share/icons/hicolor/scalable/apps/versus.svg"
cp resources/versus-mime.xml "$pkg/usr/share/mime/packages/versus.xml"
size=$(du -sk "$pkg" | cut -f1)
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: versus
Version: $version
Architecture: $arch
Maintainer: Versus <versus@localhost>
Installed-Size: $size
Depends: libc6, libgl1, libegl1, libxkbcommon0, libfontconfig1, libdbus-1-3
Section: database
Priority: optional
Description: run, watch, compare and export database benchmarks
 A desktop app for MySQL, MariaDB and PostgreSQL benchmarks: live charts, saved sessions,
 comparisons and slide exports; runs on this computer against an embedded PostgreSQL or
 over SSH on benchmark hosts.
CONTROL
dpkg-deb --root-owner-group --build "$pkg" "$out/versus_${version}_${arch}.deb" >/dev/null
echo "$out/dist/versus/versus"
echo "$out/versus_${version}_${arch}.deb"
