"""Login is required everywhere, and workspaces do not see each other."""

import pytest
from playwright.sync_api import expect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

from testing_support.browser import login
from testing_support.processes import PASSWORD


def test_pages_require_login(page, server):
    response = page.goto(f"{server.url}/settings/feature-toggles/")
    assert "/login/" in page.url
    assert response.ok
    expect(page.get_by_test_id("login-form")).to_be_visible()


def test_wrong_password_is_refused(page, server):
    server.create_operator("carol", workspace="Carol's")
    page.goto(f"{server.url}/login/")
    page.get_by_test_id("login-username").fill("carol")
    page.get_by_test_id("login-password").fill("not-her-password")
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("login-error")).to_be_visible()


def test_another_workspaces_task_is_a_404(page, server):
    mine = server.create_operator("dave", workspace="Dave's", tasks=True)
    theirs = server.create_operator("erin", workspace="Erin's", tasks=True)
    login(page, server, "dave", f"/boards/{mine['board_id']}/")
    expect(page.get_by_test_id(f"task-card-{mine['task_ids'][0]}")).to_be_visible()

    assert page.goto(f"{server.url}/tasks/{theirs['task_ids'][0]}/").status == 404
    assert page.goto(f"{server.url}/boards/{theirs['board_id']}/").status == 404
    assert page.goto(f"{server.url}/tasks/{mine['task_ids'][0]}/").status == 200


def test_too_many_wrong_passwords_lock_the_login_until_reset(page, server):
    server.create_operator("frank", workspace="Frank's")
    page.goto(f"{server.url}/login/")
    for _ in range(5):
        page.get_by_test_id("login-username").fill("frank")
        page.get_by_test_id("login-password").fill("not-his-password")
        page.get_by_test_id("login-submit").click()
        expect(page.get_by_test_id("login-form")).to_be_visible()
    page.get_by_test_id("login-username").fill("frank")
    page.get_by_test_id("login-password").fill(PASSWORD)
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("login-locked-out")).to_contain_text("locked for 15 minutes")
    assert "/login/" in page.url

    server.manage("axes_reset_username", "frank")
    login(page, server, "frank")
    expect(page.get_by_test_id("login-form")).to_have_count(0)


@pytest.mark.parametrize("path", ["/ws/nope/", "/ws/tasks/abc/", "/"])
def test_a_socket_to_an_unknown_path_is_refused_and_logs_no_traceback(server, fresh_database, path):
    """Anyone can open sockets: an unknown path must cost the server a refusal, not a traceback in its log."""
    url = server.url.replace("http://", "ws://") + path
    with pytest.raises(InvalidStatus) as refused:
        ws_connect(url, origin=server.url, open_timeout=10).close()
    assert refused.value.response.status_code == 403
    # A known path still answers, so the refusal above was the router's and the server is fine.
    with pytest.raises(InvalidStatus):
        ws_connect(server.url.replace("http://", "ws://") + "/ws/tasks/1/", origin=server.url, open_timeout=10)
    log = (fresh_database.parent / "server.log").read_text()
    assert "Traceback" not in log
    assert "No route found" not in log
