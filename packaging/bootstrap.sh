#!/usr/bin/env bash
# Set up Versus from this checkout and start it:
#   bash packaging/bootstrap.sh app    # install, then start the GUI (embedded PostgreSQL default)
#   bash packaging/bootstrap.sh test   # install, start the test servers, run the whole suite
# As root on Debian it installs the system packages it needs; elsewhere it says what is missing.
set -euo pipefail
mode=${1:-app}
shift || true
cd "$(dirname "$0")/.."
root=$(pwd)

# Qt's xcb/offscreen platforms, and headers for mysqlclient and MariaDB Connector/Python
app_pkgs=(libegl1 libgl1 libfontconfig1 libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0
          libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0
          libxcb-randr0 libxcb-render-util0 libxcb-image0 libmariadb-dev pkg-config gcc
          python3-venv)
# loopback sshd, peer tools for bench/, a real X screen for screenshots, PDF rendering,
# the database servers the tests use, perf (the server's counters and CPU profiles) and
# taskset (the client-bound test); LibreOffice Impress renders the slide decks the deck test reads
test_pkgs=(openssh-server sysbench xvfb xauth poppler-utils postgresql mariadb-server
           mariadb-client postgresql-contrib linux-perf util-linux libreoffice-impress)

want=("${app_pkgs[@]}")
[ "$mode" = test ] && want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bootstrap: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
      apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
  elif command -v dpkg-query >/dev/null; then
    echo "bootstrap: please install: sudo apt-get install ${missing[*]}" >&2
  fi
fi

py=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
extras="mysqlclient,mariadb"
[ "$mode" = test ] && extras="mysqlclient,mariadb,test"
stamp=.venv/.versus-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/pip install -q --disable-pip-version-check -e ".[${extras}]" \
    || .venv/bin/pip install -q --disable-pip-version-check -e ".[test]"   # no C compiler: PyMySQL only
  [ "$mode" = test ] && touch "$stamp"
fi

# Bytecode for the project's own modules now, not at every start: an environment with
# PYTHONDONTWRITEBYTECODE set never caches it (a start took 1.14 s without, 0.92 s with).
.venv/bin/python -m compileall -q app workloads >/dev/null 2>&1 || true

start_services() {
  # The machine's PostgreSQL and MariaDB, started when they are not listening.
  if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
    echo "bootstrap: starting PostgreSQL"
    for v in $(ls /etc/postgresql 2>/dev/null); do
      pg_ctlcluster --skip-systemctl-redirect "$v" main start || true
    done
  fi
  if ! (exec 3<>/dev/tcp/127.0.0.1/3306) 2>/dev/null; then
    echo "bootstrap: starting MariaDB"
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql \
      || true
  fi
  for i in $(seq 1 60); do
    (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/3306) 2>/dev/null && return 0
    sleep 1
  done
  echo "bootstrap: PostgreSQL or MariaDB did not start on 127.0.0.1" >&2
}

install_hammerdb() {
  # HammerDB's CLI kit beside the checkout (../shared/peer-tools/hammerdb), for the tests
  # that drive HammerDB and import its output; installed once into ~/.cache/versus-peers.
  local kit origin
  # a clone made elsewhere (CI) finds it beside the checkout it was cloned from
  origin=$(git -C "$root" remote get-url origin 2>/dev/null || true)
  for kit in "${VERSUS_HAMMERDB_KIT:-}" "$root/../shared/peer-tools/hammerdb" \
             "$root/../../shared/peer-tools/hammerdb" \
             "${origin:+$origin/../shared/peer-tools/hammerdb}"; do
    if [ -n "$kit" ] && [ -x "$kit/install.sh" ]; then
      bash "$kit/install.sh" >/tmp/versus-hammerdb-install.log 2>&1 \
        || echo "bootstrap: HammerDB's kit did not install (see /tmp/versus-hammerdb-install.log)" >&2
      return 0
    fi
  done
  echo "bootstrap: HammerDB's CLI kit not found beside the checkout; its tests will skip" >&2
}

case "$mode" in
  app)
    exec .venv/bin/versus "$@" ;;
  test)
    [ "$(id -u)" = 0 ] && start_services
    install_hammerdb
    export QT_QPA_PLATFORM=offscreen PYTEST_QT_API=pyside6
    .venv/bin/lint-imports
    .venv/bin/ruff check --select F,E9 --quiet app workloads tests bench packaging
    # The headless job (as napari's): every test outside tests/ui, in a second virtual
    # environment that has no Qt at all, proves that nothing below app.ui needs it.
    noqt=.venv-noqt
    [ -x $noqt/bin/python ] || "$py" -m venv $noqt
    if [ ! -f $noqt/.versus-installed ] || [ pyproject.toml -nt $noqt/.versus-installed ]; then
      $noqt/bin/pip install -q --disable-pip-version-check -e ".[${extras}]" \
        || $noqt/bin/pip install -q --disable-pip-version-check -e ".[test]"
      $noqt/bin/pip uninstall -q -y PySide6-Essentials shiboken6 pyqtgraph pytest-qt
      touch $noqt/.versus-installed
    fi
    $noqt/bin/python -c "import importlib.util as u, sys; sys.exit(u.find_spec('PySide6') is not None)" \
      || { echo "bootstrap: $noqt still has PySide6" >&2; exit 1; }
    # Most tests wait on runs of a few seconds, so three workers share the two cores; tests
    # that judge the host's CPU (client saturation, CPU by process group) run alone after.
    # Exit code 5 is "nothing selected" (a filter given on the command line).
    allow_none() { "$@" || { rc=$?; [ $rc = 5 ] || exit $rc; }; }
    allow_none $noqt/bin/python -m pytest -p no:cacheprovider --ignore=tests/ui \
      --ignore=tests/workloads/test_contract.py -n 3 -m "not serial" "$@"
    allow_none $noqt/bin/python -m pytest -p no:cacheprovider --ignore=tests/ui \
      --ignore=tests/workloads/test_contract.py -m serial "$@"
    # the GUI's tests, and the contract over every workload (with its charts, drawn by Qt)
    allow_none .venv/bin/python -m pytest -p no:cacheprovider tests/ui \
      tests/workloads/test_contract.py -n 2 "$@" ;;
  install) ;;
  *) echo "usage: bash packaging/bootstrap.sh app|test|install" >&2; exit 2 ;;
esac
