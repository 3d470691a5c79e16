"""Fuzzing ``elicitation/create`` through a real agentctl, with the flag on.

Whatever an agent sends as ``elicitation/create`` params, agentctl must not
crash, must not leave the request unanswered, and must either

- answer ``{"action": "decline"}`` at once, announcing nothing, or
- announce one ``elicitation.requested`` whose questions are valid: ids are
  property keys of the schema, kinds are single / multi / text, option ids
  are non-empty strings,

and afterwards still serve the next request. The pure mapping has its own
properties (elicitation/test_elicitation_properties.py); this drives the whole
path instead: the agent's stdio framing, agentctl's JSON-RPC reader, the
handler, the announcement on the WebSocket stream and the answer written back.

One agentctl and one relay agent serve every example of a test. The relay
agent (``RELAY_AGENT`` below) reads each request's params from a file the test
writes, so params travel to it byte for byte and may be any size; it sends
them as ``elicitation/create``, waits for agentctl's answer and reports it as
a message chunk, then ends the turn. A test runs its examples synchronously,
so agentctl and the stream client live on an event loop in a thread of their own.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kandev_web.agentctl.envelope import MAX_FRAME_BYTES
from kandev_web.agentctl.launcher import AgentctlProcess, launch
from kandev_web.agentctl.stream_client import AgentStreamClient
from testing_support.agentctl import Inbox, open_session, text_prompt
from testing_support.scripted_elicitation import COLOUR_FORM

SESSION = "sess-1"
#: How long one example may take end to end before agentctl counts as stuck.
STEP_TIMEOUT = 15.0

RELAY_AGENT = r"""
import json, sys

def write(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()

def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)

def reply(request, result):
    write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}))

def say(text):
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    params = {"sessionId": "SESSION", "update": chunk}
    write(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}))

next_id = 0
while True:
    message = read()
    method = message.get("method")
    if method == "initialize":
        reply(message, {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "relay"}})
    elif method == "session/new":
        reply(message, {"sessionId": "SESSION"})
    elif method == "session/prompt":
        order = json.loads(message["params"]["prompt"][0]["text"])
        with open(order["path"], encoding="ascii") as file:
            raw = file.read()
        request_id = next_id
        next_id += 1
        # Verbatim: whatever the test wrote is the params, duplicate keys, NaN and all.
        write('{"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":%s}' % (request_id, raw))
        if order["wait"]:
            while True:
                answer = read()
                if "method" not in answer and answer.get("id") == request_id:
                    break
            say(json.dumps(answer))
        else:
            say(json.dumps({"sent": request_id}))
        reply(message, {"stopReason": "end_turn"})
""".replace("SESSION", SESSION)


# Raw JSON ----------------------------------------------------------------------
#
# Params are generated as Python values and written as JSON text by ``dump``,
# which can also write what ``json.dumps`` cannot: duplicate keys and nesting
# deeper than Python's own recursion limit.


@dataclass(frozen=True)
class Deep:
    """``[[[...0...]]]`` or ``{"a":{"a":...0...}}``, ``depth`` levels down."""

    depth: int
    kind: str = "list"


@dataclass(frozen=True)
class Duplicated:
    """An object whose keys repeat; a JSON parser keeps the last value."""

    pairs: tuple[tuple[str, Any], ...]


def dump(value: Any) -> str:
    """Compact JSON text, ASCII only (non-ASCII and lone surrogates as escapes), no newline."""
    if isinstance(value, Deep):
        if value.kind == "list":
            return "[" * value.depth + "0" + "]" * value.depth
        return '{"a":' * value.depth + "0" + "}" * value.depth
    if isinstance(value, Duplicated):
        return "{" + ",".join(f"{dump(k)}:{dump(v)}" for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{dump(k)}:{dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(item) for item in value) + "]"
    return json.dumps(value)  # NaN and Infinity come out as such: an agent may send them


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def property_keys(params: Any) -> set[str] | None:
    """The keys of ``requestedSchema.properties``, if it is an object.

    A key holding a lone surrogate (``"\\ud800"`` in JSON) cannot travel as
    UTF-8; agentctl may carry it with each surrogate replaced by U+FFFD.
    """
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, Duplicated):
        keys = {key for key, _ in properties.pairs}
    elif isinstance(properties, dict):
        keys = set(properties)
    else:
        return None
    return keys | {LONE_SURROGATE.sub("\ufffd", key) for key in keys}


# Strategies --------------------------------------------------------------------

MARKUP = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "{{7*7}}",
    "${7*7}",
    "javascript:alert(1)",
]
ODD_TEXT = [
    "",
    " ",
    "\t\n",
    "\x00",
    "a\x00b",
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "0",
    "1",
    "-1",
    "1e3",
    "NaN",
    "null",
    "true",
    "\u202egnp.exe",
    "\ufeff",
    "\u200b",
    "🙂",
    "\U0010ffff",
    "\ud800",
    "\udfff",
    "x\udbffy",
    "question_0",
    "question_0_custom",
    "_meta",
    "Other",
    "../../etc/passwd",
    "'; DROP TABLE x; --",
    *MARKUP,
]
huge_text = st.sampled_from([4_096, 65_536, 300_000]).map(lambda n: "x" * n)
short_text = st.text(max_size=12)
odd_text = st.sampled_from(ODD_TEXT)
#: Mostly short or odd; now and then huge.
texts = st.one_of(short_text, odd_text, short_text, odd_text, huge_text)
keys = st.one_of(odd_text, st.text(max_size=8), st.integers(-5, 99).map(str))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**64, -(2**63) - 1, 10**100, 0.0, -0.0, 1e308, 5e-324, math.inf, -math.inf, math.nan]),
    st.floats(),
    texts,
)
deep = st.builds(Deep, st.sampled_from([50, 400, 900]), st.sampled_from(["list", "object"]))
#: Any JSON at all, wrong types included: small, but now and then deep.
values = st.recursive(
    scalars | deep,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=6,
)
anything = st.one_of(texts, scalars, values)

entry = st.one_of(
    st.fixed_dictionaries(
        {"const": st.one_of(texts, texts, scalars)},
        optional={"title": anything, "description": anything, "__proto__": values},
    ),
    values,
)
entries = st.one_of(
    st.lists(entry, max_size=4),
    st.lists(entry, max_size=4),
    # Around the 256-options limit.
    st.sampled_from([255, 256, 257]).map(lambda n: [{"const": f"o{i}", "title": f"<b>{i}</b>"} for i in range(n)]),
    values,
)
enum_values = st.one_of(st.lists(st.one_of(texts, texts, scalars), max_size=4), values)
marker = st.fixed_dictionaries(
    {"_askUserQuestionCustomAnswer": st.one_of(st.fixed_dictionaries({"questionId": st.one_of(keys, scalars)}), values)}
)
single = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "string", "string", "String", None, 1])},
    optional={
        "oneOf": entries,
        "enum": enum_values,
        "enumNames": enum_values,
        "title": anything,
        "description": anything,
        "_meta": st.one_of(marker, values),
        "__proto__": values,
    },
)
multi = st.fixed_dictionaries(
    {"type": st.sampled_from(["array", "array", ["array"], None])},
    optional={
        "items": st.one_of(
            st.fixed_dictionaries({"anyOf": entries}), st.fixed_dictionaries({"enum": enum_values}), values
        ),
        "title": anything,
        "description": anything,
    },
)
#: Well-formed questions whose every string is hostile: these reach the operator.
visible_text = st.one_of(odd_text, short_text, huge_text).filter(lambda text: text.strip())
good_entries = st.lists(
    st.fixed_dictionaries({"const": visible_text}, optional={"title": visible_text, "description": texts}),
    min_size=1,
    max_size=4,
    unique_by=lambda entry: entry["const"],
)
good_single = st.fixed_dictionaries(
    {"type": st.just("string"), "oneOf": good_entries}, optional={"title": texts, "description": texts}
)
good_multi = st.fixed_dictionaries(
    {"type": st.just("array"), "items": st.fixed_dictionaries({"anyOf": good_entries})},
    optional={"title": texts, "description": texts},
)
good_text = st.fixed_dictionaries({"type": st.just("string")}, optional={"title": texts, "description": texts})
prop = st.one_of(good_single, good_multi, good_text, single, single, multi, values)
properties = st.one_of(
    st.dictionaries(keys, prop, min_size=1, max_size=5),
    st.dictionaries(keys, prop, min_size=1, max_size=5),
    # Around the 64-properties limit.
    st.sampled_from([63, 64, 65]).map(
        lambda n: {f"q{i}": {"type": "string", "title": f"<i>{i}</i>"} for i in range(n)}
    ),
    st.lists(st.tuples(keys, prop), min_size=2, max_size=3).map(lambda pairs: Duplicated(tuple(pairs))),
    values,
)
schema = st.one_of(
    st.fixed_dictionaries(
        {"properties": properties},
        optional={
            "type": st.sampled_from(["object", "object", "array", None, 0]),
            "required": values,
            "__proto__": values,
        },
    ),
    values,
)
plausible = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["form", "form", "form", "form", "url", "FORM", None, 1]),
        "sessionId": st.one_of(
            st.just(SESSION), st.just(SESSION), st.just(SESSION), st.sampled_from(["", "sess-2"]), scalars
        ),
        "requestedSchema": schema,
    },
    optional={
        "message": anything,
        "toolCallId": st.one_of(st.sampled_from(["toolu_1", ""]), anything),
        "requestId": st.one_of(st.none(), scalars),
        "_meta": values,
        "__proto__": values,
        "url": texts,
    },
)
any_params = st.one_of(plausible, plausible, plausible, values)


# The harness -------------------------------------------------------------------


@dataclass
class Outcome:
    answer: dict[str, Any]
    requested: dict[str, Any] | None


class LiveAgentctl:
    """agentctl + the relay agent + a stream client, on an event loop in a thread."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fuzz agentctl", daemon=True)
        self.thread.start()
        self.count = 0
        self.broken = False
        self.run(self._start())

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 2 * STEP_TIMEOUT) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    async def _start(self) -> None:
        self.agentctl: AgentctlProcess = await launch([sys.executable, "-c", RELAY_AGENT])
        self.inbox = Inbox()
        self.client: AgentStreamClient = self.agentctl.client(on_notification=self.inbox)
        await self.client.connect()
        self.session_id = await open_session(self.client, elicitation=True)

    def close(self) -> None:
        async def stop() -> None:
            await self.client.close()
            await self.agentctl.stop()

        try:
            self.run(stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)

    # One request ------------------------------------------------------------

    def ask(self, raw: str, *, wait: bool = True) -> Outcome:
        if self.broken:
            # An earlier example failed and may have left agentctl in any state:
            # start afresh, so that every example (and Hypothesis's replay of a
            # failing one) is judged on its own.
            self._restart()
        try:
            return self.run(self._ask(raw, wait=wait))
        except BaseException:
            self.broken = True
            raise

    def _restart(self) -> None:
        async def replace() -> None:
            try:
                await self.client.close()
            finally:
                await self.agentctl.stop()
            await self._start()

        self.run(replace())
        self.broken = False

    async def _ask(self, raw: str, *, wait: bool) -> Outcome:
        assert "\n" not in raw
        assert raw.isascii()
        self.count += 1
        path = self.directory / f"params-{self.count}.json"
        path.write_text(raw, encoding="ascii")
        start = len(self.inbox.received)
        order = json.dumps({"path": str(path), "wait": wait})
        turn = await self.client.request("agent.prompt", {"session_id": self.session_id, "prompt": text_prompt(order)})
        completed = asyncio.ensure_future(
            self.inbox.next("turn.completed", lambda note: note["turn_id"] == turn["turn_id"], timeout=STEP_TIMEOUT)
        )
        announced = asyncio.ensure_future(self.inbox.next("elicitation.requested", timeout=STEP_TIMEOUT))
        await asyncio.wait({completed, announced}, return_when=asyncio.FIRST_COMPLETED)
        requested = None
        if announced.done() and not announced.cancelled():
            requested = announced.result()
            # Skip, so the next example starts clean.
            result = await self.client.request(
                "agent.elicitations.respond",
                {"pending_id": requested["pending_id"], "answers": [], "rejected": True, "reject_reason": ""},
            )
            assert result == {"success": True, "action": "decline"}, result
        else:
            announced.cancel()
        finished = await completed
        assert finished["stop_reason"] == "end_turn", finished
        events = [action for action, _ in self.inbox.received[start:] if action.startswith("elicitation.")]
        assert events == ([] if requested is None else ["elicitation.requested", "elicitation.settled"]), events
        said = [
            note["update"]["content"]["text"]
            for action, note in self.inbox.received[start:]
            if action == "session.update" and note["update"].get("sessionUpdate") == "agent_message_chunk"
        ]
        assert len(said) == 1, said
        listed = await self.client.request("agent.elicitations.list", {})
        assert listed == {"pending": []}, listed
        assert self.agentctl.process.returncode is None, "agentctl exited"
        return Outcome(answer=json.loads(said[0]), requested=requested)


@pytest.fixture
def live(tmp_path: Path):
    harness = LiveAgentctl(tmp_path)
    yield harness
    harness.close()


def check(outcome: Outcome, params: Any) -> None:
    """Declined at once with nothing announced, or announced with valid questions and then skipped."""
    answer = outcome.answer
    assert isinstance(answer.get("id"), int), answer
    assert answer.get("jsonrpc") == "2.0", answer
    assert answer.get("result") == {"action": "decline"}, answer
    requested = outcome.requested
    if requested is None:
        return
    keys = property_keys(params)
    assert keys is not None, "announced a form whose properties are not an object"
    assert requested["session_id"] == SESSION
    questions = requested["questions"]
    assert isinstance(questions, list)
    assert questions
    ids = [question["id"] for question in questions]
    assert len(ids) == len(set(ids))
    for question in questions:
        assert isinstance(question["id"], str), question["id"]
        assert question["id"] in keys, question["id"]
        assert question["kind"] in {"single", "multi", "text"}
        assert isinstance(question["prompt"], str)
        assert question["prompt"]
        assert isinstance(question["options"], list)
        assert (question["kind"] == "text") == (question["options"] == [])
        option_ids = [option["id"] for option in question["options"]]
        assert all(isinstance(option_id, str) and option_id for option_id in option_ids)
        assert len(option_ids) == len(set(option_ids))
        assert all(isinstance(option["label"], str) and option["label"] for option in question["options"])
    size = len(json.dumps(requested, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
    assert size <= MAX_FRAME_BYTES, f"a {len(dump(params))}-byte request was announced in {size} bytes"


def assert_still_serves(live: LiveAgentctl) -> None:
    """A well-formed form is still announced and answered, and the list is empty afterwards."""
    outcome = live.ask(dump(COLOUR_FORM))
    assert outcome.requested is not None, "a well-formed form was not announced"
    assert [q["id"] for q in outcome.requested["questions"]] == ["question_0"]
    check(outcome, COLOUR_FORM)


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


# The tests ---------------------------------------------------------------------


def test_fuzzed_params_are_declined_or_announced_validly(live: LiveAgentctl) -> None:
    @FUZZ
    @given(any_params)
    def example(params: Any) -> None:
        raw = dump(params)
        assume(len(raw) < 900_000)
        o = live.ask(raw)
        print("EX1", len(raw), o.requested is not None, repr(raw[:150]))
        check(o, params)

    example()
    assert_still_serves(live)


def test_fuzzed_forms_that_map_are_announced_validly(live: LiveAgentctl) -> None:
    """The same, with the envelope always right, so the examples reach the property rules."""
    well_enveloped = st.fixed_dictionaries(
        {
            "mode": st.just("form"),
            "sessionId": st.just(SESSION),
            "requestedSchema": st.fixed_dictionaries({"type": st.just("object"), "properties": properties}),
        },
        optional={"message": st.one_of(texts, scalars), "toolCallId": st.sampled_from(["toolu_1", "", None])},
    )
    announced = []

    @FUZZ
    @given(well_enveloped)
    def example(params: Any) -> None:
        raw = dump(params)
        assume(len(raw) < 900_000)
        outcome = live.ask(raw)
        check(outcome, params)
        announced.append(outcome.requested is not None)
        print("EX", len(raw), outcome.requested is not None, repr(raw[:150]))
        print("EX", len(raw), outcome.requested is not None, repr(raw[:150]))

    example()
    # The strategy is meant to reach the mapping: some forms must have been announced.
    assert any(announced), "no fuzzed form was ever announced; the strategy no longer reaches the mapping"
    assert_still_serves(live)


@pytest.mark.parametrize(
    "params",
    [
        pytest.param(
            {
                "mode": "form",
                "sessionId": SESSION,
                "message": "\ud800",
                "requestedSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
            id="lone-surrogate-message",
        ),
        pytest.param(
            {
                "mode": "form",
                "sessionId": SESSION,
                "requestedSchema": {"type": "object", "properties": {"q\udfff": {"type": "string", "title": "x"}}},
            },
            id="lone-surrogate-key",
        ),
        pytest.param(
            {
                "mode": "form",
                "sessionId": SESSION,
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "q": {
                            "type": "string",
                            "oneOf": [{"const": "a\ud800", "title": "A"}, {"const": "b", "title": "B"}],
                        }
                    },
                },
            },
            id="lone-surrogate-const",
        ),
        pytest.param(
            {
                "mode": "form",
                "sessionId": SESSION,
                "message": "a\x00b",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"\x00": {"type": "string", "description": "\x00"}},
                },
            },
            id="null-bytes",
        ),
        pytest.param(
            {
                "mode": "form",
                "sessionId": SESSION,
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "__proto__": {"type": "string", "oneOf": [{"const": "__proto__", "title": "constructor"}]},
                        "constructor": {"type": "string"},
                    },
                },
            },
            id="proto-keys",
        ),
        pytest.param(
            {
                "mode": "form",
                "sessionId": SESSION,
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "0": {"type": "string"},
                        "10": {"type": "string"},
                        "2": {"type": "string"},
                        "-1": {"type": "string"},
                    },
                },
            },
            id="numeric-keys",
        ),
        pytest.param(
            {
                "mode": "form",
                "sessionId": SESSION,
                "requestedSchema": {
                    "type": "object",
                    "properties": {"q": {"type": "string", "title": Deep(900, "object")}, "r": {"type": "string"}},
                },
            },
            id="deep-but-parseable",
        ),
    ],
)
def test_hostile_but_parseable_forms(live: LiveAgentctl, params: dict[str, Any]) -> None:
    check(live.ask(dump(params)), params)
    assert_still_serves(live)


def test_params_over_one_mebibyte_are_declined(live: LiveAgentctl) -> None:
    params = {
        "mode": "form",
        "sessionId": SESSION,
        "message": "x" * (MAX_FRAME_BYTES + 1024),
        "requestedSchema": {"type": "object", "properties": {"q": {"type": "string", "oneOf": [{"const": "a"}]}}},
    }
    outcome = live.ask(dump(params))
    assert outcome.requested is None
    check(outcome, params)
    assert_still_serves(live)


def test_many_large_options_over_one_mebibyte_are_declined(live: LiveAgentctl) -> None:
    options = [{"const": f"o{i}", "title": "t" * 4_100} for i in range(256)]
    params = {
        "mode": "form",
        "sessionId": SESSION,
        "requestedSchema": {"type": "object", "properties": {"q": {"type": "string", "oneOf": options}}},
    }
    assert len(dump(params)) > MAX_FRAME_BYTES
    outcome = live.ask(dump(params))
    assert outcome.requested is None
    check(outcome, params)
    assert_still_serves(live)


def test_params_under_the_limit_never_announce_more_than_a_frame(live: LiveAgentctl) -> None:
    """The request message is every description-less question's prompt: 64 questions
    under a long message must not turn < 1 MiB of params into an announcement
    bigger than the stream's frame limit (which a stream client may refuse,
    dropping the connection to the agent)."""
    params = {
        "mode": "form",
        "sessionId": SESSION,
        "message": "m" * 200_000,
        "requestedSchema": {"type": "object", "properties": {f"q{i}": {"type": "string"} for i in range(64)}},
    }
    assert len(dump(params)) < MAX_FRAME_BYTES
    outcome = live.ask(dump(params))
    check(outcome, params)  # which bounds the announcement's size
    assert_still_serves(live)


def test_nesting_too_deep_to_parse_leaves_agentctl_serving(live: LiveAgentctl) -> None:
    """Nesting beyond what Python's JSON parser takes: agentctl cannot read the
    request (so cannot answer it), but must keep reading the agent's next lines."""
    for kind in ("list", "object"):
        params = {
            "mode": "form",
            "sessionId": SESSION,
            "requestedSchema": {
                "type": "object",
                "properties": {"q": {"type": "string", "title": Deep(100_000, kind)}},
            },
        }
        outcome = live.ask(dump(params), wait=False)
        assert "sent" in outcome.answer
        assert_still_serves(live)
