"""ASGI entry point: HTTP through Django, websockets through Channels (session auth, origin check)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "schedconsole.settings")
# Build the Django app before importing consumers (they import models).
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from schedconsole.limits import BodyLimit  # noqa: E402
from schedconsole.live.routing import websocket_urlpatterns  # noqa: E402
from schedconsole.polled import PolledHandler, Router  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Embedded, static files (a few CSS/JS modules) are served here, async, so no sync
        # middleware serializes requests; in production WhiteNoise serves the collected files.
        # Koordinator's polled routes go through Django with a lean middleware stack (polled.py);
        # every body is counted against the upload limit as it arrives (limits.py).
        "http": BodyLimit(
            Router(PolledHandler(), ASGIStaticFilesHandler(django_asgi_app) if settings.EMBEDDED else django_asgi_app)
        ),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
