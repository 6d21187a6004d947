#!/usr/bin/env bash
# Sets up the environment and starts the console on 127.0.0.1:${PORT:-8000} with the embedded
# engine and the demo cluster (SQLite under var/, no other service needed).
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
exec .venv/bin/python manage.py runconsole "$@"
