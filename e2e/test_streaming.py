"""Streamed text on the task page: every chunk once and in order, its Markdown once it settles (issue 26).

The mock agent's ``stream-chunks`` scenario streams numbered list items; the
page appends each as it comes, into the message's stream element, and the
whole message is rendered (its Markdown) every few seconds while it streams
and once more when the turn ends. A page opened mid-stream shows everything
so far, then the rest. Each page checks on every change of its timeline that
what it shows is chunks 1 to k, each once, in order, and never fewer than
before.
"""

import pytest
from playwright.sync_api import expect

from testing_support.browser import start_agent, watched_page

#: 25 a second: twelve seconds of stream, so that a second page opened once the first shows 40 chunks
#: (1.6 s in) is open well before the stream ends, even on a loaded machine (6 s was not always enough).
CHUNKS = 300

#: Installed in a page: on every change of its timeline, the streamed message must read chunks 1..k in order.
WATCH_THE_STREAM = """() => {
  window.streamViolations = [];
  window.streamSeen = 0;
  window.streamTailSeen = false;
  const violation = (what) => window.streamViolations.length < 5 && window.streamViolations.push(what);
  const check = () => {
    const messages = document.querySelectorAll("#timeline [data-author=agent][data-type=message]");
    if (messages.length > 1) violation(`${messages.length} copies of the message`);
    if (messages.length !== 1) return;
    const numbers = Array.from(messages[0].textContent.matchAll(/chunk (\\d+) sent/g), (match) => Number(match[1]));
    if (numbers.some((number, index) => number !== index + 1)) violation(`out of order or twice: ${numbers}`);
    if (numbers.length < window.streamSeen) violation(`went back from ${window.streamSeen} to ${numbers.length}`);
    window.streamSeen = numbers.length;
    const tail = messages[0].querySelector("[data-testid=message-stream]");
    if (tail && tail.textContent) window.streamTailSeen = true;
  };
  new MutationObserver(check).observe(document.getElementById("timeline"), {
    childList: true, subtree: true, characterData: true,
  });
  check();
}"""


@pytest.fixture
def task_path(server):
    ids = server.create_operator("streamer", workspace="Streams", tasks=True)
    return f"/tasks/{ids['task_ids'][0]}/"


def streamed_message(page):
    return page.locator("[data-testid=timeline-message][data-author=agent][data-type=message]")


def test_a_stream_shows_every_chunk_once_and_in_order_then_its_markdown_also_on_a_page_opened_midway(
    browser, server, task_path
):
    first = watched_page(browser, server, "streamer", task_path, live="task-live")
    first.evaluate(WATCH_THE_STREAM)
    start_agent(first, f"/e2e:stream-chunks {CHUNKS} 25")
    expect(streamed_message(first)).to_have_attribute("data-streaming", "true")
    first.wait_for_function("() => window.streamSeen >= 40")

    # Opened mid-stream: everything so far, at once.
    second = watched_page(browser, server, "streamer", task_path, live="task-live")
    second.evaluate(WATCH_THE_STREAM)
    assert second.evaluate("() => window.streamSeen") >= 40
    expect(streamed_message(second)).to_have_attribute("data-streaming", "true")

    for page in (first, second):
        message = streamed_message(page)
        expect(message).to_have_attribute("data-streaming", "false", timeout=60_000)
        body = message.get_by_test_id("message-body")
        expect(body.locator("ul > li")).to_have_count(CHUNKS)
        expect(body.locator("ul > li").first).to_contain_text("chunk 1 sent at")
        expect(body.locator("ul > li").last).to_contain_text(f"chunk {CHUNKS} sent at")
        expect(body.locator("p > strong")).to_have_text("Done.")
        expect(message.get_by_test_id("message-stream")).to_have_count(0)
        assert page.evaluate("() => window.streamViolations") == []
        assert page.evaluate("() => window.streamSeen") == CHUNKS
        assert page.evaluate("() => window.htmxErrors") == 0
    # Text arrived as deltas, not only in whole renders.
    assert first.evaluate("() => window.streamTailSeen")
    assert second.evaluate("() => window.streamTailSeen")
