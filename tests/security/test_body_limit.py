"""The shipped Caddyfile keeps huge anonymous request bodies from a web process's memory, over real sockets.

Daphne reads a whole request body into memory before any view runs (four
anonymous 300 MB POSTs to ``/login/`` once took a server from 175 MB to 1.4 GB),
so the limit must stand in front of it: here Debian's ``caddy`` runs
``deploy/Caddyfile`` (its inner site, pointed at this test's Daphne) and the
server's resident memory is watched while four 100 MB POSTs go through it.
"""

import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from testing_support.processes import ROOT, free_port, running_server, server_environ, stop_group, wait_for_port

BODY_BYTES = 100_000_000
CHUNK = b"x" * 1_000_000
POSTS = 4
#: How much the server may grow while the bodies are refused: a few MB each reach it at most.
MAX_GROWTH_BYTES = 100_000_000


def _rss(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, flags=re.MULTILINE).group(1)) * 1024


def _caddyfile(caddy_port: int, daphne_port: int) -> str:
    """The shipped Caddyfile, its inner site on ``caddy_port`` in front of one Daphne, its TLS site left out."""
    shipped = (ROOT / "deploy" / "Caddyfile").read_text()
    without_tls_site = re.sub(r"^https://\S+ \{\n.*?^\}\n", "", shipped, flags=re.MULTILINE | re.DOTALL)
    assert without_tls_site != shipped
    local = without_tls_site.replace("http://proxy:8000", f"http://127.0.0.1:{caddy_port}")
    local = local.replace("web-a:8000 web-b:8000", f"127.0.0.1:{daphne_port}")
    return "{\n\tadmin off\n}\n\n" + local


def _post_huge(port: int, statuses: list) -> None:
    """An anonymous POST to /login/ announcing and sending ``BODY_BYTES``, for as long as the other end reads it."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        head = (
            f"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {BODY_BYTES}\r\n\r\n"
        )
        try:
            sock.sendall(head.encode())
            for _ in range(BODY_BYTES // len(CHUNK)):
                sock.sendall(CHUNK)
        except OSError:
            pass  # cut off: what the limit is for
        try:
            statuses.append(sock.recv(64).split(b" ")[1].decode())
        except (OSError, IndexError):
            statuses.append("closed")


@pytest.fixture
def caddy():
    found = shutil.which("caddy")
    if found is None:
        raise RuntimeError("caddy is not installed: run the tests with scripts/test, which installs it")
    return found


def test_four_concurrent_100_mb_posts_through_the_shipped_caddyfile_leave_the_server_s_memory_alone(
    tmp_path, fresh_sqlite, caddy
):
    env = server_environ(fresh_sqlite)
    with running_server(env, tmp_path / "server.log") as server:
        daphne_port = int(server.url.rsplit(":", 1)[1])
        caddy_port = free_port()
        config = tmp_path / "Caddyfile"
        config.write_text(_caddyfile(caddy_port, daphne_port))
        caddy_env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
        log = (tmp_path / "caddy.log").open("w")
        proxy = subprocess.Popen(
            [caddy, "run", "--config", str(config), "--adapter", "caddyfile"],
            env=caddy_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for_port(caddy_port, proxy, time.monotonic() + 30)
            deadline = time.monotonic() + 30
            while True:  # until Caddy's health check has found the server up
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{caddy_port}/healthz", timeout=5) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    pass
                assert time.monotonic() < deadline, "Caddy never passed a request to the server"
                time.sleep(0.2)

            before = _rss(server.process.pid)
            statuses: list[str] = []
            posts = [threading.Thread(target=_post_huge, args=(caddy_port, statuses)) for _ in range(POSTS)]
            for post in posts:
                post.start()
            peak = before
            while any(post.is_alive() for post in posts):
                peak = max(peak, _rss(server.process.pid))
                time.sleep(0.02)
            time.sleep(0.5)
            peak = max(peak, _rss(server.process.pid))
        finally:
            stop_group(proxy)
            log.close()

    assert peak - before < MAX_GROWTH_BYTES, f"the server grew by {(peak - before) / 1e6:.0f} MB"
    assert len(statuses) == POSTS
    assert set(statuses) <= {"413", "502", "closed"}, statuses
