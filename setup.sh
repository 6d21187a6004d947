#!/usr/bin/env bash
# Creates .venv (Python 3.11+) and installs the pinned runtime (requirements.lock), or with --dev
# the runtime plus tests and tools (requirements-dev.lock). Safe to run again: a stamp per lock
# file skips pip while the lock is unchanged.
set -euo pipefail
cd "$(dirname "$0")"
lock=requirements.lock
case ${1:-} in
  "") ;;
  --dev) lock=requirements-dev.lock ;;
  *) echo "usage: $0 [--dev]" >&2; exit 2 ;;
esac
PY=${PYTHON:-}
if [[ -z $PY ]]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then PY=$candidate; break; fi
  done
fi
if [[ ! -x .venv/bin/python ]]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.$lock.sha
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet --require-hashes -r "$lock"
  echo "$want" > "$stamp"
  if [[ $lock == requirements-dev.lock ]]; then
    # The dev lock pins the runtime lock's versions (tests/test_requirements.py checks it).
    sha256sum requirements.lock | cut -d' ' -f1 > .venv/.requirements.lock.sha
  fi
fi
