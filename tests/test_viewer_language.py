"""A live socket renders in the language of its viewer's pages, picked as LocaleMiddleware picks it."""

import pytest

from kandev_web.live_consumer import viewer_language


@pytest.mark.parametrize(
    ("cookies", "accept_language", "language"),
    [
        ({"django_language": "de"}, "", "de"),
        ({"django_language": "en"}, "de-DE,de;q=0.9", "en"),  # the operator's choice wins over the browser's
        ({}, "de-DE,de;q=0.9,en;q=0.5", "de"),
        ({}, "fr-FR,fr;q=0.9", "en"),  # no French: the default
        ({"django_language": "xx"}, "", "en"),  # a forged cookie falls back
        ({}, "", "en"),
    ],
)
def test_the_viewer_language_follows_the_cookie_then_the_browser(cookies, accept_language, language):
    scope = {"cookies": cookies, "headers": [(b"accept-language", accept_language.encode())]}
    assert viewer_language(scope) == language


def test_a_scope_without_cookies_or_headers_is_in_the_default_language():
    assert viewer_language({}) == "en"
