"""What prod serves and how: static files through WhiteNoise (hashed, compressed, cached), HTTPS but for probes."""

import json
import re

from django.test import Client

from testing_support.deployment import prod_env, run_clean
from testing_support.processes import ROOT

PROD_PAGE = """
import json, re
import django
django.setup()
from django.test import Client
page = Client().get("/login/", secure=True).content.decode()
stylesheet = re.search(r'href="(/static/css/app\\.[0-9a-f]{12}\\.css)"', page).group(1)
served = Client().get(stylesheet, secure=True, HTTP_ACCEPT_ENCODING="gzip")
print(json.dumps({
    "stylesheet": stylesheet,
    "status": served.status_code,
    "encoding": served.headers.get("Content-Encoding"),
    "cache": served.headers.get("Cache-Control"),
}))
"""


def test_prod_pages_name_hashed_static_files_served_compressed_and_cached_for_good(collected, tmp_path):
    result = run_clean(tmp_path, "-c", PROD_PAGE, **prod_env(STATIC_ROOT=str(collected), ALLOWED_HOSTS="testserver"))

    assert result.returncode == 0, result.stderr
    served = json.loads(result.stdout)
    assert served["status"] == 200
    assert served["encoding"] == "gzip"
    assert "immutable" in served["cache"]
    assert "max-age=315360000" in served["cache"]
    assert re.fullmatch(r"/static/css/app\.[0-9a-f]{12}\.css", served["stylesheet"])


def test_the_dev_profile_serves_static_files_as_they_are_without_collectstatic(db):
    served = Client().get("/static/css/app.css")

    assert served.status_code == 200
    assert b"".join(served.streaming_content) == (ROOT / "static" / "css" / "app.css").read_bytes()


PROBES_OVER_HTTP = """
import django
django.setup()
from django.test import Client
for path in ("/healthz", "/login/"):
    print(path, Client().get(path).status_code)
"""


def test_prod_sends_operators_to_https_but_answers_probes_over_plain_http(tmp_path):
    result = run_clean(tmp_path, "-c", PROBES_OVER_HTTP, **prod_env(ALLOWED_HOSTS="testserver"))

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["/healthz", "200", "/login/", "301"]
