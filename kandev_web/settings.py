"""Settings for kandev-web, read from the environment through django-environ.

Three profiles (``KANDEV_PROFILE``): ``dev`` (the default; a laptop), ``e2e``
(browser tests: a server per test module) and ``prod``. Only ``dev`` and
``e2e`` get a built-in ``SECRET_KEY`` and ``KANDEV_SECRETS_KEY``; ``prod`` refuses
to start without them.
"""

from datetime import timedelta
from pathlib import Path

import environ
from django.utils.csp import CSP

from kandev_web.agentctl.durations import DEFAULT_UNHELD_TIMEOUT, UNHELD_TIMEOUT_VAR, DurationError, parse_duration
from kandev_web.host_ports import django_allowed_hosts, parse_allowed_hosts
from kandev_web.proxy_headers import parse_trusted_proxies
from kandev_web.secret_box import SecretsKeyError, derived_key, parse_keys

PACKAGE_DIR = Path(__file__).resolve().parent
BASE_DIR = PACKAGE_DIR.parent
#: A checkout has templates/ and static/ beside the package; an installed wheel
#: carries them inside it (setup.py puts them there).
IN_CHECKOUT = (BASE_DIR / "manage.py").is_file() and (BASE_DIR / "templates").is_dir()
RESOURCES_DIR = BASE_DIR if IN_CHECKOUT else PACKAGE_DIR

env = environ.Env()

KANDEV_PROFILE = env.str("KANDEV_PROFILE", default="dev")
if KANDEV_PROFILE not in {"dev", "e2e", "prod"}:
    raise environ.ImproperlyConfigured(f"KANDEV_PROFILE must be one of dev, e2e, prod (got {KANDEV_PROFILE!r}).")
IS_PROD = KANDEV_PROFILE == "prod"

if IS_PROD:
    SECRET_KEY = env.str("SECRET_KEY", default="")
    if not SECRET_KEY.strip():
        raise environ.ImproperlyConfigured("Set the SECRET_KEY environment variable: the prod profile has no default.")
else:
    SECRET_KEY = env.str("SECRET_KEY", default="django-insecure-kandev-dev-only-key")

# The keys agent profiles' secrets are sealed with (kandev_web/secret_box.py):
# comma-separated Fernet keys, the first sealing, every one opening, so a key
# is rotated without a gap. dev and e2e derive one from SECRET_KEY; prod must
# name its own, since a SECRET_KEY rotated would otherwise lose every secret.
_secrets_key = env.str("KANDEV_SECRETS_KEY", default="")
if IS_PROD and not _secrets_key.strip():
    raise environ.ImproperlyConfigured(
        "Set the KANDEV_SECRETS_KEY environment variable: the prod profile has no default. Make one with: "
        'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
    )
try:
    KANDEV_SECRETS_KEYS = parse_keys(_secrets_key) if _secrets_key.strip() else [derived_key(SECRET_KEY)]
except SecretsKeyError as error:
    raise environ.ImproperlyConfigured(str(error)) from None

DEBUG = env.bool("DEBUG", default=KANDEV_PROFILE == "dev")
# An entry may name a port (kandev.example.com:8443): then only that port is
# allowed for that name (kandev_web/host_ports.py); Django itself ignores ports.
try:
    KANDEV_ALLOWED_HOST_RULES = parse_allowed_hosts(
        env.list("ALLOWED_HOSTS", default=[] if IS_PROD else ["127.0.0.1", "localhost"])
    )
except ValueError as error:
    raise environ.ImproperlyConfigured(f"ALLOWED_HOSTS: {error}") from None
ALLOWED_HOSTS = django_allowed_hosts(KANDEV_ALLOWED_HOST_RULES)

# The reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed
# (IP addresses, networks such as 10.0.0.0/8, or host names), checked against
# the address each connection comes from (kandev_web/proxy_headers.py). Empty,
# nobody's are: every request's client is the connection's peer, its scheme the connection's.
try:
    KANDEV_TRUSTED_PROXIES = parse_trusted_proxies(env.list("KANDEV_TRUSTED_PROXIES", default=[]))
except ValueError as error:
    raise environ.ImproperlyConfigured(f"KANDEV_TRUSTED_PROXIES: {error}") from None
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Its widget templates, for FORM_RENDERER below.
    "django.forms",
    "channels",
    "axes",
    "kandev_web.flags",
    "kandev_web.board",
    "kandev_web.agents",
    "kandev_web.repositories",
    "kandev_web.sessions",
    "kandev_web.clarifications",
    "kandev_web.notifications",
    "kandev_web.webhooks",
    "kandev_web.pages",
]

MIDDLEWARE = [
    "kandev_web.metrics.RequestMetricsMiddleware",
    # Before anything reads the Host header (the HTTPS redirect first).
    "kandev_web.host_ports.HostPortMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a lockout into the login page saying so.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "kandev_web.urls"
ASGI_APPLICATION = "kandev_web.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [RESOURCES_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "kandev_web.pages.inbox.context_processors.waiting",
            ],
        },
    },
]

# Widgets render from the same templates as pages (templates/forms/widgets/),
# and Django's own from its "django.forms" app.
FORM_RENDERER = "django.forms.renderers.TemplatesSetting"

# What the app writes (the SQLite database, worktrees, agents' working
# directories): var/ in a checkout, else var/ where it is started.
VAR_DIR = Path(env.str("KANDEV_VAR_DIR", default=str(BASE_DIR / "var" if IN_CHECKOUT else Path.cwd() / "var")))
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'kandev.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several writers (web requests, consumers, agent events) share one file:
    # wait for the lock instead of surfacing "database is locked", and take
    # the write lock up front so a read never has to be upgraded mid-transaction.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
    # File-backed, not in-memory: consumers and live servers need a shared database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
    VAR_DIR.mkdir(parents=True, exist_ok=True)
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Every request and every agent event runs in a thread that would otherwise
    # open a connection of its own and close it after: psycopg's pool keeps
    # them open and lends them out (CONN_MAX_AGE must then stay 0).
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 2,
        "max_size": env.int("KANDEV_DB_POOL_SIZE", default=20),
        "timeout": 10,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Where operators reach kandev (https://kandev.example.com): webhooks link to tasks with
# it, and it is the default of the MCP URL and of the Web Push contact below.
KANDEV_PUBLIC_URL = env.str("KANDEV_PUBLIC_URL", default="")
# Where agents reach the MCP endpoint (with their session's bearer token):
# configured, never read from a request's Host header, which a client chooses.
# Unset, the public URL's /mcp/; without either, prod refuses to start
# (kandev.E003) and dev and e2e use the address this server itself listens on.
KANDEV_MCP_URL = env.str(
    "KANDEV_MCP_URL", default=f"{KANDEV_PUBLIC_URL.rstrip('/')}/mcp/" if KANDEV_PUBLIC_URL.strip() else ""
)
for _name, _url in (("KANDEV_PUBLIC_URL", KANDEV_PUBLIC_URL), ("KANDEV_MCP_URL", KANDEV_MCP_URL)):
    if _url and not _url.startswith(("http://", "https://")):
        raise environ.ImproperlyConfigured(f"{_name} must be an http:// or https:// URL (got {_url!r}).")
# Where each task's git worktree is made (one directory per task, under this).
KANDEV_WORKTREE_ROOT = Path(env.str("KANDEV_WORKTREE_ROOT", default=str(VAR_DIR / "worktrees")))
# Where a workspace admin may register repositories (absolute, comma-separated); elsewhere, superusers only.
KANDEV_REPOSITORY_ROOTS = env.list("KANDEV_REPOSITORY_ROOTS", default=[])

# How often a waiting ask_user_question_kandev call tells the agent it is still waiting.
KANDEV_MCP_KEEPALIVE_SECONDS = env.float("KANDEV_MCP_KEEPALIVE_SECONDS", default=20.0)

# How often the web app pings each agentctl; a silent one counts as disconnected
# after about twice this.
KANDEV_AGENT_STREAM_PING_SECONDS = env.float("KANDEV_AGENT_STREAM_PING_SECONDS", default=10.0)

# How long an operator's answer waits for agentctl to confirm it; a frozen or
# unreachable agent is reported as "not responding" after this, question still open.
KANDEV_AGENT_ANSWER_TIMEOUT_SECONDS = env.float("KANDEV_AGENT_ANSWER_TIMEOUT_SECONDS", default=4.0)

# How long a live page's socket trusts its last access check before asking the
# database again; a change of workspace membership is checked at once anyway.
KANDEV_LIVE_ACCESS_RECHECK_SECONDS = env.float("KANDEV_LIVE_ACCESS_RECHECK_SECONDS", default=5.0)

# System checks to silence, e.g. kandev.E002 when every web process runs on one
# machine (kandev_web/sessions/checks.py).
SILENCED_SYSTEM_CHECKS = env.list("KANDEV_SILENCED_CHECKS", default=[])

# The bearer token a Prometheus scraper sends for /metrics; empty, only superusers
# who are logged in may read it.
KANDEV_METRICS_TOKEN = env.str("KANDEV_METRICS_TOKEN", default="")

# Where the agentctl processes this web process starts listen. Loopback keeps
# them private to this machine; an address the other web machines can reach
# lets any of them serve the agent's operators (their streams need the token).
KANDEV_AGENTCTL_HOST = env.str("KANDEV_AGENTCTL_HOST", default="127.0.0.1")

# Executor hosts are reached over SSH; the private key of an executor that
# stores none is read from this file (empty: each executor must store its own).
KANDEV_SSH_KEY_FILE = env.str("KANDEV_SSH_KEY_FILE", default="")
# How long reaching an executor host over SSH may take before its session fails saying so.
KANDEV_SSH_CONNECT_SECONDS = env.float("KANDEV_SSH_CONNECT_SECONDS", default=10.0)

# How often a web process confirms it still holds its agents' streams; another
# process adopts them after three missed beats.
KANDEV_OWNER_HEARTBEAT_SECONDS = env.float("KANDEV_OWNER_HEARTBEAT_SECONDS", default=5.0)
# agentctl's own: how long it runs with no web process holding it before it
# stops its agent and exits. Read here too, to tell that stop from a crash.
KANDEV_AGENTCTL_UNHELD_TIMEOUT = env.str(UNHELD_TIMEOUT_VAR, default=DEFAULT_UNHELD_TIMEOUT)
try:
    parse_duration(KANDEV_AGENTCTL_UNHELD_TIMEOUT)
except DurationError as error:
    raise environ.ImproperlyConfigured(f"{UNHELD_TIMEOUT_VAR}: {error}") from None

# How long "Check" on an agent profile waits, in all, for agentctl and the agent's initialize answer.
KANDEV_PROFILE_CHECK_TIMEOUT_SECONDS = env.float("KANDEV_PROFILE_CHECK_TIMEOUT_SECONDS", default=30.0)

# Whether pushes and webhooks may go to loopback, private, link-local and other non-public
# addresses (kandev_web/outgoing.py). On a laptop and in tests receivers run on this machine.
KANDEV_OUTGOING_ALLOW_PRIVATE = env.bool("KANDEV_OUTGOING_ALLOW_PRIVATE", default=not IS_PROD)
# Outgoing webhooks: how long one POST may take, how often a web process looks for due
# deliveries besides being woken by a new one, and the waits between failed attempts
# (after the last, a delivery is given up).
KANDEV_WEBHOOK_TIMEOUT_SECONDS = env.float("KANDEV_WEBHOOK_TIMEOUT_SECONDS", default=5.0)
KANDEV_WEBHOOK_POLL_SECONDS = env.float("KANDEV_WEBHOOK_POLL_SECONDS", default=5.0)
KANDEV_WEBHOOK_BACKOFF_SECONDS = env.list(
    "KANDEV_WEBHOOK_BACKOFF_SECONDS", cast=float, default=[10.0, 60.0, 300.0, 1800.0, 7200.0]
)

# Web Push (kandev_web/notifications/vapid.py): the VAPID private key pushes are signed with
# (a PEM or base64url; unset, one is generated once into KANDEV_VAR_DIR and kept, which prod
# refuses: kandev.E004, kandev_web/notifications/checks.py), the contact push services see
# (a mailto: or https: URL, one they can reach in prod: kandev.E005), how long one push may take and how often a web
# process looks for queued pushes besides being woken by a new one.
KANDEV_VAPID_PRIVATE_KEY = env.str("KANDEV_VAPID_PRIVATE_KEY", default="")
KANDEV_VAPID_SUBJECT = env.str(
    "KANDEV_VAPID_SUBJECT",
    default=KANDEV_PUBLIC_URL if KANDEV_PUBLIC_URL.startswith("https://") else "mailto:kandev@localhost",
)
KANDEV_PUSH_TIMEOUT_SECONDS = env.float("KANDEV_PUSH_TIMEOUT_SECONDS", default=5.0)
KANDEV_PUSH_POLL_SECONDS = env.float("KANDEV_PUSH_POLL_SECONDS", default=5.0)

REDIS_URL = env.str("REDIS_URL", default="")
REDIS_READ_TIMEOUT_SECONDS = 30
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py gives up on a read after 5 s by default, exactly as
                # long as channels-redis blocks in BZPOPMIN waiting for a
                # message: an idle socket's consumer then died of a read
                # timeout. The read must outlast the wait.
                "hosts": [{"address": REDIS_URL, "socket_timeout": REDIS_READ_TIMEOUT_SECONDS}],
                "prefix": env.str("KANDEV_CHANNEL_PREFIX", default="kandev"),
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
if KANDEV_PROFILE == "e2e":
    # The browser suite signs in hundreds of times on two cores: PBKDF2's
    # deliberate cost there is CPU the browsers and agents need, and guards
    # nothing (throwaway users in throwaway databases). dev and prod keep
    # Django's hashers.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "board:home"
LOGOUT_REDIRECT_URL = "login"

# Login throttling (django-axes), on /login/ and /admin/login/ alike: after
# KANDEV_LOGIN_FAILURE_LIMIT wrong passwords for one username from one address,
# that pair is refused for KANDEV_LOGIN_COOLOFF_MINUTES after the last attempt
# (``manage.py axes_reset_username <name>`` lifts it at once). Keyed by the
# pair, not the address alone, so colleagues behind one NAT do not lock each
# other out; only failures count and a success forgets them, so people who log
# in often (and the test suites) never approach the limit. Attempts are rows
# in the database, so every web process sees the same count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("KANDEV_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("KANDEV_LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "kandev_web.login.locked_out"
# The client's address as the trusted proxy reported it (REMOTE_ADDR, set by
# kandev_web/proxy_headers.py), never X-Forwarded-For read from whoever sent it:
# behind Caddy, every client would otherwise be Caddy, and one stranger's five
# wrong passwords would lock a username for everyone.
AXES_CLIENT_IP_CALLABLE = "kandev_web.proxy_headers.client_ip"

LANGUAGE_CODE = "en"
# Every operator-facing string is in the German catalogue (tests/test_translations.py
# holds it complete). An operator picks a language in the menu (Django's
# set_language, remembered in the language cookie); until then LocaleMiddleware
# follows the browser's Accept-Language.
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_AGE = 365 * 24 * 60 * 60
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# Inside the package, so the wheel carries the compiled catalogue.
LOCALE_PATHS = [PACKAGE_DIR / "locale"]

STATIC_URL = "static/"
STATICFILES_DIRS = [RESOURCES_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "staticfiles")))
# WhiteNoise serves static files in every profile. In prod they come from
# STATIC_ROOT after `manage.py collectstatic`: names carrying a hash of their
# content (cached for a year: a changed file is a new name), compressed with
# gzip and Brotli. The other profiles serve static/ as it is, re-read on change.
HASHED_STATIC = env.bool("KANDEV_HASHED_STATIC", default=IS_PROD)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if HASHED_STATIC
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not HASHED_STATIC
WHITENOISE_AUTOREFRESH = not HASHED_STATIC

# The largest request body the app reads (Django's default, named here): a form
# with the longest prompt (limits.PROMPT_CHARS) is at most 1.2 MB form-encoded.
# Daphne holds a whole body in memory before the app sees it, so this does not
# protect the process from a huge one: the proxy in front must cap bodies
# (deploy/Caddyfile: 4 MB; docs/operating.md#request-size-limit).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # HTMX reads the token from the page, not the cookie.
if IS_PROD:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # Probes and scrapers ask over plain HTTP inside the private network; a redirect would read as "down".
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    # No SECURE_PROXY_SSL_HEADER: Django would believe X-Forwarded-Proto from any
    # client, skipping the redirect above. A trusted proxy's (KANDEV_TRUSTED_PROXIES)
    # becomes the request's own scheme instead (kandev_web/proxy_headers.py).

# Content-Security-Policy, the same in every profile: everything from this
# origin only, nothing inline. Behaviour lives in static/js (no inline script or
# handler; htmx is told not to eval or inject its indicator style, base.html),
# so an agent's markup that ever slipped past the sanitizer could not run.
# 'self' in connect-src covers the live sockets: CSP Level 3 matches ws: and
# wss: to the page's own http: and https: origin (Chromium, Firefox, Safari).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# One line per record with its time, level, logger and the ids of the work it
# is about (request, agent execution, session): JSON for log collectors (the
# prod default) or text (kandev_web/logs.py).
KANDEV_LOG_FORMAT = env.str("KANDEV_LOG_FORMAT", default="json" if IS_PROD else "text")
if KANDEV_LOG_FORMAT not in {"json", "text"}:
    raise environ.ImproperlyConfigured(f"KANDEV_LOG_FORMAT must be json or text (got {KANDEV_LOG_FORMAT!r}).")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"ids": {"()": "kandev_web.logs.ContextIds"}},
    "formatters": {
        "json": {"()": "kandev_web.logs.json_formatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s%(ids)s: %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["ids"], "formatter": KANDEV_LOG_FORMAT},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.channels.server": {"level": "WARNING"}},
}
