# One image for the three process kinds (DESIGN section 1); the command chooses the kind:
#   web:    daphne -b 0.0.0.0 -p 8000 schedconsole.asgi:application   (the default)
#   engine: celery -A schedconsole worker -Q engine -n engine-%h@%h   (one leader among replicas)
#   worker: celery -A schedconsole worker -n worker-%h@%h              (imports and other tasks)
# The build steps are deploy/build.sh, which CI runs too (.ci/run).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/app/.venv/bin:$PATH \
    STATIC_ROOT=/app/staticfiles \
    SCHEDCONSOLE_VAR_DIR=/app/var

RUN groupadd --system --gid 10001 app && useradd --system --uid 10001 --gid app --home-dir /app app
WORKDIR /app

# Requirements first, so that a code change does not reinstall them.
COPY requirements.txt setup.sh ./
RUN ./setup.sh
COPY . .
RUN deploy/build.sh && mkdir -p var && chown -R app:app var

USER app
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status == 200 else 1)"]
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "--proxy-headers", "schedconsole.asgi:application"]
