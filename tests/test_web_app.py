"""The web app manifest, as a browser installing kandev fetches it: without cookies, so without a login."""

import struct

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from kandev_web.web_app import ICONS

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, the first after the signature."""
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def static_bytes(url: str) -> bytes:
    """The file a static URL names, found as runserver and whitenoise's finders find it."""
    path = finders.find(url.removeprefix("/static/"))
    assert path, f"{url} is not a static file"
    with open(path, "rb") as file:
        return file.read()


@pytest.fixture
def manifest(db):
    response = Client().get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    return response.json()


def test_the_manifest_makes_an_installable_standalone_app(manifest):
    assert manifest["name"] == "kandev"
    assert manifest["short_name"] == "kandev"
    assert manifest["start_url"] == reverse("board:home")
    assert manifest["display"] == "standalone"
    assert manifest["theme_color"].startswith("#")
    assert manifest["background_color"].startswith("#")


def test_every_icon_exists_at_its_declared_size_with_one_of_192_512_and_maskable(manifest):
    icons = manifest["icons"]
    for icon in icons:
        width, height = (int(side) for side in icon["sizes"].split("x"))
        assert png_size(static_bytes(icon["src"])) == (width, height)
        assert icon["type"] == "image/png"
    sizes = {icon["sizes"] for icon in icons}
    assert {"192x192", "512x512"} <= sizes
    assert any(icon["purpose"] == "maskable" for icon in icons)
    assert len(icons) == len(ICONS)


def test_every_page_links_the_manifest_and_the_apple_touch_icon(db):
    page = Client().get("/login/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    touch = page.split('<link rel="apple-touch-icon" href="')[1].split('"')[0]
    assert png_size(static_bytes(touch)) == (180, 180)
