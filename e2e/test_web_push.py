"""An operator turns Web Push on in a browser; an agent's question reaches a push service, encrypted and signed.

Chromium offline has no push service to subscribe at, so only
``PushManager.subscribe`` (and ``getSubscription``) are replaced, by an
init script returning a subscription whose endpoint is the test's local
push service (testing_support/fakes.py) and whose keys the test
made. Everything else is real: the service worker's registration, the
settings page's button, the subscription POSTed with the CSRF token, the
web server's push sender, and the push service verifying the VAPID JWT
with the key the page handed the browser and decrypting the payload with
the browser's private key. The service worker is then handed that payload
through DevTools (``ServiceWorker.deliverPushMessage``) and the
notification it shows is read back; a click on it cannot be made headless,
so the worker's ``notificationclick`` handler is handed a synthetic event and
the URL it asks ``clients.openWindow`` for is checked (no window is opened).
"""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from testing_support.browser import login, start_scenario
from testing_support.fakes import FakeBrowser, PushService

pytestmark = pytest.mark.e2e

#: The headless shell grants no notifications: the service worker could show none.
FULL_CHROMIUM = True

QUESTION = "Which database should we use for this project?"

#: Stands in for the browser's push service client; a subscription lives in localStorage across reloads.
FAKE_PUSH_MANAGER = """
(() => {
  const fake = %s;
  const key = "kandev-e2e-push";
  const subscription = () => ({
    endpoint: fake.endpoint,
    expirationTime: null,
    options: { userVisibleOnly: true },
    toJSON: () => ({ endpoint: fake.endpoint, expirationTime: null, keys: fake.keys }),
    unsubscribe: () => { localStorage.removeItem(key); return Promise.resolve(true); },
  });
  PushManager.prototype.subscribe = function (options) {
    const bytes = new Uint8Array(options.applicationServerKey);
    window.__pushKey = btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
    localStorage.setItem(key, "subscribed");
    return Promise.resolve(subscription());
  };
  PushManager.prototype.getSubscription = function () {
    return Promise.resolve(localStorage.getItem(key) ? subscription() : null);
  };
})();
"""


@pytest.fixture
def push_service():
    service = PushService()
    yield service
    service.close()


def subscriptions(server, username: str) -> int:
    script = (
        "from kandev_web.notifications.models import PushSubscription as S;"
        f"print(S.objects.filter(user__username={username!r}).count())"
    )
    return int(server.manage("shell", "-c", script).strip().splitlines()[-1])


def push_page(browser, server, username: str, subscription: dict):
    """A browser context of its own, logged in on the notification settings, its push service faked."""
    context = browser.new_context(permissions=["notifications"])
    context.add_init_script(FAKE_PUSH_MANAGER % json.dumps(subscription))
    page = context.new_page()
    login(page, server, username, "/settings/notifications/")
    expect(page.get_by_test_id("push-notifications")).to_have_attribute("data-push-state", "off")
    return page


def turn_on(page) -> str:
    """Turn push on in this browser; the VAPID key the page subscribed with."""
    section = page.get_by_test_id("push-notifications")
    section.get_by_test_id("push-toggle").click()
    expect(section).to_have_attribute("data-push-state", "on")
    key = section.get_attribute("data-vapid-key")
    assert page.evaluate("() => window.__pushKey") == key  # what push.js handed PushManager.subscribe
    return key


def ask(browser, server, username: str, task_id: int):
    page = browser.new_context().new_page()
    login(page, server, username, f"/tasks/{task_id}/")
    expect(page.get_by_test_id("task-live")).to_have_attribute("data-live", "connected")
    start_scenario(page, "clarification")
    expect(page.get_by_test_id("clarification-overlay")).to_be_visible(timeout=30_000)
    return page


def test_a_question_is_pushed_once_to_the_browser_and_a_gone_browser_is_forgotten(browser, server, push_service):
    ids = server.create_operator("pusher", workspace="Pushed", tasks=True)
    task_id = ids["task_ids"][0]
    laptop, phone = FakeBrowser(), FakeBrowser()
    laptop_endpoint, phone_endpoint = push_service.endpoint("laptop"), push_service.endpoint("phone", 410)
    settings = push_page(browser, server, "pusher", laptop.subscription(laptop_endpoint))
    key = turn_on(settings)
    turn_on(push_page(browser, server, "pusher", phone.subscription(phone_endpoint)))
    assert subscriptions(server, "pusher") == 2

    settings.reload()  # the browser still has its subscription, and says so
    expect(settings.get_by_test_id("push-notifications")).to_have_attribute("data-push-state", "on")

    task_page = ask(browser, server, "pusher", task_id)
    (push,) = push_service.wait_for(laptop_endpoint)
    claims = push.vapid_claims(key, laptop_endpoint)
    assert claims["sub"] == "mailto:kandev@localhost"
    payload = push.decrypt(laptop)
    title = task_page.get_by_test_id("task-title").inner_text().strip()
    assert payload["title"] == "Agent needs your answer"
    assert payload["body"] == f'The agent asked a question on "{title}".'
    assert payload["url"] == f"/tasks/{task_id}/"
    assert QUESTION not in json.dumps(payload)
    assert b"database" not in push.body

    push_service.wait_for(phone_endpoint)  # tried, and its push service said 410 Gone
    # Removed right after the 410 came back: looked for until it is, for as long as an expectation waits.
    deadline = time.monotonic() + 15
    while subscriptions(server, "pusher") != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert subscriptions(server, "pusher") == 1

    # The service worker shows what the push said: the title, the body naming the task, the task's URL.
    show_in_service_worker(settings, server, payload)

    # Answering and the finished turn push nothing more (finished turns are off by default).
    task_page.get_by_test_id("clarification-option").filter(has_text="SQLite").click()
    expect(task_page.get_by_test_id("clarification-record")).to_have_attribute("data-status", "answered")
    expect(task_page.get_by_test_id("task-sessions")).to_have_attribute("data-turn-open", "false", timeout=30_000)
    assert len(push_service.pushes_to(laptop_endpoint)) == 1

    # Off again: the server forgets this browser.
    section = settings.get_by_test_id("push-notifications")
    section.get_by_test_id("push-toggle").click()
    expect(section).to_have_attribute("data-push-state", "off")
    assert subscriptions(server, "pusher") == 0


def show_in_service_worker(page, server, payload: dict) -> None:
    cdp = page.context.new_cdp_session(page)
    registrations: list[dict] = []
    cdp.on("ServiceWorker.workerRegistrationUpdated", lambda event: registrations.extend(event["registrations"]))
    cdp.send("ServiceWorker.enable")
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    (registration,) = [r for r in registrations if r["scopeURL"] == f"{server.url}/" and not r["isDeleted"]]
    (worker,) = page.context.service_workers
    # Chromium's getNotifications() deletes a stored notification the platform does not report on display
    # yet, unless it was made after the read began: a read while the worker's showNotification() is between
    # the two loses the notification for good (content/browser/notifications/platform_notification_context_impl.cc,
    # DoReadAllNotificationDataForServiceWorkerRegistration). So nothing is read until the worker's own
    # showNotification() has settled; the hook only watches it.
    worker.evaluate(
        """() => {
          const registration = self.registration;
          const show = registration.showNotification.bind(registration);
          self.__kandevShown = new Promise((resolve, reject) => {
            registration.showNotification = (...args) => {
              const shown = show(...args);
              shown.then(resolve, reject);
              return shown;
            };
          });
        }"""
    )
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": server.url, "registrationId": registration["registrationId"], "data": json.dumps(payload)},
    )
    shown = worker.evaluate(
        """async () => {
          await self.__kandevShown;
          const read = (n) => ({ title: n.title, body: n.body, tag: n.tag, url: n.data.url });
          return (await self.registration.getNotifications()).map(read);
        }"""
    )
    assert shown == [{"title": payload["title"], "body": payload["body"], "tag": payload["tag"], "url": payload["url"]}]

    # A click on it: headless Chromium cannot click a notification, so the service worker's own handler is
    # handed a notificationclick for it, with clients.openWindow recorded instead of opening (an untrusted
    # event may not open windows).
    opened = worker.evaluate(
        """async () => {
          const opened = new Promise((resolve) => {
            self.clients.openWindow = (url) => { resolve(url); return Promise.resolve(null); };
          });
          self.clients.matchAll = () => Promise.resolve([]);  // no window of kandev open
          const [notification] = await self.registration.getNotifications();
          self.dispatchEvent(new NotificationEvent("notificationclick", { notification }));
          return { opened: await opened, left: (await self.registration.getNotifications()).length };
        }"""
    )
    assert opened == {"opened": f"{server.url}{payload['url']}", "left": 0}


def test_an_operator_who_turned_questions_off_gets_no_push_for_them(browser, server, push_service):
    ids = server.create_operator("quiet", workspace="Quiet", tasks=True)
    endpoint = push_service.endpoint("quiet")
    fake = FakeBrowser()
    settings = push_page(browser, server, "quiet", fake.subscription(endpoint))
    turn_on(settings)
    questions = settings.get_by_test_id("notification-setting-session.clarification_requested")
    questions.get_by_test_id("notification-switch").click()
    expect(questions).to_have_attribute("data-enabled", "false")
    turns = settings.get_by_test_id("notification-setting-session.turn_finished")
    turns.get_by_test_id("notification-switch").click()
    expect(turns).to_have_attribute("data-enabled", "true")

    page = ask(browser, server, "quiet", ids["task_ids"][0])
    page.get_by_test_id("clarification-option").filter(has_text="SQLite").click()
    # The finished turn is pushed; had the question been, its push would have come first.
    (push,) = push_service.wait_for(endpoint)
    assert push.decrypt(fake)["title"] == "Agent finished its turn"
