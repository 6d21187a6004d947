#!/usr/bin/env bash
# Sets up the environment and runs the engine on the embedded demo cluster.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
exec .venv/bin/python -m scheduler simulate --cluster examples/demo --output table --debug-scores 3 "$@"
