# Shared by scripts/run, scripts/test and scripts/bench: find Python >= 3.12, set up .venv, start private services.
# shellcheck shell=bash
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"

# Each step says when it began, in minutes and seconds since the script started.
say() { printf '\033[1m==> [%d:%02d] %s\033[0m\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

python_ok() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
  local candidate
  for candidate in python3.13 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
      command -v "$candidate"; return 0
    fi
  done
  # pyenv's shims refuse to run a version that is not selected, so call the
  # interpreters directly.
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  if command -v pyenv >/dev/null 2>&1; then pyenv_root="$(pyenv root)"; fi
  for candidate in "$pyenv_root"/versions/3.13*/bin/python "$pyenv_root"/versions/3.12*/bin/python; do
    if [ -x "$candidate" ] && python_ok "$candidate"; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

#: The uv that installs the lock (setup_venv) and remakes it (scripts/lock): the lock's own (the [test] extra).
UV_VERSION="$(sed -n 's/^uv==//p' "$ROOT/requirements/lock.txt")"

setup_venv() {
  local extras="$1"
  if [ ! -x "$VENV/bin/python" ] || ! python_ok "$VENV/bin/python"; then
    local python
    python="$(find_python)" || { echo "kandev-web needs Python >= 3.12 (python3.13, python3.12 or pyenv)." >&2; exit 1; }
    say "Creating $VENV with $python"
    rm -rf "$VENV"
    "$python" -m venv "$VENV"
  fi
  say "Installing kandev-web${extras:+ with [$extras]} into .venv"
  # The versions in requirements/lock.txt (bash scripts/lock), within pyproject.toml's ranges: every run
  # installs the same ones, not whatever is newest that day. uv installs them (the lock's, bootstrapped
  # by pip): a fresh venv in seconds, where pip took half a minute, most of a clean run's set-up.
  # Not compiled to bytecode here, as pip would: the first process to import a module writes its cache
  # (scripts/test makes sure Python may), so only what is used is compiled.
  # A failure stops here: a lock that no longer fits pyproject.toml must not pass as the last run's install.
  local log
  log="$(mktemp)"
  if ! { "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION" \
    && "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" \
      -c "$ROOT/requirements/lock.txt" -e "$ROOT${extras:+[$extras]}"; } >"$log" 2>&1; then
    grep -v '^WARNING: Location' "$log" >&2 || true
    rm -f "$log"
    echo "installing kandev-web failed (bash scripts/lock remakes requirements/lock.txt from pyproject.toml)" >&2
    exit 1
  fi
  grep -v '^WARNING: Location' "$log" || true
  rm -f "$log"
  "$VENV/bin/python" -c 'import kandev_web, django, channels' || { echo "installing kandev-web failed" >&2; exit 1; }
}

# Debian packages the named services need, installed when missing. Names:
# chromium (with chromium-headless-shell), redis, postgresql, sshd, gettext, node (with npm), caddy.
install_missing_packages() {
  local name need_apt=()
  for name in "$@"; do
    case "$name" in
      chromium)  # the whole browser and the headless shell the browser suite runs (testing_support/processes.py)
        command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
        command -v chromium-headless-shell >/dev/null 2>&1 || need_apt+=(chromium-headless-shell) ;;
      redis) command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server) ;;
      postgresql) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql) ;;
      sshd) [ -x /usr/sbin/sshd ] || need_apt+=(openssh-server) ;;
      gettext) command -v msgfmt >/dev/null 2>&1 || need_apt+=(gettext) ;;
      node) command -v npm >/dev/null 2>&1 || need_apt+=(nodejs npm) ;;
      caddy) command -v caddy >/dev/null 2>&1 || need_apt+=(caddy) ;;
      *) echo "install_missing_packages: unknown name $name" >&2; return 1 ;;
    esac
  done
  if [ "${#need_apt[@]}" -gt 0 ]; then
    say "Installing Debian packages: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  fi
}

free_port() {
  "$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The several-machines profile's services, private to this run: Redis,
# PostgreSQL and an sshd on free loopback ports, each in a temporary folder,
# all stopped on exit. Used by scripts/test and scripts/bench. Exports
# KANDEV_TEST_REDIS_URL, KANDEV_TEST_POSTGRES_URL and KANDEV_TEST_SSH_* (what
# e2e/conftest.py, testing_support/executor.py and benchmarks/profiles.py read).
start_private_services() {
  mark_this_run
  REDIS_DIR="$(mktemp -d)"
  PG_DIR="$(mktemp -d)"
  SSH_DIR="$(mktemp -d)"
  trap stop_private_services EXIT
  start_redis
  start_postgres
  start_sshd
}

# Runs twice when a run ends normally (scripts/test, then the EXIT trap); the second finds nothing to stop.
stop_private_services() {
  local redis_pid sshd_pid
  redis_pid="$(cat "$REDIS_DIR/redis.pid" 2>/dev/null || true)"
  sshd_pid="$(cat "$SSH_DIR/sshd.pid" 2>/dev/null || true)"
  kill $redis_pid $sshd_pid 2>/dev/null || true
  if [ -f "$PG_DIR/data/postmaster.pid" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  fi
  # Gone before anyone looks for what this run left behind (leftover_processes).
  for _ in $(seq 50); do kill -0 $redis_pid $sshd_pid 2>/dev/null || break; sleep 0.1; done
  rm -rf "$REDIS_DIR" "$PG_DIR" "$SSH_DIR"
}

# Every process this run starts carries KANDEV_TEST_RUN in its environment:
# inherited from here, and given by the private sshd to what it starts (its
# SetEnv), so agentctl on the SSH executor host carries it too.
mark_this_run() {
  export KANDEV_TEST_RUN="${KANDEV_TEST_RUN:-$$-$RANDOM$RANDOM}"
}

# The processes still running that this run started (KANDEV_TEST_RUN), but
# this shell: none should be, once the tests and the services have ended. An
# agentctl nobody stopped would run on for good (it waits to be adopted).
leftover_processes() {
  local environ pid
  for environ in /proc/[0-9]*/environ; do
    pid="${environ#/proc/}"; pid="${pid%/environ}"
    [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
    { tr '\0' '\n' <"$environ"; } 2>/dev/null | grep -qx "KANDEV_TEST_RUN=$KANDEV_TEST_RUN" && echo "$pid"
  done
}

# Fail, naming them, if the run left processes behind; they are stopped either way.
check_nothing_left_running() {
  local left
  left="$(leftover_processes)"
  [ -z "$left" ] && return 0
  say "These processes the run started are still running; a test or benchmark did not stop them:"
  ps -o pid=,args= -p $left >&2 || true
  kill -9 $left 2>/dev/null || true
  return 1
}

start_redis() {
  REDIS_PORT="$(free_port)"
  say "Starting Redis on 127.0.0.1:$REDIS_PORT"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --daemonize yes \
    --dir "$REDIS_DIR" --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log"
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  export KANDEV_TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
}

start_postgres() {
  PG_BIN="$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")"
  PG_PORT="$(free_port)"
  chown postgres "$PG_DIR"
  say "Starting PostgreSQL on 127.0.0.1:$PG_PORT"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres >/dev/null
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off" start >/dev/null
  export KANDEV_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
}

# An executor host on this machine's loopback, with its own host key and one
# client key. It runs the same venv's kandev-agentctl (KANDEV_TEST_SSH_AGENTCTL).
start_sshd() {
  SSH_PORT="$(free_port)"
  ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/client_key"
  cp "$SSH_DIR/client_key.pub" "$SSH_DIR/authorized_keys"
  cat >"$SSH_DIR/sshd_config" <<SSHD
ListenAddress 127.0.0.1
Port $SSH_PORT
HostKey $SSH_DIR/host_key
AuthorizedKeysFile $SSH_DIR/authorized_keys
PidFile $SSH_DIR/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
AllowTcpForwarding local
SetEnv KANDEV_TEST_RUN=$KANDEV_TEST_RUN
SSHD
  mkdir -p /run/sshd
  say "Starting sshd on 127.0.0.1:$SSH_PORT"
  /usr/sbin/sshd -f "$SSH_DIR/sshd_config" -E "$SSH_DIR/sshd.log"
  for _ in $(seq 50); do [ -s "$SSH_DIR/sshd.pid" ] && break; sleep 0.1; done
  export KANDEV_TEST_SSH_HOST=127.0.0.1 KANDEV_TEST_SSH_PORT="$SSH_PORT" KANDEV_TEST_SSH_USER="$(id -un)"
  export KANDEV_TEST_SSH_KEY="$SSH_DIR/client_key" KANDEV_TEST_SSH_AGENTCTL="$VENV/bin/kandev-agentctl"
  export KANDEV_TEST_SSH_HOST_KEY="$(cat "$SSH_DIR/host_key.pub")"
  export KANDEV_TEST_SSH_CONFIG="$SSH_DIR/sshd_config"  # for tests that start another sshd like it
}
