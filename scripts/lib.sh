# Shared by scripts/run and scripts/test: find Python >= 3.12 and set up .venv.
# shellcheck shell=bash
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

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
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT${extras:+[$extras]}" 2>&1 | grep -v '^WARNING: Location' || true
  "$VENV/bin/python" -c 'import kandev_web, django, channels' || { echo "installing kandev-web failed" >&2; exit 1; }
}
