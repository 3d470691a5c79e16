"""The task page's timeline as the server renders it, whole and as live fragments.

Markdown, diffs and terminals as the operator reads them; a time on each
message and a divider per agent session; a question shown once, in the
overlay while it is open and in the timeline once it is settled.
"""

import re

import pytest
from django.utils import translation

from kandev_web.clarifications import services as clarifications
from kandev_web.clarifications.models import Clarification, Source
from kandev_web.clarifications.records import announce
from kandev_web.clarifications.validation import parse_bundle
from kandev_web.pages.task import fragments
from kandev_web.sessions import events
from kandev_web.sessions.models import AuthorType, Message, MessageType, TaskSession
from kandev_web.sessions.scenarios import scenario_prompt

QUESTIONS = parse_bundle(
    [
        {
            "id": "db",
            "title": "Database",
            "prompt": "Which **database**?",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"},
            ],
        }
    ]
)


@pytest.fixture
def task(make_task):
    return make_task("Pick a stack")


@pytest.fixture
def session(task, make_profile, make_session):
    return make_session(task, agent_profile=make_profile("Mock agent"))


@pytest.fixture
def task_page(operator_client, task):
    return lambda: operator_client.get(f"/tasks/{task.pk}/").text


def say(session, content, **fields):
    return Message.objects.create(session=session, turn=events.current_turn(session), content=content, **fields)


def timeline(html: str) -> str:
    return re.search(r'<ol id="timeline".*?</ol>', html, re.S).group(0)


def test_agent_markdown_is_formatted_and_its_markup_is_text(session, task_page):
    say(session, "# not a heading: the operator's prompt is text", author_type=AuthorType.USER)
    say(session, "# Plan\n\n- read\n- `test`\n\n<script>alert(1)</script><img src=x onerror=alert(1)>")
    html = timeline(task_page())
    assert "<h1>Plan</h1>" in html
    assert "<li><code>test</code></li>" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script" not in html
    assert "<img" not in html
    assert "# not a heading: the operator&#x27;s prompt is text" in html


def test_every_message_has_its_time(session, task_page):
    messages = [say(session, "one"), say(session, "two")]
    html = timeline(task_page())
    for message in messages:
        assert f'<time class="msg-time" datetime="{message.created_at.isoformat()}"' in html


def test_each_agent_session_opens_with_a_divider(session, task, task_page):
    first = say(session, "first session")
    later = TaskSession.objects.create(task=task, agent_profile=session.agent_profile)
    second = say(later, "second session")
    html = timeline(task_page())
    order = re.findall(r'id="(session-divider-\d+|message-\d+)"', html)
    assert order == [
        f"session-divider-{session.pk}",
        f"message-{first.pk}",
        f"session-divider-{later.pk}",
        f"message-{second.pk}",
    ]
    assert html.count("Mock agent session") == 2


def test_a_live_message_brings_its_sessions_divider_when_it_is_the_first_and_deletes_nothing(session, task):
    first, second = say(session, "one"), say(session, "two")
    opening = fragments.render_message(task.pk, first.pk, created=True)
    assert f'id="session-divider-{session.pk}"' in opening
    assert opening.index("session-divider") < opening.index(f'id="message-{first.pk}"')
    following = fragments.render_message(task.pk, second.pk, created=True)
    assert "session-divider" not in following
    # "No messages yet" is hidden by CSS, never deleted: deleting it again had no target (a console error).
    assert 'hx-swap-oob="delete"' not in opening + following
    assert "session-divider" not in fragments.render_message(task.pk, first.pk, created=False)


def test_the_empty_timeline_says_so_and_keeps_the_line_once_messages_come(session, task_page):
    assert 'id="timeline-empty"' in timeline(task_page())
    say(session, "hello")
    assert 'id="timeline-empty"' in timeline(task_page())


def test_a_question_is_in_the_overlay_while_open_and_in_the_timeline_once_settled(session, task_page):
    record, _ = clarifications.request_clarification(session, QUESTIONS)
    question = Message.objects.get(type=MessageType.CLARIFICATION_REQUEST)
    html = task_page()
    row = re.search(rf'<li id="message-{question.pk}"[^>]*>', html).group(0)
    assert re.search(r"\shidden>$", row), "a pending question is not shown above its overlay"
    assert 'data-testid="clarification-overlay"' in html

    clarifications.respond(record.pending_id, answers=[{"question_id": "db", "selected_options": ["db_opt2"]}])
    html = task_page()
    row = re.search(rf'<li id="message-{question.pk}"[^>]*>', html).group(0)
    assert "hidden" not in row
    record_html = timeline(html)
    assert "<strong>database</strong>" in record_html


def elicitation(session, *, message, questions):
    record = Clarification.objects.create(
        pending_id="e-1", session=session, source=Source.ELICITATION, questions=questions, context=message
    )
    announce(record)
    return record


def question(qid, *, title="", prompt):
    return {
        "id": qid,
        "title": title,
        "prompt": prompt,
        "kind": "single",
        "accepts_text": True,
        "options": [{"id": "a", "label": "A", "description": ""}],
    }


def test_the_overlay_says_a_repeated_message_and_title_once(session, task_page):
    elicitation(
        session,
        message="Pick a colour",
        questions=[question("question_0", title="pick a colour?", prompt="Pick a colour")],
    )
    html = task_page()
    overlay = re.search(r'<section id="clarification-e-1".*?</section>', html, re.S).group(0)
    assert overlay.count("Pick a colour") == 1, "message, title and prompt say the same: once"
    assert 'data-testid="clarification-context"' not in overlay
    assert 'class="clarification-title"' not in overlay


def test_the_overlay_renders_the_agents_markdown_safely(session, task_page):
    elicitation(
        session,
        message="Setting up **billing**. <img src=x onerror=alert(1)>",
        questions=[question("q", title="Colour", prompt="Pick a `colour`\n\n[docs](javascript:alert(1))")],
    )
    overlay = re.search(r'<section id="clarification-e-1".*?</section>', task_page(), re.S).group(0)
    assert re.search(r'data-testid="clarification-context"><p>Setting up <strong>billing</strong>\. &lt;img', overlay)
    assert "<p>Pick a <code>colour</code></p>" in overlay
    assert '<span class="clarification-title">Colour</span>' in overlay
    assert "<img" not in overlay
    assert "javascript:" not in overlay.split("[docs](", 1)[0]
    assert "<a " not in overlay.split('data-testid="clarification-context"', 1)[1]


def test_a_tool_calls_diff_and_terminal_are_shown_as_such(session, task_page):
    events.record_session_update(
        session.pk,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "title": "Edit <b>app.py</b>",
            "kind": "edit",
            "status": "completed",
            "content": [{"type": "diff", "path": "app<b>.py", "oldText": "old <i>\n", "newText": "new <i>\n"}],
        },
    )
    events.record_session_update(
        session.pk,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "b1",
            "title": "pytest",
            "kind": "execute",
            "status": "completed",
            "rawInput": {"command": "pytest -q <x>"},
            "content": [{"type": "terminal", "terminalId": "b1"}],
            "_meta": {
                "terminal_output": {"terminal_id": "b1", "data": "<script>1 passed</script>\n"},
                "terminal_exit": {"terminal_id": "b1", "exit_code": 1},
            },
        },
    )
    html = timeline(task_page())
    assert '<span data-testid="diff-old-path">a/app&lt;b&gt;.py</span>' in html
    assert '<span data-testid="diff-new-path">b/app&lt;b&gt;.py</span>' in html
    assert '<span class="diff-line diff-del" data-testid="diff-line" data-kind="del">-old &lt;i&gt;</span>' in html
    assert '<span class="diff-line diff-add" data-testid="diff-line" data-kind="add">+new &lt;i&gt;</span>' in html
    assert 'data-testid="tool-terminal" data-terminal-id="b1" data-exited="true"' in html
    assert "$ pytest -q &lt;x&gt;" in html
    assert (
        '<pre class="terminal-output" data-testid="terminal-output">&lt;script&gt;1 passed&lt;/script&gt;\n</pre>'
        in html
    )
    assert "Exited with code 1." in html


def test_a_scenario_started_from_the_start_form_is_named_and_not_shown_as_its_prompt(session, task_page):
    """The start form sends ``/e2e:<name>`` to the mock agent; the operator reads the scenario's name."""
    say(session, scenario_prompt("elicit-two"), author_type=AuthorType.USER)
    with translation.override("en"):
        html = timeline(task_page())
    assert "/e2e:" not in html
    assert 'data-testid="message-scenario" data-scenario="elicit-two">Scenario: Ask several questions<' in html


@pytest.mark.parametrize("typed", ["/e2e:crash-stderr", "Please fix /e2e:elicit-two", "Fix the login"])
def test_what_an_operator_typed_is_shown_as_typed(session, task_page, typed):
    say(session, typed, author_type=AuthorType.USER)
    html = timeline(task_page())
    assert f'<div class="msg-body" data-testid="message-body">{typed}</div>' in html
    assert "message-scenario" not in html


def test_every_time_on_the_task_page_is_localised_in_the_browser(session, task_page):
    """One format on one page: static/js/timeline.js rewrites each ``time[data-local-time]`` in the viewer's locale."""
    say(session, "one")
    html = task_page()
    times = re.findall(r"<time\b[^>]*>", html)
    assert any('data-testid="session-time"' in time for time in times)
    assert [time for time in times if "data-local-time" not in time] == []
