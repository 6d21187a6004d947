"""Django settings, read from the environment (every variable is listed in `.env.example`)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from schedconsole.env import SettingError, database_from_url, env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("SCHEDCONSOLE_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

REDIS_URL = env_str("REDIS_URL", "")
# No Redis means the embedded default: web and engine in one process, in-memory broker and layer.
EMBEDDED = REDIS_URL == ""


def _secret_key() -> str:
    key = env_str("SECRET_KEY", "")
    if key:
        return key
    if not EMBEDDED:
        raise SettingError("SECRET_KEY: required when REDIS_URL is set (production wiring)")
    # Embedded: one generated key kept under var/, so sessions survive a restart.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "schedconsole.accounts",
    "schedconsole.engine",
    "schedconsole.cluster",
    "schedconsole.history",
    "schedconsole.replay",
    "schedconsole.profiles",
    "schedconsole.api",
    "schedconsole.live",
    "schedconsole.pages",
    "schedconsole.k8sapi",
]

MIDDLEWARE = [
    "schedconsole.limits.ControlCharactersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    *([] if EMBEDDED else ["whitenoise.middleware.WhiteNoiseMiddleware"]),
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "schedconsole.accounts.middleware.LoginRequiredMiddleware",
]

ROOT_URLCONF = "schedconsole.urls"
ASGI_APPLICATION = "schedconsole.asgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'schedconsole.sqlite3'}")
DATABASES = {"default": database_from_url(DATABASE_URL)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Tests run the engine's threads against the test database: a file, not shared memory.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# PostgreSQL connections one process may hold at once, and how long a request waits for one
# before it is answered 503 with Retry-After (see schedconsole/db/base.py).
DB_POOL_MAX = env_int("SCHEDCONSOLE_DB_POOL_MAX", 20, minimum=1)
DB_POOL_TIMEOUT_SECONDS = env_int("SCHEDCONSOLE_DB_POOL_TIMEOUT", 5, minimum=0)

CACHES: dict[str, dict[str, str]]
CHANNEL_LAYERS: dict[str, dict[str, Any]]
if EMBEDDED:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = 600
# A started task names its worker in its result, so a caller can tell when that worker is gone.
CELERY_TASK_TRACK_STARTED = True
# Control tasks go to the leader's own queue (`<hostname>.dq2`); see engine/worker.py. Sent without
# a queue, one lands on `engine`, where any engine worker takes it and a follower answers 503.
CELERY_WORKER_DIRECT = True
CELERY_TASK_ROUTES = {"schedconsole.engine.control": {"queue": "engine"}, "schedconsole.replay.part": {"queue": "replay"}}
# Threads, not processes: an engine worker's tasks must reach the engine thread of its own process.
CELERY_WORKER_POOL = "threads"
# Threads of a web process that wait for the engine's answers (schedconsole/engine/client.py).
ENGINE_CALL_THREADS = env_int("SCHEDCONSOLE_ENGINE_CALL_THREADS", 32, minimum=1)
CELERY_WORKER_CONCURRENCY = env_int("SCHEDCONSOLE_WORKER_CONCURRENCY", 8, minimum=1)
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_timeout": 5, "socket_connect_timeout": 5}
CELERY_REDIS_SOCKET_TIMEOUT = 5
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 5
# How long the leader's Redis lock lives unrenewed: a follower takes over within it.
ENGINE_LEADER_TTL = env_int("SCHEDCONSOLE_LEADER_TTL", 10, minimum=1)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the page's JS module reads it for API calls with the session
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Production (REDIS_URL set) defaults to HTTPS only; the embedded default serves plain HTTP on
# 127.0.0.1. Behind a TLS-terminating proxy, set SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not EMBEDDED)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]  # probes speak plain HTTP
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not EMBEDDED)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if EMBEDDED else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
_proxy_header = env_str("SECURE_PROXY_SSL_HEADER", "")
if _proxy_header:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_header.upper().replace("-", "_"), "https")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
if not EMBEDDED:
    # WhiteNoise serves what `collectstatic` gathered (the image does it at build time), compressed
    # and with hashed names that browsers may cache for good.
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "schedconsole.accounts.authentication.BearerTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["schedconsole.accounts.permissions.ViewerReadOperatorWrite"],
    "DEFAULT_PAGINATION_CLASS": "schedconsole.api.base.ListPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PARSER_CLASSES": [
        "schedconsole.api.parsers.JSONParser",
        "schedconsole.api.parsers.YAMLParser",
        "schedconsole.api.parsers.TextYAMLParser",
        "schedconsole.api.parsers.XYAMLParser",
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "schedconsole API",
    "DESCRIPTION": "The console's REST API (nodes, pods, queue, attempts, profiles, plugin args, what-if, jobs, audit) and "
    "Koordinator's routes (/apis/v1/..., /debug/flags/s|f). CPU amounts are integers in millicores, memory and storage in bytes.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its browser behind login, as every page but the health probes.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    # The console API and Koordinator's routes (served by async views, described in koord_schema).
    "DEFAULT_GENERATOR_CLASS": "schedconsole.api.schema_generator.ConsoleSchemaGenerator",
    "ENUM_NAME_OVERRIDES": {
        "PodKindEnum": ["Pod"],
        "JobKindEnum": ["import", "bench", "replay"],
        "JobStateEnum": ["queued", "running", "done", "failed", "cancelled"],
        "ReplayCandidateStateEnum": ["queued", "done", "failed", "cancelled"],
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# The first operator `manage.py prepare` creates in production (both set, or neither).
OPERATOR_USERNAME = env_str("SCHEDCONSOLE_OPERATOR_USERNAME", "")
OPERATOR_PASSWORD = env_str("SCHEDCONSOLE_OPERATOR_PASSWORD", "")

# The console's own knobs.
HISTORY_RETENTION_DAYS = env_int("SCHEDCONSOLE_HISTORY_RETENTION_DAYS", 7, minimum=0)
HISTORY_MAX_ATTEMPTS = env_int("SCHEDCONSOLE_HISTORY_MAX_ATTEMPTS", 200000, minimum=0)
HISTORY_SCORE_NODES = env_int("SCHEDCONSOLE_HISTORY_SCORE_NODES", 10, minimum=0)
HISTORY_FILTER_NODES = env_int("SCHEDCONSOLE_HISTORY_FILTER_NODES", 100000, minimum=0)
UPLOAD_MAX_BYTES = env_int("SCHEDCONSOLE_UPLOAD_MAX_BYTES", 10 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = UPLOAD_MAX_BYTES
IMPORT_TIMEOUT_SECONDS = env_int("SCHEDCONSOLE_IMPORT_TIMEOUT", 120, minimum=1)
CONTROL_TIMEOUT_SECONDS = env_int("SCHEDCONSOLE_CONTROL_TIMEOUT", 10, minimum=1)
DEBUG_TOP_N_SCORES = env_int("SCHEDCONSOLE_DEBUG_TOP_N", 5, minimum=0)
PLUGIN_TIMING_EVERY = env_int("SCHEDCONSOLE_PLUGIN_TIMING_EVERY", 10, minimum=0)
# kube-scheduler-simulator's result annotations: on in the embedded console (the simulator's use),
# off by default in production, where they halve the store's import rate at 500 nodes (56 KB a pod).
RESULT_ANNOTATIONS = env_bool("SCHEDCONSOLE_RESULT_ANNOTATIONS", EMBEDDED)
DEMO_CLUSTER = env_bool("SCHEDCONSOLE_DEMO", True)
DEMO_TRICKLE_PODS_PER_SECOND = env_int("SCHEDCONSOLE_DEMO_TRICKLE", 1, minimum=0)
ENGINE_SEED = env_int("SCHEDCONSOLE_SEED", 0)
# Failed logins a minute (accounts/views.py): per address and name, per address, and over all
# addresses for names no user has.
LOGIN_RATE_LIMIT = env_int("SCHEDCONSOLE_LOGIN_RATE_LIMIT", 5, minimum=1)
LOGIN_ADDRESS_LIMIT = env_int("SCHEDCONSOLE_LOGIN_ADDRESS_LIMIT", 20, minimum=1)
LOGIN_UNKNOWN_LIMIT = env_int("SCHEDCONSOLE_LOGIN_UNKNOWN_LIMIT", 30, minimum=1)
LIVE_CLIENT_BUFFER = env_int("SCHEDCONSOLE_LIVE_CLIENT_BUFFER", 64, minimum=1)
LIVE_CLIENT_RATE = env_int("SCHEDCONSOLE_LIVE_CLIENT_RATE", 5, minimum=0)
# runconsole (web and engine in one process): how long a thread may hold the interpreter lock while
# another waits. 1 ms (CPython's default is 5): a request the engine answers is not held up behind a
# busy event loop, and the engine scheduled ~4% more pods a second than at 5 ms in the console benchmark.
SWITCH_INTERVAL_MS = env_int("SCHEDCONSOLE_SWITCH_INTERVAL_MS", 1, minimum=1)
# Embedded: console jobs (background imports, benchmarks) run at once; more wait queued. In production
# the task worker's own concurrency (celery --concurrency) bounds them.
JOBS_CONCURRENCY = env_int("SCHEDCONSOLE_JOBS_CONCURRENCY", 2, minimum=1)
# Replays (docs/replay.md): embedded, the local process pool's size (production: the task workers);
# the openb trace's folder (the data stays outside the repository).
REPLAY_WORKERS = env_int("SCHEDCONSOLE_REPLAY_WORKERS", 2, minimum=1)
REPLAY_OPENB_DATA = env_str("SCHEDCONSOLE_REPLAY_OPENB_DATA", str(BASE_DIR.parent / "shared" / "data" / "openb"))
# The Kubernetes-compatible API under /k8s (and the cluster backends).
K8S_WATCH_TIMEOUT_SECONDS = env_int("SCHEDCONSOLE_K8S_WATCH_TIMEOUT", 1800, minimum=1)
K8S_BOOKMARK_SECONDS = env_int("SCHEDCONSOLE_K8S_BOOKMARK_SECONDS", 5, minimum=1)
K8S_WATCH_POLL_SECONDS = 0.05
# What the engine schedules: the simulated cluster (default), a live cluster (`cluster`: pods whose
# schedulerName names one of the profiles, while holding the Lease), or `shadow` (a live cluster,
# binding nothing, compared with the cluster's own scheduler). See docs/real-clusters.md.
CLUSTER_MODE = env_str("SCHEDCONSOLE_MODE", "simulated")
if CLUSTER_MODE not in ("simulated", "cluster", "shadow"):
    raise SettingError(f"SCHEDCONSOLE_MODE: invalid value {CLUSTER_MODE!r}; valid: simulated, cluster, shadow")
KUBECONFIG = env_str("SCHEDCONSOLE_KUBECONFIG", "")
KUBE_CONTEXT = env_str("SCHEDCONSOLE_KUBE_CONTEXT", "")
KUBE_IN_CLUSTER = env_bool("SCHEDCONSOLE_IN_CLUSTER", False)
KUBE_API_QPS = env_int("SCHEDCONSOLE_KUBE_API_QPS", 50, minimum=0)
KUBE_API_BURST = env_int("SCHEDCONSOLE_KUBE_API_BURST", 100, minimum=1)
SHADOW_PROFILE = env_str("SCHEDCONSOLE_SHADOW_PROFILE", "")
LEASE_NAMESPACE = env_str("SCHEDCONSOLE_LEASE_NAMESPACE", "kube-system")
# runconsole serves https with these (kubectl sends `--token` only over TLS).
TLS_CERT_FILE = env_str("SCHEDCONSOLE_TLS_CERT", "")
TLS_KEY_FILE = env_str("SCHEDCONSOLE_TLS_KEY", "")
if bool(TLS_CERT_FILE) != bool(TLS_KEY_FILE):
    raise SettingError("SCHEDCONSOLE_TLS_CERT and SCHEDCONSOLE_TLS_KEY: set both or neither")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
    # Koordinator's debug output: with debugTopNScores > 0 each attempt's top-N score table (and,
    # with debugFilterFailure, each node's filter failure) goes to the log, as koord-scheduler logs it.
    "loggers": {"scheduler.frameworkext.debug": {"level": "INFO"}},
}
