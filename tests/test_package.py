"""The release is the whole app: the wheel built from its sdist, installed far from a checkout, checks and serves.

It installs the versions requirements/lock.txt pins, the lock pins what
pyproject.toml declares, and what the package imports is declared.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import urllib.request
import zipfile
from importlib.metadata import distributions, packages_distributions
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from testing_support.deployment import vapid_private_key
from testing_support.processes import daphne

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def run(*argv, **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
    return done


def clean_checkout(destination: Path) -> Path:
    """The repository's files as a fresh clone would have them, plus new ones not yet committed, in ``destination``.

    What a build leaves in a working checkout (build/, *.egg-info with a stale
    SOURCES.txt) changes what setuptools puts in an sdist; a release is built
    from a clean tree, and so is this one.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted but not yet committed is listed too
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@pytest.mark.slow
def test_the_wheel_built_from_the_sdist_installs_in_a_fresh_virtualenv_then_checks_migrates_and_serves(tmp_path):
    # `python -m build` makes the sdist, then the wheel from the unpacked sdist: the release's path (and the image's).
    source = clean_checkout(tmp_path / "checkout")
    # Through uv (the [test] extra), as the test venv itself is installed: the same steps in seconds.
    run(sys.executable, "-m", "build", "--installer", "uv", "--outdir", str(tmp_path / "dist"), str(source))
    (sdist,) = (tmp_path / "dist").glob("kandev_web-*.tar.gz")
    (wheel,) = (tmp_path / "dist").glob("kandev_web-*.whl")
    with tarfile.open(sdist) as archive:
        in_sdist = {name.partition("/")[2] for name in archive.getnames()}
    assert {"templates/base.html", "static/css/app.css", "MANIFEST.in"} <= in_sdist
    shipped = zipfile.ZipFile(wheel).namelist()
    assert {"kandev_web/templates/base.html", "kandev_web/static/css/app.css", "kandev_web/flags/profiles.toml"} <= set(
        shipped
    )
    # Test helpers live beside the tests (testing_support/), never in what is installed.
    assert [name for name in shipped if name.startswith("testing_support/") or name.endswith("/testing.py")] == []
    base_python = getattr(sys, "_base_executable", sys.executable)
    run(base_python, "-m", "venv", str(tmp_path / "venv"))
    bin_dir = tmp_path / "venv" / "bin"
    uv = Path(sys.executable).parent / "uv"
    run(str(uv), "pip", "install", "--quiet", "--python", str(bin_dir / "python"), "-c", str(LOCK), str(wheel))
    installed = run(str(bin_dir / "python"), "-m", "pip", "list", "--format=freeze").stdout.lower()
    assert "pyyaml" not in installed  # the product reads no YAML: nothing pulls PyYAML in

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
    run(str(bin_dir / "kandev-web"), "check", cwd=site, env=env)
    run(str(bin_dir / "kandev-web"), "migrate", "--no-input", "-v0", cwd=site, env=env)
    run(str(bin_dir / "kandev-web"), "collectstatic", "--no-input", "-v0", cwd=site, env=env)
    assert (site / "var" / "kandev.sqlite3").is_file()
    assert (site / "var" / "staticfiles").is_dir()

    with daphne(env, cwd=site, command=(str(bin_dir / "daphne"),)) as (port, _):
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


def locked() -> dict[str, list[tuple[Version, Marker | None]]]:
    """requirements/lock.txt's pins by canonical name: each version, with the marker it is for (None: every Python)."""
    pins: dict[str, list[tuple[Version, Marker | None]]] = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (specifier,) = requirement.specifier  # one ==, nothing looser
        assert specifier.operator == "==", line
        pin = (Version(specifier.version), requirement.marker)
        pins.setdefault(canonicalize_name(requirement.name), []).append(pin)
    return pins


def declared() -> list[Requirement]:
    """What pyproject.toml declares for the package and for CI's extra ([test])."""
    return [Requirement(text) for text in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["test"]]


def test_every_dependency_pyproject_declares_is_pinned_in_the_lock_within_its_range():
    pins = locked()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements/lock.txt: run bash scripts/lock"
        for version, _marker in pins[name]:  # every pin, whichever Python it is for
            assert requirement.specifier.contains(version, prereleases=True), (
                f"requirements/lock.txt pins {name}=={version}, outside pyproject.toml's {requirement}: "
                "run bash scripts/lock"
            )


def test_this_virtualenv_holds_the_locked_versions():
    """scripts/lib.sh's setup_venv installs with the lock as constraints: CI tests what the image runs."""
    pins = locked()
    for distribution in distributions():
        name = canonicalize_name(distribution.metadata["Name"])
        here = [version for version, marker in pins.get(name, []) if marker is None or marker.evaluate()]
        if here:
            assert Version(distribution.version) in here, f"{name} {distribution.version} here, {here} locked"


def imported_top_level_modules(package: Path) -> set[str]:
    """Every absolute import's first name in the package's modules, but those only type checkers read."""
    names = set()
    for module in package.rglob("*.py"):
        tree = ast.parse(module.read_text(), filename=str(module))
        for block in ast.walk(tree):
            if isinstance(block, ast.If) and ast.unparse(block.test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}:
                block.body = []  # `if TYPE_CHECKING:` imports never run
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names


def test_every_third_party_module_the_package_imports_comes_from_a_declared_runtime_dependency():
    runtime = {canonicalize_name(Requirement(text).name) for text in PROJECT["dependencies"]}
    providers = packages_distributions()
    undeclared = {}
    for name in imported_top_level_modules(ROOT / "kandev_web") - set(sys.stdlib_module_names) - {"kandev_web"}:
        found = {canonicalize_name(distribution) for distribution in providers.get(name, [])}
        assert found, f"kandev_web imports {name}, which no installed distribution provides"
        if not found & runtime:
            undeclared[name] = sorted(found)
    assert undeclared == {}, "imported but not declared in pyproject.toml's dependencies"
    # The only YAML the package read was one small file of flag values: now TOML, read by the standard library.
    assert "pyyaml" not in runtime
