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

# Qt's xcb/offscreen platforms, and headers for mysqlclient
app_pkgs=(libegl1 libgl1 libfontconfig1 libdbus-1-3 libxkbcommon0 libxkbcommon-x11-0
          libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0
          libxcb-randr0 libxcb-render-util0 libxcb-image0 libmariadb-dev pkg-config gcc
          python3-venv)
# loopback sshd, peer tools for bench/, a real X screen for screenshots, PDF rendering,
# and the database servers the tests use
test_pkgs=(openssh-server sysbench xvfb xauth poppler-utils postgresql mariadb-server
           mariadb-client postgresql-contrib)

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
extras="mysqlclient"
[ "$mode" = test ] && extras="mysqlclient,test"
stamp=.venv/.versus-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/pip install -q --disable-pip-version-check -e ".[${extras}]" \
    || .venv/bin/pip install -q --disable-pip-version-check -e ".[test]"   # no C compiler: PyMySQL only
  [ "$mode" = test ] && touch "$stamp"
fi

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

case "$mode" in
  app)
    exec .venv/bin/versus "$@" ;;
  test)
    [ "$(id -u)" = 0 ] && start_services
    export QT_QPA_PLATFORM=offscreen
    .venv/bin/lint-imports
    exec .venv/bin/python -m pytest "$@" ;;
  install) ;;
  *) echo "usage: bash packaging/bootstrap.sh app|test|install" >&2; exit 2 ;;
esac
