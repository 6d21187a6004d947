#!/usr/bin/env bash
# The image's build steps, also run by CI (.ci/run) so that they are exercised on every change:
# the virtual environment with the pinned runtime, requirements.lock (./setup.sh), then the static files collected
# for WhiteNoise with the production storage (hashed, compressed names).
set -euo pipefail
cd "$(dirname "$0")/.."
./setup.sh
# collectstatic needs the production settings but no service: nothing here connects to Redis or
# a database, and the key only satisfies the settings' check (it signs nothing).
REDIS_URL=${REDIS_URL:-redis://build.invalid:6379/0} \
SECRET_KEY=${SECRET_KEY:-collectstatic-only-not-used-for-signing-$(date +%s)-0123456789abcdef} \
STATIC_ROOT=${STATIC_ROOT:-$PWD/staticfiles} \
  .venv/bin/python manage.py collectstatic --noinput -v0
echo "build: virtual environment and static files ready"
