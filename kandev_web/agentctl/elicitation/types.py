"""Value types shared by the elicitation mapping, answer checking and response building.

Everything here is frozen: a mapped form is held by a pending elicitation for up to
an hour and read by concurrent responders, so nothing may mutate it after mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from kandev_web.agentctl.elicitation.constraints import NO_CONSTRAINTS, Constraints

QuestionKind = Literal["single", "multi", "text", "boolean", "number", "integer"]
"""`single` is mapping rule 1, `multi` rule 2, `text` rule 4 or an empty enum (D10),
`boolean` rule 4b, `number` and `integer` rule 4c."""

#: A typed answer's value: a boolean, a number, or (a `text` question) a string.
Value = bool | int | float | str

#: An answer's `content` entry: a const, a list of consts, text, a boolean or a number.
ContentValue = str | list[str] | bool | int | float

#: How the agent takes the answer: `async` means it has not stopped to wait for it.
Delivery = Literal["async"]


@dataclass(frozen=True, slots=True)
class Option:
    """One enum entry. `id` is the schema's `const`, verbatim: it is what goes on the wire."""

    id: str
    label: str
    description: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, "label": self.label, "description": self.description}


@dataclass(frozen=True, slots=True)
class Question:
    """A question the operator answers.

    `id` is the verbatim `requestedSchema.properties` key, so an answer addresses the
    content key directly and never through a lookup that could drift. `companion_key`
    is the verbatim key of the free-text companion property (D2), kept here and never
    sent to the browser. `sensitive` marks a key or title that looks like a credential,
    which ACP and MCP forbid asking for in a form; the question is still shown, with a
    warning, because refusing it would break MCP forwarding (AC-04a).
    """

    id: str
    title: str | None
    prompt: str
    kind: QuestionKind
    options: tuple[Option, ...]
    companion_key: str | None
    sensitive: bool
    #: The schema's `required` names this property: an accepted answer must give it a value.
    required: bool = False
    #: The schema's `default`, already checked against the question; None when it has
    #: none (or one that does not fit). A multi-select's is a tuple of consts.
    default: ContentValue | tuple[str, ...] | None = None
    constraints: Constraints = NO_CONSTRAINTS
    #: The companion is Codex's note (`_meta.codex.role: "user_note"`): typed text is sent
    #: *beside* the pick, which Codex adds to, instead of replacing it as the Claude
    #: bridge's custom answer does (`docs/decisions/mapping.md#codex-forms`).
    note: bool = False
    #: The const of Codex's "None of the above" option (`_meta.codex.isOther`): picked,
    #: it says the note is the answer; sent for a note typed with no pick.
    other_option: str | None = None

    @property
    def accepts_text(self) -> bool:
        """Derived rather than stored so it can never disagree with where text is written."""
        return self.companion_key is not None or self.kind == "text"

    @property
    def label(self) -> str:
        """How a problem names the question: its title, else its key."""
        return self.title or self.id

    def to_wire(self) -> dict[str, object]:
        """The `elicitation.requested` entry (`docs/agent-stream.md#elicitationrequested`).

        `sensitive` is an addition to the contract's shape: the browser needs it to
        show the warning and a password-style input, and only agentctl has the rule.
        `required`, `default` and `constraints` (typed forms), `note` and `other_option`
        (Codex) are additions too, sent only when they say something, so a form without
        them is announced as before.
        """
        wire: dict[str, object] = {
            "id": self.id,
            "title": self.title,
            "prompt": self.prompt,
            "kind": self.kind,
            "accepts_text": self.accepts_text,
            "sensitive": self.sensitive,
            "options": [option.to_wire() for option in self.options],
        }
        if self.required:
            wire["required"] = True
        if self.note:
            wire["note"] = True
        if self.other_option is not None:
            wire["other_option"] = self.other_option
        if self.default is not None:
            wire["default"] = list(self.default) if isinstance(self.default, tuple) else self.default
        constraints = self.constraints.to_wire()
        if constraints:
            wire["constraints"] = constraints
        return wire


@dataclass(frozen=True, slots=True)
class MappedForm:
    """An `elicitation/create` that maps to at least one question, in D1 order."""

    session_id: str
    tool_call_id: str | None
    message: str
    questions: tuple[Question, ...]
    #: The schema's own `title` and `description`, shown above the form.
    title: str | None = None
    description: str | None = None
    #: `"async"` when the agent goes on without waiting for the answer (Codex's
    #: `request_user_input_async`, `_meta.codex.delivery`); None for a blocking form.
    delivery: Delivery | None = None

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.id == question_id), None)

    def wire_questions(self) -> list[dict[str, object]]:
        return [question.to_wire() for question in self.questions]

    def wire_heading(self) -> dict[str, str]:
        """`form_title` / `form_description` of the announcement, when the schema has them."""
        heading = {"form_title": self.title, "form_description": self.description}
        return {key: value for key, value in heading.items() if value is not None}


class DeclineReason(StrEnum):
    """Why a request was declined without reaching the operator.

    For logs only. A reason never carries question text, which may hold a secret.
    """

    NOT_AN_OBJECT = "not_an_object"
    TOO_LARGE = "too_large"
    UNSUPPORTED_MODE = "unsupported_mode"
    MISSING_SESSION_ID = "missing_session_id"
    REQUEST_SCOPED = "request_scoped"
    BOTH_SCOPES = "both_scopes"
    MALFORMED_REQUEST = "malformed_request"
    MALFORMED_SCHEMA = "malformed_schema"
    TOO_MANY_PROPERTIES = "too_many_properties"
    TOO_MANY_OPTIONS = "too_many_options"
    NO_QUESTIONS = "no_questions"
    UNSTORABLE_ID = "unstorable_id"
    UNRECOGNISED_REQUIRED = "unrecognised_required"


@dataclass(frozen=True, slots=True)
class Decline:
    """The mapping's verdict that the request is answered `decline` at once."""

    reason: DeclineReason


@dataclass(frozen=True, slots=True)
class Answer:
    """The operator's answer to one question, as `agent.elicitations.respond` carries it.

    `selected_options` holds consts. `custom_text` is kept as typed; trimming happens
    when the response is built, because that is where whitespace-only means "no text".
    `value` is a typed question's answer (a boolean, a number; for a `text` question a
    string, the same as `custom_text`); None when the entry carries none.
    """

    question_id: str
    selected_options: tuple[str, ...] = ()
    custom_text: str = ""
    value: Value | None = None
