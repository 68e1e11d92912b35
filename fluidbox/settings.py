"""fluidbox settings: everything that varies between deployments comes from the environment."""

import os
import sys
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from fluidbox.env import env_bool, env_int, env_list, env_networks, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("FLUIDBOX_DATA_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
DEVELOPMENT = env_bool("FLUIDBOX_DEVELOPMENT", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not (DEBUG or DEVELOPMENT):
        raise ImproperlyConfigured(
            "SECRET_KEY is required outside development (set FLUIDBOX_DEVELOPMENT=1 for a dev key)"
        )
    SECRET_KEY = "fluidbox-development-only-secret-key-not-for-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
PUBLIC_BASE_URL = env_str("FLUIDBOX_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")

# Served over HTTPS (the public URL says so; usually a proxy ends TLS and forwards plain
# HTTP): cookies travel over HTTPS only, and the public origin is trusted for CSRF, which
# would otherwise compare the browser's https:// Origin with the http:// request it sees.
# Whether a request came over HTTPS (for HSTS) is gunicorn's call: it believes
# X-Forwarded-Proto only from FORWARDED_ALLOW_IPS (127.0.0.1 by default).
SERVED_OVER_HTTPS = PUBLIC_BASE_URL.startswith("https://")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SERVED_OVER_HTTPS
if SERVED_OVER_HTTPS:
    _public_origin = "https://" + urlsplit(PUBLIC_BASE_URL).netloc
    if _public_origin not in CSRF_TRUSTED_ORIGINS:
        CSRF_TRUSTED_ORIGINS.append(_public_origin)
SECURE_HSTS_SECONDS = env_int("FLUIDBOX_HSTS_SECONDS", 0, minimum=0)
# A signed-in session can approve calls: it lasts a working day from sign-in, not Django's
# two weeks.
SESSION_COOKIE_AGE = env_int("FLUIDBOX_SESSION_HOURS", 12, minimum=1) * 3600

INSTALLED_APPS = [
    "django.contrib.admin",
    # Before django.contrib.auth: its `createsuperuser` checks usernames as every other way
    # of making an account does (governance/usernames.py), and the first app's command wins.
    "governance",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_q",
    "axes",
    "ledger",
]

MIDDLEWARE = [
    "governance.observability.endpoint.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "fluidbox.body_length.BodyLengthMiddleware",
    "fluidbox.nul_characters.NulCharactersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "fluidbox.content_security.ContentSecurityPolicyMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

if not env_bool("FLUIDBOX_METRICS", True):
    MIDDLEWARE.remove("governance.observability.endpoint.RequestMetricsMiddleware")

ROOT_URLCONF = "fluidbox.urls"
WSGI_APPLICATION = "fluidbox.wsgi.application"

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


def _sqlite(path: str) -> dict:
    """SQLite, however it was chosen (no DATABASE_URL, or `sqlite:///…`): the same options.

    WAL lets readers run beside the one writer; IMMEDIATE takes the write lock at BEGIN, so
    two write transactions serialize instead of failing when a reader upgrades to a writer
    (SQLite does not wait for that lock, it answers "database is locked" at once); the
    timeout is how long a writer waits for the lock before that error.
    """
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": env_int("SQLITE_TIMEOUT", 20, minimum=1),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        # A file, not pytest-django's in-memory default: live test servers share it.
        "TEST": {"NAME": env_str("SQLITE_TEST_PATH", str(DATA_DIR / "test.sqlite3"))},
    }


def _database_from_env() -> dict:
    url = env_str("DATABASE_URL")
    if not url:
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        return _sqlite(env_str("SQLITE_PATH", str(DATA_DIR / "fluidbox.sqlite3")))
    pool_size = env_int("DB_POOL_SIZE", 0, minimum=0)
    if sys.argv[1:2] == ["qcluster"]:
        # django-q2 forks its workers from the cluster process, and a pool's connections and
        # threads do not survive a fork: two processes would read one connection.
        pool_size = 0
    conn_max_age = 0 if pool_size else env_int("DB_CONN_MAX_AGE", 0, minimum=0)
    config = dj_database_url.parse(url, conn_max_age=conn_max_age)
    if config["ENGINE"] not in ("django.db.backends.postgresql", "django.db.backends.sqlite3"):
        raise ImproperlyConfigured(f"DATABASE_URL scheme not supported: {config['ENGINE']}")
    if config["ENGINE"] == "django.db.backends.sqlite3":
        if config["NAME"] in ("", ":memory:"):
            raise ImproperlyConfigured(
                "DATABASE_URL=sqlite:// needs a file (sqlite:////absolute/path.sqlite3): "
                "an in-memory database is not shared by the server's processes"
            )
        return _sqlite(config["NAME"])
    if config["ENGINE"] == "django.db.backends.postgresql":
        # Sessions start in UTC, so Django skips its SET TIME ZONE round trip on each new
        # connection (the server's default is often 'Etc/UTC', which Django reads as different).
        options = config.setdefault("OPTIONS", {})
        options["options"] = f"{options.get('options', '')} -c TimeZone=UTC".strip()
    if pool_size and config["ENGINE"] == "django.db.backends.postgresql":
        # psycopg's pool, shared by a process's threads: a request borrows a connection and
        # gives it back at the end, so 128 threads need far fewer than 128 connections.
        config.setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": pool_size,
            "timeout": env_int("DB_POOL_TIMEOUT", 10, minimum=1),
        }
    return config


DATABASES = {"default": _database_from_env()}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Where signing in leads when the form's `next` is missing or points off the site.
LOGIN_REDIRECT_URL = "admin:index"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

# Password guessing at the sign-in form (django-axes): after FLUIDBOX_LOGIN_FAILURE_LIMIT
# failures for one username from one address, that pair is refused (429) for the cool-off,
# the right password included; a success resets the count. The address is the TCP peer's,
# or the client's as a trusted proxy (FORWARDED_ALLOW_IPS, gunicorn's variable) forwarded it
# (fluidbox/sign_in_throttle.py). API keys and run tokens are random, long and never typed:
# they are not counted.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("FLUIDBOX_LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("FLUIDBOX_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
TRUSTED_PROXY_NETWORKS = env_networks("FORWARDED_ALLOW_IPS", ["127.0.0.1", "::1"])
AXES_CLIENT_IP_CALLABLE = "fluidbox.sign_in_throttle.client_address"
AXES_USERNAME_CALLABLE = "fluidbox.sign_in_throttle.attempted_username"
AXES_VERBOSE = False  # a lockout is still logged (WARNING), with the username and address

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Files browsers ask for at the site's root (/favicon.ico), served by WhiteNoise.
WHITENOISE_ROOT = BASE_DIR / "public"

# Gate requests carry arguments up to 256 KiB; leave room for the envelope.
DATA_UPLOAD_MAX_MEMORY_SIZE = 512 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "governance.authentication.BearerAuthentication",
        "governance.authentication.PortalSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["governance.api.parsers.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "governance.api.openapi.FluidboxAutoSchema",
    "EXCEPTION_HANDLER": "governance.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "fluidbox API",
    "DESCRIPTION": "The permission gate for AI agents' tool calls.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Approvals and personal-connection bindings are both answered approve or deny.
    "ENUM_NAME_OVERRIDES": {"ApproveOrDenyEnum": ["approve", "deny"]},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "governance.api.openapi.add_error_responses",
    ],
}

Q_CLUSTER = {
    "name": "fluidbox",
    "orm": "default",
    # One process runs the ledger sequencer most of each minute (ledger.tasks).
    "workers": env_int("Q_WORKERS", 3, minimum=1),
    "timeout": 60,
    "retry": 120,
    "max_attempts": 1,
    "catch_up": False,
    "poll": 0.2,
    "ack_failures": True,
    "sync": env_bool("Q_SYNC", False),
}

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "fluidbox@localhost")
# With EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend: the mail server.
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1)

# fluidbox
FLUIDBOX_MACHINE_KEY = env_str("FLUIDBOX_MACHINE_KEY")
FLUIDBOX_MACHINE_KEY_FILE = env_str("FLUIDBOX_MACHINE_KEY_FILE", str(DATA_DIR / "machine.key"))
FLUIDBOX_VAULT_PASSPHRASE = env_str("FLUIDBOX_VAULT_PASSPHRASE")
FLUIDBOX_STDIO_COMMANDS = env_list("FLUIDBOX_STDIO_COMMANDS", [], separator=";")
FLUIDBOX_MCP_TIMEOUT = env_int("FLUIDBOX_MCP_TIMEOUT", 20, minimum=1)
# The broker keeps upstream MCP sessions open between calls (governance/mcp_sessions.py):
# a session's tools/list serves the drift check for this many seconds (0: list before every
# call), a session idle this long or older than the max age is closed, and each process
# keeps at most this many idle sessions per connection and in all.
FLUIDBOX_MCP_TOOLS_TTL = env_int("FLUIDBOX_MCP_TOOLS_TTL", 5, minimum=0)
FLUIDBOX_MCP_SESSION_IDLE = env_int("FLUIDBOX_MCP_SESSION_IDLE", 60, minimum=1)
FLUIDBOX_MCP_SESSION_MAX_AGE = env_int("FLUIDBOX_MCP_SESSION_MAX_AGE", 600, minimum=1)
FLUIDBOX_MCP_SESSIONS_PER_CONNECTION = env_int("FLUIDBOX_MCP_SESSIONS_PER_CONNECTION", 8, minimum=0)
FLUIDBOX_MCP_SESSIONS_MAX = env_int("FLUIDBOX_MCP_SESSIONS_MAX", 64, minimum=0)
# Hosts connections may reach although they are internal (loopback, private, link-local…):
# hostnames, addresses or CIDR networks, each with an optional :port (governance/egress.py).
FLUIDBOX_CONNECTION_ALLOWED_HOSTS = env_list("FLUIDBOX_CONNECTION_ALLOWED_HOSTS", [])
# Whether an organization's admins may allow internal hosts for it (off: superusers only;
# for a deployment whose tenants must not reach its internal network).
FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS = env_bool("FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS", True)
# POST /v1/mcp: how long a tools/call waits for a human on an ASK before answering "awaits
# approval", how often it sends a progress notification meanwhile, and how many such
# waits one web process holds at once (each holds a thread, never a database connection).
FLUIDBOX_MCP_APPROVAL_WAIT = env_int("FLUIDBOX_MCP_APPROVAL_WAIT", 120, minimum=0)
FLUIDBOX_MCP_PROGRESS_SECONDS = env_int("FLUIDBOX_MCP_PROGRESS_SECONDS", 10, minimum=1)
FLUIDBOX_MCP_MAX_WAITING = env_int("FLUIDBOX_MCP_MAX_WAITING", 200, minimum=1)
# Per web process: `/v1/mcp`'s quick work (token checks, listings), and its calls' first
# attempts (the gate, then the upstream, as slow as it answers).
FLUIDBOX_MCP_QUICK_THREADS = env_int("FLUIDBOX_MCP_QUICK_THREADS", 40, minimum=1)
FLUIDBOX_MCP_CALL_THREADS = env_int("FLUIDBOX_MCP_CALL_THREADS", 40, minimum=1)
# Brokered calls in flight per web process, of all of one organization's runs together.
FLUIDBOX_BROKERED_CALLS_PER_ORG = env_int("FLUIDBOX_BROKERED_CALLS_PER_ORG", 20, minimum=1)
FLUIDBOX_RESERVATION_TTL = env_int("FLUIDBOX_RESERVATION_TTL", 900, minimum=1)
FLUIDBOX_MAX_WAIT_SECONDS = 30
FLUIDBOX_WAKE_RECHECK_SECONDS = env_int("FLUIDBOX_WAKE_RECHECK_SECONDS", 2, minimum=1)
FLUIDBOX_STREAM_SECONDS = env_int("FLUIDBOX_STREAM_SECONDS", 25, minimum=1)
# Approval waits and event streams one credential may hold at once, across all processes
# (each holds a web thread); more get 429 with Retry-After (governance/throttling.py).
FLUIDBOX_WAITS_PER_CREDENTIAL = env_int("FLUIDBOX_WAITS_PER_CREDENTIAL", 8, minimum=1)
# Every credential of one organization together (a person can start runs, each with a token).
FLUIDBOX_WAITS_PER_ORG = env_int("FLUIDBOX_WAITS_PER_ORG", 64, minimum=1)
# Approvals one run may have waiting for a human at once: past it, a call that would ask
# more is denied, so an agent cannot bury one request among hundreds in the inbox.
FLUIDBOX_PENDING_APPROVALS_PER_RUN = env_int("FLUIDBOX_PENDING_APPROVALS_PER_RUN", 20, minimum=1)
# Test-only: the concurrency suite's control case turns the budget row lock off to show
# that the race it guards against is real. Never set in production.
FLUIDBOX_UNSAFE_SKIP_BUDGET_LOCK = env_bool("FLUIDBOX_UNSAFE_SKIP_BUDGET_LOCK", False)
FLUIDBOX_WRITE_TOOL = env_str("FLUIDBOX_WRITE_TOOL", "write_file")

# Observability (governance/observability/, ledger/streaming.py)
FLUIDBOX_METRICS_ENABLED = env_bool("FLUIDBOX_METRICS", True)
# `/metrics` wants `Authorization: Bearer <this>`; unset, it is refused except on the
# separate listener FLUIDBOX_METRICS_BIND (host:port, e.g. 127.0.0.1:9464), which serves
# only `/metrics` and needs no token.
FLUIDBOX_METRICS_TOKEN = env_str("FLUIDBOX_METRICS_TOKEN") or None
FLUIDBOX_METRICS_BIND = env_str("FLUIDBOX_METRICS_BIND") or None
if FLUIDBOX_METRICS_ENABLED:
    # prometheus_client reads this at import: every process of the deployment (gunicorn
    # workers, the django-q2 worker, commands) writes here and `/metrics` adds them up.
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(DATA_DIR / "prometheus"))
    FLUIDBOX_METRICS_DIR = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    Path(FLUIDBOX_METRICS_DIR).mkdir(parents=True, exist_ok=True)
else:
    FLUIDBOX_METRICS_DIR = None
# Audit sinks: plain http:// only when allowed (development, tests); batches; the backlog
# (each sink also has its own bound on the backlog a dead sink may build up).
FLUIDBOX_SINK_ALLOW_HTTP = env_bool("FLUIDBOX_SINK_ALLOW_HTTP", DEVELOPMENT)
FLUIDBOX_SINK_BATCH = env_int("FLUIDBOX_SINK_BATCH", 200, minimum=1)
FLUIDBOX_SINK_TIMEOUT = env_int("FLUIDBOX_SINK_TIMEOUT", 10, minimum=1)
# How many sinks one streamer delivers to at once (a thread and a database connection each).
FLUIDBOX_SINK_PARALLEL = env_int("FLUIDBOX_SINK_PARALLEL", 8, minimum=1)
# The auditor's ledger: Merkle log origin, checkpoint cadence, witnesses (README "The auditor's
# ledger"). The origin names each organization's log for ever: set it before the first event.
FLUIDBOX_LEDGER_ORIGIN_PREFIX = env_str(
    "FLUIDBOX_LEDGER_ORIGIN", PUBLIC_BASE_URL.split("://", 1)[-1] + "/ledger"
)
FLUIDBOX_CHECKPOINT_EVERY_EVENTS = env_int("FLUIDBOX_CHECKPOINT_EVERY_EVENTS", 1000, minimum=1)
FLUIDBOX_CHECKPOINT_EVERY_SECONDS = env_int("FLUIDBOX_CHECKPOINT_EVERY_SECONDS", 60, minimum=1)
FLUIDBOX_SEQUENCER_SECONDS = env_int("FLUIDBOX_SEQUENCER_SECONDS", 50, minimum=1)
# The worker checks the whole ledger as stored this often (0: never; `ledger verify --all`).
FLUIDBOX_LEDGER_CHECK_MINUTES = env_int("FLUIDBOX_LEDGER_CHECK_MINUTES", 60, minimum=0)
FLUIDBOX_LEDGER_WITNESSES = env_list("FLUIDBOX_LEDGER_WITNESSES", [], separator=";")
FLUIDBOX_LEDGER_WITNESS_CA_FILE = env_str("FLUIDBOX_LEDGER_WITNESS_CA_FILE")
FLUIDBOX_LEDGER_WITNESS_TIMEOUT = env_int("FLUIDBOX_LEDGER_WITNESS_TIMEOUT", 10, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "filters": {"mask_secrets": {"()": "fluidbox.log_masking.MaskSecrets"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["mask_secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # The worker logs every scheduled sweep at INFO; keep the console for what matters.
        "django-q": {"level": env_str("Q_LOG_LEVEL", "WARNING")},
        "httpx": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # each failed sign-in at INFO; lockouts at WARNING
        "httpx2": {"level": "WARNING"},
    },
}
