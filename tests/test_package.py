"""The built wheel is the whole app: installed in a fresh virtualenv far from any checkout, it migrates and serves."""

import os
import re
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

from testing_support.deployment import vapid_private_key
from testing_support.processes import free_port, stop_group, wait_for_port

ROOT = Path(__file__).resolve().parents[1]


def run(*argv, **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
    return done


def test_the_wheel_installed_in_a_fresh_virtualenv_migrates_and_serves_pages_and_static_files(tmp_path):
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path / "dist"), str(ROOT))
    (wheel,) = (tmp_path / "dist").glob("kandev_web-*.whl")
    # Test helpers live beside the tests (testing_support/), never in what is installed.
    shipped = zipfile.ZipFile(wheel).namelist()
    assert [name for name in shipped if name.startswith("testing_support/") or name.endswith("/testing.py")] == []
    base_python = getattr(sys, "_base_executable", sys.executable)
    run(base_python, "-m", "venv", str(tmp_path / "venv"))
    bin_dir = tmp_path / "venv" / "bin"
    run(str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel))

    site = tmp_path / "site"
    site.mkdir()
    env = {
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp_path),
        "KANDEV_PROFILE": "prod",
        "SECRET_KEY": "x" * 64,
        # prod has no secrets key of its own (kandev_web/settings.py): a Fernet key, 32 bytes in URL-safe base64.
        "KANDEV_SECRETS_KEY": "a" * 43 + "=",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        # prod's checks (which migrate runs): where agents ask, and one Web Push key (a P-256 scalar, base64url).
        "KANDEV_PUBLIC_URL": "https://kandev.example.com",
        "KANDEV_VAPID_PRIVATE_KEY": vapid_private_key(),
    }
    where = run(str(bin_dir / "python"), "-c", "import kandev_web; print(kandev_web.__file__)", cwd=site, env=env)
    assert str(tmp_path / "venv") in where.stdout  # the installed package, not this checkout
    run(str(bin_dir / "kandev-web"), "migrate", "--no-input", "-v0", cwd=site, env=env)
    run(str(bin_dir / "kandev-web"), "collectstatic", "--no-input", "-v0", cwd=site, env=env)
    assert (site / "var" / "kandev.sqlite3").is_file()
    assert (site / "var" / "staticfiles").is_dir()

    port = free_port()
    server = subprocess.Popen(
        [str(bin_dir / "daphne"), "-b", "127.0.0.1", "-p", str(port), "kandev_web.asgi:application"],
        cwd=site,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, server, time.monotonic() + 60)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=10) as response:
            page = response.read().decode()
        assert 'data-testid="login-form"' in page
        stylesheet = re.search(r'href="(/static/css/app\.[0-9a-f]{12}\.css)"', page).group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{stylesheet}", timeout=10) as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/css")
            assert "immutable" in response.headers["Cache-Control"]
        # The compiled German catalogue is in the wheel: no gettext needed where it is installed.
        german = urllib.request.Request(f"http://127.0.0.1:{port}/login/", headers={"Accept-Language": "de"})
        with urllib.request.urlopen(german, timeout=10) as response:
            page = response.read().decode()
        assert '<html lang="de">' in page
        assert "Bei kandev anmelden" in page
    finally:
        stop_group(server)
