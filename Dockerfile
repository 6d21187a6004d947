# One image for the three process kinds (docs/architecture.md, "Processes"); the command chooses the kind:
#   web:    uvicorn schedconsole.asgi:application --host 0.0.0.0 --port 8000 ...   (the default, CMD below)
#   engine: celery -A schedconsole worker -Q engine -n engine-%h@%h   (one leader among replicas)
#   worker: celery -A schedconsole worker -n worker-%h@%h              (imports and other tasks)
# The build steps are deploy/build.sh, which CI runs too (.ci/run).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/app/.venv/bin:$PATH \
    STATIC_ROOT=/app/staticfiles \
    SCHEDCONSOLE_VAR_DIR=/app/var \
    FORWARDED_ALLOW_IPS=*

RUN groupadd --system --gid 10001 app && useradd --system --uid 10001 --gid app --home-dir /app app
WORKDIR /app

# The pinned runtime first (requirements.lock, hashes checked), so that a code change does not
# reinstall it. No test or check tool is installed (those are requirements-dev.lock's).
COPY requirements.lock setup.sh ./
RUN ./setup.sh
COPY . .
RUN deploy/build.sh && mkdir -p var && chown -R app:app var

USER app
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"]
# The web server: uvicorn, as `manage.py runconsole` runs it (no permessage-deflate, 5 s grace for
# open watches on SIGTERM); X-Forwarded-* are trusted from FORWARDED_ALLOW_IPS (narrow it to the
# proxy's address where other hosts can reach the container).
CMD ["uvicorn", "schedconsole.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--proxy-headers", "--ws", "websockets-sansio", "--http", "httptools", "--ws-per-message-deflate", "false", "--lifespan", "off", "--timeout-graceful-shutdown", "5"]
