"""The web app manifest: what lets a browser install kandev as an app of its own.

An installed app opens standalone, with its own icon; iOS sends Web Push
(static/js/push.js) only to a site added to the home screen, which needs this
manifest. Browsers fetch it without cookies, so it needs no login; it says
nothing but the app's name and look. The icons are static files
(scripts/icons.py draws them), named through ``static()`` so that hashed
names in production are the ones listed.
"""

from django.contrib.auth.decorators import login_not_required
from django.http import JsonResponse
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_GET

#: The top bar's colour (static/css/app.css ``--bar``): the window's title bar and the splash screen match it.
THEME_COLOUR = "#1d2330"
#: Each icon the manifest lists: its static path, its square size in pixels, and its purpose.
ICONS = [
    ("icons/icon-192.png", 192, "any"),
    ("icons/icon-512.png", 512, "any"),
    ("icons/icon-maskable-512.png", 512, "maskable"),
]


@login_not_required
@require_GET
def manifest(request):
    """The manifest as JSON (``application/manifest+json``), for ``<link rel="manifest">`` in templates/base.html."""
    home = reverse("board:home")
    return JsonResponse(
        {
            "id": home,
            "name": "kandev",
            "short_name": "kandev",
            "start_url": home,
            "scope": "/",
            "display": "standalone",
            "theme_color": THEME_COLOUR,
            "background_color": THEME_COLOUR,
            "icons": [
                {"src": static(path), "sizes": f"{size}x{size}", "type": "image/png", "purpose": purpose}
                for path, size, purpose in ICONS
            ],
        },
        content_type="application/manifest+json",
    )
