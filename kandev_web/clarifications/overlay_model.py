"""The answer overlay's view-model: a pending bundle as the overlay draws it.

``templates/clarifications/overlay.html`` renders this and reads nothing else
of a question, so what each question looks like is decided here, once: which
control answers it (one template partial each), what it starts with, the
limits its field announces to the browser (``native_checks``), the hint said
before answering and the sentence for each problem the page may find.

The two question paths (Kandev's ``ask_user_question_kandev`` tool and ACP
elicitations) differ in how the overlay walks a bundle, not in what it draws.
That difference is the bundle's :class:`Flow`, chosen by :func:`flow_of` and
nowhere else; the template and ``static/js/clarification.js`` read its flags
(``data-*`` on the overlay) instead of asking where a question came from.

Pure: no database, no request, only gettext for the words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from django.utils.translation import gettext as _

from kandev_web import limits

from . import native_checks, problems


@dataclass(frozen=True, slots=True)
class Flow:
    """How the overlay walks a bundle (docs/decisions/answers.md#f3-validation-on-the-two-paths)."""

    #: A pick moves on to the next question, and a lone question's pick (or Enter) sends the answer.
    auto_advance: bool
    #: Submit waits until every question is answered.
    all_required: bool
    #: An empty Submit asks "Send without answers?" first: valid (accept {}, AC-12b), but easily a slip.
    confirm_empty: bool
    #: Typed text keeps the question's picks in the record (they only look deselected) rather than dropping them.
    keep_picks: bool
    #: Constraints are said as hints and checked before sending, each problem beside its question.
    checks: bool
    #: Every question takes typed text beside its options, not only those that say so.
    custom_text: bool
    #: An answer given after the agent moved on is still sent, as a new message (else it is kept as a record).
    follow_up: bool
    #: The longest typed answer the path takes.
    answer_chars: int


ASK_FLOW = Flow(
    auto_advance=True,
    all_required=True,
    confirm_empty=False,
    keep_picks=False,
    checks=False,
    custom_text=True,
    follow_up=True,
    answer_chars=limits.ASK_ANSWER_CHARS,
)
ELICITATION_FLOW = Flow(
    auto_advance=False,
    all_required=False,
    confirm_empty=True,
    keep_picks=True,
    checks=True,
    custom_text=False,
    follow_up=False,
    answer_chars=limits.ELICITATION_ANSWER_CHARS,
)


def flow_of(source: str) -> Flow:
    """The flow of a bundle from ``source`` (``Clarification.source``): the one fork between the two paths."""
    return ELICITATION_FLOW if source == "elicitation" else ASK_FLOW


class Control(StrEnum):
    """The field a typed answer goes into; each is a partial of the overlay template."""

    NUMBER = "number"
    #: A credential-looking question: a password field, never pre-filled.
    SECRET = "secret"  # noqa: S105 - the name of a control, not a password
    #: The browser's datetime-local control, which clarification.js turns into RFC 3339 with the operator's offset.
    DATETIME = "datetime"
    #: ``<input type="email|url|date">``, by the question's format.
    NATIVE = "native"
    TEXT = "text"


#: The native input a text question's format gets.
NATIVE_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}

#: A question's constraints (their schema names) as the data-* names its card carries for clarification.js.
CONSTRAINT_DATA = (
    ("minLength", "min-length"),
    ("maxLength", "max-length"),
    ("pattern", "pattern"),
    ("format", "format"),
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("minItems", "min-items"),
    ("maxItems", "max-items"),
)


@dataclass(frozen=True, slots=True)
class Option:
    id: str
    label: str
    description: str
    #: Picked by the form's default before the operator picks (never sent unless left in place).
    picked: bool


@dataclass(frozen=True, slots=True)
class Entry:
    """The field a question's answer is typed into."""

    control: Control
    #: What the field starts with (for a date-time, the RFC 3339 value sent).
    value: str
    label: str
    #: The label is for screen readers only: the options above say what the field is for.
    label_hidden: bool
    placeholder: str
    #: The field's ``required``: it alone answers a required question (beside options, a pick does).
    required: bool
    #: The ids of the hint and problem the field is described by, space-separated; "" for none.
    described_by: str
    #: The limits the field announces to the browser, as (HTML attribute, value) pairs (``native_checks``).
    attributes: tuple[tuple[str, str], ...]
    #: ``type`` of a native input, ``inputmode`` and ``step`` of a number.
    input_type: str = ""
    inputmode: str = ""
    step: str = ""


@dataclass(frozen=True, slots=True)
class QuestionView:
    id: str
    index: int
    #: The card's ``data-kind``: single, multi, text, boolean, number or integer.
    kind: str
    title: str
    prompt: str
    required: bool
    options: tuple[Option, ...]
    #: The option ids picked to begin with, in the order the hidden inputs carry them.
    picked: tuple[str, ...]
    entry: Entry | None
    #: What the answer must be, said before answering; "" when the flow says nothing or there is nothing to say.
    hint: str
    sensitive: bool
    #: The constraints, and whether typed text is a note beside the picks (Codex), as the
    #: card's data-* (name without ``data-``, value), for clarification.js.
    data: tuple[tuple[str, object], ...]
    #: ``<pending_id>-<index>``: the suffix of the ids of the question's prompt, field, hint and problem.
    dom_id: str
    #: What the page says of each problem it may find before sending, as (agentctl's problem code, sentence).
    problems: tuple[tuple[str, str], ...] = ()

    @property
    def multiple(self) -> bool:
        return self.kind == "multi"

    @property
    def problem_data(self) -> tuple[tuple[str, str], ...]:
        """The sentences as the problem slot's data-* (``problem-too-short``): clarification.js finds them by code."""
        return tuple((f"problem-{code.replace('_', '-')}", sentence) for code, sentence in self.problems)


@dataclass(frozen=True, slots=True)
class BundleView:
    pending_id: str
    source: str
    flow: Flow
    questions: tuple[QuestionView, ...]

    @property
    def total(self) -> int:
        return len(self.questions)

    @property
    def has_submit(self) -> bool:
        """A lone question that advances itself is sent by its pick; anything else needs a Submit button."""
        return self.total > 1 or not self.flow.auto_advance


def bundle_view(pending_id: str, source: str, questions: Sequence[Mapping]) -> BundleView:
    """The overlay's view of one pending bundle (``Clarification.pending_id``, ``source``, ``questions``)."""
    flow = flow_of(source)
    return BundleView(
        pending_id=pending_id,
        source=source,
        flow=flow,
        questions=tuple(question_view(q, i, pending_id=pending_id, flow=flow) for i, q in enumerate(questions)),
    )


def question_view(question: Mapping, index: int, *, pending_id: str, flow: Flow) -> QuestionView:
    """One question of a bundle, as its card shows it."""
    kind = question.get("kind") or "single"
    picked = tuple(default_options(question))
    dom_id = f"{pending_id}-{index}"
    constraints = question.get("constraints") or {}
    entry = _entry(question, kind, dom_id, flow)
    return QuestionView(
        id=question.get("id", ""),
        index=index,
        kind=kind,
        title=question.get("title") or "",
        prompt=question.get("prompt") or "",
        required=bool(question.get("required")),
        options=tuple(
            Option(
                id=option.get("id", ""),
                label=option.get("label", ""),
                description=option.get("description") or "",
                picked=option.get("id") in picked,
            )
            for option in choices(question)
        ),
        picked=picked,
        entry=entry,
        hint=constraint_hint(question) if flow.checks else "",
        sensitive=bool(question.get("sensitive")),
        data=tuple(
            (name, constraints[key])
            for key, name in CONSTRAINT_DATA
            # A pattern or format is said only when there is one; a limit of 0 is a limit.
            if (constraints.get(key) if key in ("pattern", "format") else constraints.get(key) is not None)
        )
        + note_data(question),
        dom_id=dom_id,
        problems=client_sentences(question, typed=entry is not None) if flow.checks else (),
    )


def note_data(question: Mapping) -> tuple[tuple[str, object], ...]:
    """Codex's note (docs/decisions/mapping.md#codex-forms): typed text goes beside the picks, not in their place.

    ``note`` keeps a pick when text is typed (and the text when a pick is made);
    ``other-option`` names the option that says the note is the answer, which
    agentctl sends for a note typed with no pick, so a required question is
    answered by the note alone.
    """
    if not question.get("note"):
        return ()
    other = question.get("other_option")
    return (("note", "true"),) + ((("other-option", other),) if isinstance(other, str) else ())


def client_sentences(question: Mapping, *, typed: bool) -> tuple[tuple[str, str], ...]:
    """Each problem the page may find in an answer to ``question``, with the sentence agentctl's gets (problems.py)."""
    return tuple(
        (code, problems.sentence_for(code, question, limit))
        for code, limit in native_checks.client_problems(question, typed=typed)
    )


def _entry(question: Mapping, kind: str, dom_id: str, flow: Flow) -> Entry | None:
    """The typed-answer field of a question, or ``None`` when it is answered by its options alone."""
    required = bool(question.get("required"))
    has_options = bool(question.get("options"))
    described_by = f"hint-{dom_id} problem-{dom_id}" if flow.checks else ""
    constraints = question.get("constraints") or {}
    if kind in ("number", "integer"):
        whole = kind == "integer"
        return Entry(
            control=Control.NUMBER,
            value=default_text(question),
            label=_("Your answer"),
            label_hidden=False,
            placeholder="",
            required=required,
            described_by=described_by,
            attributes=native_checks.number_attributes(kind, constraints),
            input_type="number",
            inputmode="numeric" if whole else "decimal",
            step="1" if whole else "any",
        )
    if not (flow.custom_text or question.get("accepts_text")):
        return None
    label = _("Your note") if question.get("note") else _("Your own answer") if has_options else _("Your answer")
    if not flow.checks:
        # Kandev's own limit, which the browser holds; a checked flow's lengths are counted in clarification.js.
        attributes: tuple[tuple[str, str], ...] = (("maxlength", str(flow.answer_chars)),)
    elif kind == "text":
        attributes = native_checks.text_attributes(constraints)
    else:
        attributes = ()  # companion text: the question's constraints bind its options, not the text
    native = input_type(question)
    if question.get("sensitive"):
        # Never pre-filled, and no hint to point at: what it asks is a secret's business.
        return Entry(
            Control.SECRET,
            "",
            label=label,
            label_hidden=has_options,
            placeholder="",
            required=required and not has_options,
            described_by="",
            attributes=attributes,
        )
    value = default_text(question)
    if native == "datetime-local":
        return Entry(
            Control.DATETIME,
            value,
            placeholder="",
            required=required,
            described_by=described_by,
            attributes=(),
            label=label,
            label_hidden=has_options,
        )
    if native:
        return Entry(
            Control.NATIVE,
            value,
            placeholder="",
            required=required,
            described_by=described_by,
            attributes=attributes,
            input_type=native,
            label=label,
            label_hidden=has_options,
        )
    if not has_options:
        placeholder = _("Type your answer")
    elif question.get("note"):
        # Codex adds the note to the pick; with "None of the above", or no pick, the note is the answer.
        if question.get("other_option"):
            placeholder = _("Add a note to your choice, or type your own answer")
        else:
            placeholder = _("Add a note to your choice")
    elif flow.custom_text:
        placeholder = _("Or type a custom answer…")  # offered beside every question's options
    else:
        placeholder = _("Or type your own answer")
    # Beside options the field is optional even on a required question: a pick answers it.
    return Entry(
        Control.TEXT,
        value,
        placeholder=placeholder,
        required=required and not has_options,
        described_by=described_by,
        # A text area has no pattern attribute: clarification.js checks this one as the browser checks an input's.
        attributes=tuple(("data-pattern" if name == "pattern" else name, value) for name, value in attributes),
        label=label,
        label_hidden=has_options,
    )


def choices(question: Mapping) -> list[Mapping]:
    """The option buttons a question shows: its options, or Yes and No for a boolean."""
    if question.get("kind") == "boolean":
        return [{"id": "true", "label": _("Yes")}, {"id": "false", "label": _("No")}]
    return question.get("options") or []


def default_options(question: Mapping) -> list[str]:
    """The option ids the form's default picks before the operator does (never sent unless left in place)."""
    default = question.get("default")
    if question.get("kind") == "boolean" and isinstance(default, bool):
        return ["true" if default else "false"]
    if question.get("kind") == "multi" and isinstance(default, list):
        return [d for d in default if isinstance(d, str)]
    if question.get("kind") == "single" and isinstance(default, str):
        return [default]
    return []


def default_text(question: Mapping) -> str:
    """What a text or number field starts with."""
    default = question.get("default")
    if question.get("kind") in ("text", "number", "integer") and not isinstance(default, bool | list | dict):
        return "" if default is None else str(default)
    return ""


def input_type(question: Mapping) -> str:
    """The native input a typed text question gets, by its format; "" for a text area."""
    fmt = (question.get("constraints") or {}).get("format")
    return NATIVE_TYPES.get(fmt, "") if isinstance(fmt, str) else ""


def constraint_hint(question: Mapping) -> str:
    """What a typed form's question asks of its answer, said before the operator answers.

    The same limits agentctl checks (docs/decisions/mapping.md#typed-forms), in words: a
    range, a length, a format, a number of picks. The pattern is the agent's text
    and is shown as it is (escaped by the template).
    """
    c = question.get("constraints") or {}
    kind = question.get("kind")
    parts: list[str] = []
    if kind == "integer":
        parts.append(_("A whole number"))
    elif kind == "number":
        parts.append(_("A number"))
    parts += _bounds(
        c.get("minimum"),
        c.get("maximum"),
        _("from %(low)s to %(high)s"),
        _("at least %(low)s"),
        _("at most %(high)s"),
    )
    if parts:
        parts = [" ".join(parts)]
    fmt = c.get("format")
    if fmt:
        parts.append(
            {
                "email": _("An e-mail address"),
                "uri": _("A URL"),
                "date": _("A date"),
                "date-time": _("A date and time"),
            }.get(fmt, fmt)
        )
    parts += _bounds(
        c.get("minLength"),
        c.get("maxLength"),
        _("%(low)s to %(high)s characters"),
        _("At least %(low)s characters"),
        _("At most %(high)s characters"),
    )
    parts += _bounds(
        c.get("minItems"),
        c.get("maxItems"),
        _("Choose %(low)s to %(high)s"),
        _("Choose at least %(low)s"),
        _("Choose at most %(high)s"),
    )
    if c.get("pattern"):
        parts.append(_("Matching %(pattern)s") % {"pattern": c["pattern"]})
    return " · ".join(parts)


def _bounds(low, high, between: str, at_least: str, at_most: str) -> list[str]:
    """A range in words: ``between`` both bounds, else the one given; ``[]`` for neither."""
    if low is not None and high is not None:
        return [between % {"low": low, "high": high}]
    if low is not None:
        return [at_least % {"low": low}]
    if high is not None:
        return [at_most % {"high": high}]
    return []
