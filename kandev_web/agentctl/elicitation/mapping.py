"""`elicitation/create` params -> the questions the operator answers, or a decline.

The rules (`docs/decisions/mapping.md#mapping-rules`), tried per property in this order,
first match wins:

1.  `{type: "string", oneOf: [...]}`                 -> single-select
1b. `{type: "string", enum: [...]}` (MCP, extension)  -> single-select, labels from
    `enumNames` when it has the same length
2.  `{type: "array", items: {anyOf: [...]}}`          -> multi-select
2b. `{type: "array", items: {enum: [...]}}` (MCP)     -> multi-select
3.  `{type: "string"}` carrying `_meta._askUserQuestionCustomAnswer.questionId`
                                                      -> companion of that question
3b. `{type: "string", title: "Other"}` keyed `<k>_custom` where `<k>` is a property
    of the same schema (bridge >= 0.82 drops the marker) -> companion of `<k>`
3c. `{type: "string"}` carrying `_meta.codex.role: "user_note"` and `questionId`
    (Codex)                                           -> the note companion of that question
4.  `{type: "string"}`, with `minLength`, `maxLength`, `pattern`, `format`
                                                      -> free-text question, no options
4b. `{type: "boolean"}`                               -> yes/no question
4c. `{type: "number" | "integer"}`, with `minimum`, `maximum`
                                                      -> number / integer question
5.  anything else (objects, null, nested arrays, malformed enums or constraints,
    a pattern RE2 cannot bound)                       -> ignored

An enum list is recognised only when every entry is well formed and no const repeats
(otherwise the property falls to rule 5); an empty list makes a zero-option free-text
question (D10). Multi-selects carry `minItems`/`maxItems`. A constraint that cannot
be read or honoured fails the property closed (rule 5). A `default` that fits its
question pre-fills the overlay; one that does not is dropped. The schema's
`required` marks questions; a required property that is no question declines the
form, since no answer could satisfy the schema. Companions are resolved before
ordering (D2): a marker beats a bare `_custom`, among equals the key first under D1
wins, and a companion naming no question is ignored. Questions are then put in D1
order.

Codex's forms (`docs/decisions/mapping.md#codex-forms`): a property carrying
`_meta.codex` (or any property of a schema carrying it) is a Codex question, asked by
its `title` with its `description` as the header; its note companion is added to the
pick rather than replacing it; `isOther` names the "None of the above" option that
says the note is the answer; `isSecret` makes it a credential question. The request's
`_meta.codex.delivery: "async"` marks a form the agent does not wait for.

Every shape the rules do not accept fails closed, as a `Decline` whose reason is for
logs and never quotes the request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace

from kandev_web.agentctl.elicitation.answers import MAX_TEXT_CHARS, answer_problems
from kandev_web.agentctl.elicitation.constraints import (
    NO_CONSTRAINTS,
    Constraints,
    Format,
    as_integer,
    compile_pattern,
    is_number,
)
from kandev_web.agentctl.elicitation.credentials import looks_like_credential
from kandev_web.agentctl.elicitation.ordering import D1Key, d1_key, d1_sorted
from kandev_web.agentctl.elicitation.types import (
    Answer,
    Decline,
    DeclineReason,
    Delivery,
    MappedForm,
    Option,
    Question,
    QuestionKind,
)
from kandev_web.storable import storable_text

MAX_PROPERTIES = 64
MAX_OPTIONS_PER_PROPERTY = 256
MAX_PARAMS_BYTES = 1 << 20

COMPANION_MARKER = "_askUserQuestionCustomAnswer"
MARKERLESS_COMPANION_SUFFIX = "_custom"
MARKERLESS_COMPANION_TITLE = "Other"

#: `_meta.codex`: where codex-acp marks its questions, notes and async forms.
CODEX_META = "codex"
CODEX_NOTE_ROLE = "user_note"
#: The option codex-acp appends to an `isOther` question (`USER_INPUT_OTHER_OPTION` in 2.6.0).
CODEX_OTHER_OPTION = "None of the above"
CODEX_ASYNC_DELIVERY = "async"


@dataclass(frozen=True, slots=True)
class _Draft:
    """A property that becomes a question, before companions and ordering are known."""

    kind: QuestionKind
    options: tuple[Option, ...]
    title: str | None
    description: str | None
    constraints: Constraints = NO_CONSTRAINTS
    default: object = None
    #: Codex's question: asked by its title, headed by its description.
    codex: bool = False
    #: `_meta.codex.isOther`: it offers "None of the above", answered by the note.
    is_other: bool = False
    #: `_meta.codex.isSecret`: a credential, whatever its key or title say.
    secret: bool = False


class _Refused(Exception):
    """A constraint the mapping cannot read or honour: the property is rule 5."""


@dataclass(frozen=True, slots=True)
class _CompanionClaim:
    """A property that is some question's free-text companion, if that question exists."""

    target: str
    marked: bool
    #: Codex's note: added to the pick, never in its place.
    note: bool = False
    secret: bool = False


@dataclass(frozen=True, slots=True)
class _Envelope:
    session_id: str
    tool_call_id: str | None
    message: str
    properties: Mapping[str, object]
    required: frozenset[str]
    title: str | None
    description: str | None
    #: The schema itself carries `_meta.codex`: every property is a Codex question.
    codex: bool
    delivery: Delivery | None


def map_elicitation(params: object) -> MappedForm | Decline:
    """Map `elicitation/create` params, as decoded from JSON, to a form or a decline."""
    envelope = _read_envelope(params)
    if isinstance(envelope, Decline):
        return envelope
    properties = envelope.properties
    if len(properties) > MAX_PROPERTIES:
        return Decline(DeclineReason.TOO_MANY_PROPERTIES)
    if any(_option_count(prop) > MAX_OPTIONS_PER_PROPERTY for prop in properties.values()):
        return Decline(DeclineReason.TOO_MANY_OPTIONS)

    drafts: dict[str, _Draft] = {}
    claims: dict[str, _CompanionClaim] = {}
    for key, prop in properties.items():
        verdict = _classify(key, prop, properties, codex=envelope.codex)
        if isinstance(verdict, _Draft):
            drafts[key] = verdict
        elif isinstance(verdict, _CompanionClaim):
            claims[key] = verdict
    if not drafts:
        return Decline(DeclineReason.NO_QUESTIONS)
    if not envelope.required <= drafts.keys():
        return Decline(DeclineReason.UNRECOGNISED_REQUIRED)

    companions = _resolve_companions(claims, drafts)
    message = envelope.message
    own_lines = _kimi_question_lines(message, properties)
    questions = tuple(
        _question(key, drafts[key], companions.get(key), claims, own_lines.get(key, message), key in envelope.required)
        for key in d1_sorted(drafts)
    )
    if not all(_round_trips(question) for question in questions):
        return Decline(DeclineReason.UNSTORABLE_ID)
    return MappedForm(
        session_id=envelope.session_id,
        tool_call_id=envelope.tool_call_id,
        message=envelope.message,
        questions=questions,
        title=envelope.title,
        description=envelope.description,
        delivery=envelope.delivery,
    )


def _codex_meta(holder: object) -> dict[str, object] | None:
    """A property's, schema's or request's `_meta.codex` object, or None."""
    meta = holder.get("_meta") if isinstance(holder, dict) else None
    codex = meta.get(CODEX_META) if isinstance(meta, dict) else None
    return codex if isinstance(codex, dict) else None


def _kimi_question_lines(message: str, properties: Mapping[str, object]) -> dict[str, str]:
    """Kimi Code's joined message split back into its questions: property key -> its own question.

    Kimi keys an AskUserQuestion form's properties ``q0``, ``q1``, … in the
    tool's order and sends the questions joined one a line as the form's
    ``message`` (docs/decisions/agents.md#kimi-code). Without this every card
    of a two-question form would show both questions as its prompt. Only
    that exact shape is split: two or more properties keyed ``q0`` onwards
    in order, and as many non-blank lines as properties (a question with a
    line break of its own keeps the whole message).
    """
    keys = list(properties)
    if len(keys) < 2 or keys != [f"q{index}" for index in range(len(keys))]:
        return {}
    lines = message.split("\n")
    if len(lines) != len(keys) or not all(line.strip() for line in lines):
        return {}
    return dict(zip(keys, lines, strict=True))


def _round_trips(question: Question) -> bool:
    """Whether the question's id and option ids come back from the web app as sent.

    The web app stores what it shows with U+FFFD for a NUL or a lone surrogate
    (``kandev_web/storable.py``), so an answer to an id holding one would name
    an id this form does not have: the form is declined instead, like every
    shape that cannot be answered.
    """
    ids = [question.id, *(option.id for option in question.options)]
    return all(storable_text(id_) == id_ for id_ in ids)


def _read_envelope(params: object) -> _Envelope | Decline:
    """Everything outside `properties`: mode, scope, size and the schema's frame."""
    if not isinstance(params, dict):
        return Decline(DeclineReason.NOT_AN_OBJECT)
    size = _serialized_size(params)
    if size is None:
        return Decline(DeclineReason.MALFORMED_REQUEST)
    if size > MAX_PARAMS_BYTES:
        return Decline(DeclineReason.TOO_LARGE)
    if params.get("mode") != "form":
        return Decline(DeclineReason.UNSUPPORTED_MODE)

    # A null scope field counts as absent, as it does for the ACP SDK's validator.
    session_id = params.get("sessionId")
    request_scoped = params.get("requestId") is not None
    if request_scoped:
        return Decline(DeclineReason.BOTH_SCOPES if session_id is not None else DeclineReason.REQUEST_SCOPED)
    if not isinstance(session_id, str) or not session_id:
        return Decline(DeclineReason.MISSING_SESSION_ID)

    tool_call_id = params.get("toolCallId")
    message = params.get("message", "")
    if not isinstance(tool_call_id, str | None) or not isinstance(message, str):
        return Decline(DeclineReason.MALFORMED_REQUEST)

    schema = params.get("requestedSchema")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return Decline(DeclineReason.MALFORMED_SCHEMA)
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(isinstance(key, str) for key in properties):
        return Decline(DeclineReason.MALFORMED_SCHEMA)
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(key, str) for key in required):
        return Decline(DeclineReason.MALFORMED_SCHEMA)

    codex = _codex_meta(params)
    return _Envelope(
        session_id=session_id,
        # The bridge omits an empty toolCallId; an empty one means the same thing.
        tool_call_id=tool_call_id or None,
        message=message,
        properties=properties,
        required=frozenset(required),
        title=_text(schema.get("title")),
        description=_text(schema.get("description")),
        codex=_codex_meta(schema) is not None,
        # Only Codex's own marker: anything else is a form the agent waits for, as ACP says.
        delivery="async" if codex is not None and codex.get("delivery") == CODEX_ASYNC_DELIVERY else None,
    )


def _serialized_size(params: dict[object, object]) -> int | None:
    """Compact UTF-8 JSON size, or None when params cannot be JSON at all."""
    try:
        text = json.dumps(params, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    return len(text.encode("utf-8", "surrogatepass"))


def _option_count(prop: object) -> int:
    """The longest enum-like list on a property, well formed or not, for the limit."""
    if not isinstance(prop, dict):
        return 0
    items = prop.get("items")
    candidates = [prop.get("oneOf"), prop.get("enum")]
    if isinstance(items, dict):
        candidates += [items.get("anyOf"), items.get("enum")]
    return max((len(c) for c in candidates if isinstance(c, list)), default=0)


def _classify(
    key: str, prop: object, properties: Mapping[str, object], *, codex: bool
) -> _Draft | _CompanionClaim | None:
    """Apply rules 1-5 to one property; None means ignored (rule 5)."""
    # An empty key can be neither named to the operator (it ends the prompt
    # chain) nor told apart in `content`, so it is no question.
    if not key or not isinstance(prop, dict):
        return None
    try:
        verdict = _apply_rules(key, prop, properties)
    except _Refused:
        return None
    if isinstance(verdict, _Draft):
        return _with_codex(verdict, _codex_meta(prop), codex_schema=codex)
    return verdict


def _with_codex(draft: _Draft, meta: dict[str, object] | None, *, codex_schema: bool) -> _Draft:
    """The draft as a Codex question when its property (or its schema) is marked `_meta.codex`."""
    if meta is None and not codex_schema:
        return draft
    meta = meta or {}
    return replace(draft, codex=True, is_other=meta.get("isOther") is True, secret=meta.get("isSecret") is True)


def _apply_rules(
    key: str, prop: dict[str, object], properties: Mapping[str, object]
) -> _Draft | _CompanionClaim | None:
    kind = prop.get("type")
    if kind == "string":
        if "oneOf" in prop:
            return _draft(prop, "single", _titled_options(prop["oneOf"]))
        if "enum" in prop:
            return _draft(prop, "single", _untitled_options(prop["enum"], prop.get("enumNames")))
        if _is_marked_companion(prop):
            return _marked_claim(prop)
        target = _markerless_target(key, prop, properties)
        if target is not None:
            return _CompanionClaim(target, marked=False)
        return _draft(prop, "text", (), _string_constraints(prop))
    if kind == "array":
        items = prop.get("items")
        if isinstance(items, dict):
            if "anyOf" in items:
                return _draft(prop, "multi", _titled_options(items["anyOf"]), _item_constraints(prop))
            if "enum" in items:
                return _draft(prop, "multi", _untitled_options(items["enum"], None), _item_constraints(prop))
        return None
    if kind in ("boolean", "number", "integer"):
        # Choices among numbers or booleans are not a vocabulary MCP forms have.
        if any(name in prop for name in ("enum", "oneOf", "anyOf", "const")):
            return None
        constraints = NO_CONSTRAINTS if kind == "boolean" else _number_constraints(prop, integer=kind == "integer")
        return _draft(prop, kind, (), constraints)
    return None


def _is_marked_companion(prop: dict[str, object]) -> bool:
    """Rule 3's `_askUserQuestionCustomAnswer` marker, or rule 3c's Codex `role: "user_note"`."""
    codex = _codex_meta(prop)
    meta = prop.get("_meta")
    return (codex is not None and codex.get("role") == CODEX_NOTE_ROLE) or (
        isinstance(meta, dict) and COMPANION_MARKER in meta
    )


def _marked_claim(prop: dict[str, object]) -> _CompanionClaim | None:
    """The question a marked companion names; None when the marker names none.

    A property that carries a marker is never a question of its own, even when the
    marker is unreadable: it was meant as a companion. Codex's marker is read first:
    its note is added to the pick, which is what Codex folds back.
    """
    codex = _codex_meta(prop)
    if codex is not None and codex.get("role") == CODEX_NOTE_ROLE:
        target = codex.get("questionId")
        secret = codex.get("isSecret") is True
        return _CompanionClaim(target, marked=True, note=True, secret=secret) if isinstance(target, str) else None
    meta = prop.get("_meta")
    marker = meta.get(COMPANION_MARKER) if isinstance(meta, dict) else None
    target = marker.get("questionId") if isinstance(marker, dict) else None
    return _CompanionClaim(target, marked=True) if isinstance(target, str) else None


def _string_constraints(prop: dict[str, object]) -> Constraints:
    min_length, max_length = _count(prop, "minLength"), _count(prop, "maxLength")
    pattern, fmt = prop.get("pattern"), prop.get("format")
    if pattern is not None and (not isinstance(pattern, str) or compile_pattern(pattern) is None):
        raise _Refused  # a pattern that cannot run in bounded time
    if fmt is not None and fmt not in {f.value for f in Format}:
        raise _Refused
    _ordered(min_length, max_length)
    if min_length is not None and min_length > MAX_TEXT_CHARS:
        raise _Refused  # longer than any answer agentctl takes
    return Constraints(
        min_length=min_length,
        max_length=max_length,
        pattern=pattern,
        format=None if fmt is None else Format(fmt),
    )


def _item_constraints(prop: dict[str, object]) -> Constraints:
    min_items, max_items = _count(prop, "minItems"), _count(prop, "maxItems")
    _ordered(min_items, max_items)
    return Constraints(min_items=min_items, max_items=max_items)


def _number_constraints(prop: dict[str, object], *, integer: bool) -> Constraints:
    if any(name in prop for name in ("exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        raise _Refused  # limits the overlay does not show could refuse every answer
    minimum, maximum = _bound(prop, "minimum"), _bound(prop, "maximum")
    _ordered(minimum, maximum)
    if integer and minimum is not None and maximum is not None and int(maximum // 1) < minimum:
        raise _Refused  # no whole number between them (1.2 to 1.8)
    return Constraints(minimum=minimum, maximum=maximum)


def _bound(prop: dict[str, object], name: str) -> int | float | None:
    """A number constraint, or None when absent."""
    value = prop.get(name)
    if value is None or is_number(value):
        return value
    raise _Refused


def _count(prop: dict[str, object], name: str) -> int | None:
    """A non-negative integer constraint, or None when absent."""
    value = prop.get(name)
    if value is None:
        return None
    count = as_integer(value) if is_number(value) else None
    if count is None or count < 0:
        raise _Refused
    return count


def _ordered(low: int | float | None, high: int | float | None) -> None:
    if low is not None and high is not None and low > high:
        raise _Refused  # no answer could fit


def _markerless_target(key: str, prop: dict[str, object], properties: Mapping[str, object]) -> str | None:
    if prop.get("title") != MARKERLESS_COMPANION_TITLE or not key.endswith(MARKERLESS_COMPANION_SUFFIX):
        return None
    target = key[: -len(MARKERLESS_COMPANION_SUFFIX)]
    return target if target in properties else None


def _draft(
    prop: dict[str, object],
    kind: QuestionKind,
    options: tuple[Option, ...] | None,
    constraints: Constraints = NO_CONSTRAINTS,
) -> _Draft | None:
    """None for a malformed enum (rule 5); an empty enum is free text (D10)."""
    if options is None:
        return None
    if kind in ("single", "multi") and not options:
        kind, constraints = "text", NO_CONSTRAINTS
    if kind == "multi" and constraints.min_items is not None and constraints.min_items > len(options):
        return None  # more picks asked for than there are options
    return _Draft(
        kind=kind,
        options=options,
        title=_text(prop.get("title")),
        description=_text(prop.get("description")),
        constraints=constraints,
        default=prop.get("default"),
    )


def _titled_options(entries: object) -> tuple[Option, ...] | None:
    """`oneOf` / `anyOf` entries, or None when any entry is malformed or repeats a const.

    An empty const is malformed too: the wire never carries `""` as an answer.
    """
    if not isinstance(entries, list):
        return None
    options: list[Option] = []
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        const = entry.get("const")
        if not isinstance(const, str) or not const:
            return None
        options.append(
            Option(id=const, label=_text(entry.get("title")) or const, description=_text(entry.get("description")))
        )
    return _unique(options)


def _untitled_options(values: object, names: object) -> tuple[Option, ...] | None:
    """MCP `enum` values, labelled by `enumNames` only when it is a same-length string list."""
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        return None
    labels: list[object] = values
    if isinstance(names, list) and len(names) == len(values) and all(isinstance(n, str) for n in names):
        labels = names
    return _unique([Option(id=value, label=_text(label) or value) for value, label in zip(values, labels, strict=True)])


def _unique(options: list[Option]) -> tuple[Option, ...] | None:
    return tuple(options) if len({o.id for o in options}) == len(options) else None


def _resolve_companions(claims: Mapping[str, _CompanionClaim], drafts: Mapping[str, _Draft]) -> dict[str, str]:
    """Question key -> companion key (D2). Claims naming no question are dropped.

    So is a Codex note naming a question without options: Codex reads a note only
    beside options (it has no pick to add it to), so text written there would be lost.
    """
    best: dict[str, str] = {}
    for key, claim in claims.items():
        target = drafts.get(claim.target)
        if target is None or (claim.note and not target.options):
            continue
        current = best.get(claim.target)
        if current is None or _claim_rank(key, claim) < _claim_rank(current, claims[current]):
            best[claim.target] = key
    return best


def _claim_rank(key: str, claim: _CompanionClaim) -> tuple[bool, D1Key]:
    return (not claim.marked, d1_key(key))


def _question(
    key: str,
    draft: _Draft,
    companion_key: str | None,
    claims: Mapping[str, _CompanionClaim],
    message: str,
    required: bool,
) -> Question:
    """The prompt chain is description, then the request message, then title, then key.

    A Codex question's `title` is the question and its `description` the header
    (codex-acp writes `title: question.question, description: question.header`),
    so its chain starts with the title and the header is shown as its title.
    """
    if draft.codex:
        title = draft.description
        prompt = draft.title or draft.description or _text(message) or key
    else:
        title = draft.title
        prompt = draft.description or _text(message) or draft.title or key
    claim = claims[companion_key] if companion_key is not None else None
    note = claim is not None and claim.note
    # "None of the above" says the note is the answer, so it means something only beside a note.
    other = note and draft.is_other and any(option.id == CODEX_OTHER_OPTION for option in draft.options)
    question = Question(
        id=key,
        title=title,
        prompt=prompt,
        kind=draft.kind,
        options=draft.options,
        companion_key=companion_key,
        # A Codex secret is one whether the question or its note says so: both carry what is typed.
        sensitive=looks_like_credential(key, title) or draft.secret or (claim is not None and claim.secret),
        required=required,
        constraints=draft.constraints,
        note=note,
        other_option=CODEX_OTHER_OPTION if other else None,
    )
    return replace(question, default=_fitting_default(question, draft.default))


def _fitting_default(question: Question, default: object) -> str | tuple[str, ...] | bool | int | float | None:
    """The schema's default when it is an answer the question would take, as the control shows it; else None.

    It is checked as the operator's answer would be, so pre-filling the control and
    sending it unchanged can never be refused.
    """
    if default is None or question.sensitive:
        return None  # a secret is never pre-filled, nor shown back
    match question.kind:
        case "single" if isinstance(default, str):
            answer = Answer(question.id, selected_options=(default,))
        case "multi" if isinstance(default, list) and all(isinstance(d, str) for d in default) and default:
            answer = Answer(question.id, selected_options=tuple(default))
        case "text" if isinstance(default, str) and default.strip() == default and default:
            answer = Answer(question.id, custom_text=default)
        case "boolean" | "number" | "integer" if isinstance(default, bool | int | float):  # JSON's other kinds
            answer = Answer(question.id, value=default)
        case _:
            return None
    if answer_problems(question, answer, None):
        return None
    if question.kind == "multi":
        return tuple(o.id for o in question.options if o.id in set(answer.selected_options))
    if question.kind == "integer":
        assert isinstance(default, int | float)
        return as_integer(default)
    assert isinstance(default, str | bool | int | float)  # the answer it made passed
    return default


def _text(value: object) -> str | None:
    """A display string when the value is one with something visible in it."""
    return value if isinstance(value, str) and value.strip() else None
