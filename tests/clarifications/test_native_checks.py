"""The browser's own checks of a typed form: never stricter than agentctl, codes and sentences from one catalogue.

The browser's side of these rules (that it compiles and matches the patterns
written here as RE2 does) is e2e/test_typed_forms.py's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import re2
from hypothesis import assume, example, given
from hypothesis import strategies as st

from kandev_web.agentctl.elicitation.answers import ProblemCode, validate_answers
from kandev_web.agentctl.elicitation.constraints import Violation, compile_pattern
from kandev_web.agentctl.elicitation.mapping import map_elicitation
from kandev_web.agentctl.elicitation.types import MappedForm
from kandev_web.clarifications import problems
from kandev_web.clarifications.native_checks import client_problems, html_pattern, number_attributes, text_attributes
from kandev_web.clarifications.overlay_model import bundle_view

ROOT = Path(__file__).resolve().parents[2]


def client_codes_in_the_script() -> set[str]:
    """The problem codes clarification.js yields: it writes each as a snake_case literal, and nothing else so."""
    script = (ROOT / "static/js/clarification.js").read_text()
    return set(re.findall(r'"([a-z]+(?:_[a-z]+)+)"', script))


def test_every_code_the_page_can_yield_is_agentctls_and_has_a_sentence_in_the_catalogue():
    codes = client_codes_in_the_script()
    assert codes >= {"required_unanswered", "pattern_mismatch", "too_few_items", "text_too_long"}
    assert codes <= {code.value for code in ProblemCode}
    assert codes <= set(problems._templates())
    # agentctl's constraint checks report these same codes.
    assert {violation.value for violation in Violation} <= codes


@pytest.mark.parametrize(
    ("pattern", "html"),
    [
        ("^[a-z-]+$", r"[\s\S]*(?:^[a-z\-]+$)[\s\S]*"),
        ("a.c", r"[\s\S]*(?:a[^\n]c)[\s\S]*"),
        (r"^\d{3}(?:-\d{4})?$", r"[\s\S]*(?:^\d{3}(?:-\d{4})?$)[\s\S]*"),
        ("[]a]", r"[\s\S]*(?:[\]a])[\s\S]*"),
        ("[^.|&&(]", r"[\s\S]*(?:[^\.\|\&\&\(])[\s\S]*"),
        (r"[\x41-\x5a_]", r"[\s\S]*(?:[\x41-\x5a_])[\s\S]*"),
    ],
)
def test_a_pattern_is_searched_and_written_for_the_v_flag(pattern, html):
    assert html_pattern(pattern) == html


@pytest.mark.parametrize(
    "pattern",
    # Read differently by RE2 and the browser: Unicode white space, property tables, POSIX classes, flags, '\d-'.
    [r"^\S+$", r"\s", r"a\B", r"\p{L}", r"[\pL]", "[[:alpha:]]", "(?i)abc", "(?s:.)", r"[\d-z]", "a\\"],
)
def test_a_pattern_the_browser_would_read_otherwise_is_left_to_agentctl(pattern):
    assert html_pattern(pattern) is None
    question = {"id": "q", "kind": "text", "accepts_text": True, "constraints": {"pattern": pattern}}
    assert "pattern_mismatch" not in dict(client_problems(question, typed=True))
    assert "pattern" not in dict(text_attributes(question["constraints"]))


PIECES = ["a", "b", "-", "]", "[", "^", "$", ".", "*", "+", "?", "(", ")", "(?:", "|", "{2}"]
PIECES += ["\\d", "\\w", "\\.", "\\b", "&&"]
TEXTS = st.text(alphabet="ab-]^.0_\n\r \u00a0\u2028é😀", max_size=8)


@given(pattern=st.lists(st.sampled_from(PIECES), max_size=10).map("".join), texts=st.lists(TEXTS, max_size=10))
@example(pattern="^[a-z-]+$", texts=["web-api", "Web API", " web-api", "a\rb"])
@example(pattern="a.b", texts=["a\rb", "a\nb", "a\u2028b", "xa😀by"])
def test_the_written_pattern_matches_what_re2_searches(pattern, texts):
    """On RE2 itself, the anchored, escaped pattern finds what the agent's pattern finds by search."""
    original = compile_pattern(pattern)
    html = html_pattern(pattern)
    assume(original is not None and html is not None)
    written = re2.compile(f"^(?:{html})$")
    for text in texts:
        assert (written.search(text) is not None) == (original.search(text) is not None), text


@given(
    low=st.none() | st.integers(-50, 50) | st.floats(-50, 50, allow_nan=False),
    high=st.none() | st.integers(-50, 50) | st.floats(-50, 50, allow_nan=False),
    value=st.integers(-60, 60),
)
def test_an_integers_bounds_are_rounded_inwards_to_the_same_integers(low, high, value):
    constraints = {key: bound for key, bound in (("minimum", low), ("maximum", high)) if bound is not None}
    attributes = dict(number_attributes("integer", constraints))
    # Whole numbers, so step=1 counts from one, and the same integers in and out.
    assert all(re.fullmatch(r"-?\d+", bound) for bound in attributes.values())
    fits_agentctl = (low is None or value >= low) and (high is None or value <= high)
    fits_browser = ("min" not in attributes or value >= int(attributes["min"])) and (
        "max" not in attributes or value <= int(attributes["max"])
    )
    assert fits_agentctl == fits_browser


def test_a_bound_is_written_as_html_reads_it_in_any_language():
    assert number_attributes("number", {"minimum": 0.5, "maximum": 1e-07}) == (("min", "0.5"), ("max", "1e-07"))


def test_minlength_is_native_and_maxlength_is_not():
    attributes = dict(text_attributes({"minLength": 3, "maxLength": 12}))
    assert attributes == {"minlength": "3"}


SCHEMAS = {
    "Replicas": {"type": "integer", "minimum": 1, "maximum": 5},
    "Ratio": {"type": "number", "minimum": 0, "maximum": 1},
    "Service": {"type": "string", "minLength": 3, "maxLength": 12, "pattern": "^[a-z-]+$"},
    "Contact": {"type": "string", "format": "email"},
    "Day": {"type": "string", "format": "date"},
    "Window": {"type": "string", "format": "date-time"},
    "Regions": {
        "type": "array",
        "items": {"type": "string", "enum": ["eu", "us", "ap"]},
        "minItems": 1,
        "maxItems": 2,
    },
}


def form_of(title: str) -> MappedForm:
    mapped = map_elicitation(
        {
            "mode": "form",
            "sessionId": "s",
            "message": "",
            "requestedSchema": {
                "type": "object",
                "properties": {"q": {"title": title, **SCHEMAS[title]}},
                "required": ["q"],
            },
        }
    )
    assert isinstance(mapped, MappedForm), mapped
    return mapped


@pytest.mark.parametrize(
    ("title", "answer", "code"),
    [
        ("Replicas", {"value": 0}, "below_minimum"),
        ("Replicas", {"value": 9}, "above_maximum"),
        ("Replicas", {"value": 2.5}, "not_an_integer"),
        ("Replicas", {"value": "01"}, "wrong_type"),
        ("Ratio", {"value": 1.5}, "above_maximum"),
        ("Ratio", {"value": ".5"}, "wrong_type"),
        ("Service", {"value": "ab"}, "too_short"),
        ("Service", {"value": "a" * 13}, "too_long"),
        ("Service", {"value": "Web API"}, "pattern_mismatch"),
        ("Service", {"value": "x" * 10_001}, "text_too_long"),
        ("Contact", {"value": "ops at example"}, "format_mismatch"),
        ("Day", {"value": "2026-02-30"}, "format_mismatch"),
        ("Window", {"value": "2026-12-24T10:30"}, "format_mismatch"),
        ("Regions", {"selected_options": ["eu", "us", "ap"]}, "too_many_items"),
        ("Regions", {}, "required_unanswered"),
    ],
)
def test_the_page_says_what_agentctl_would_say_for_the_same_fault(title, answer, code):
    form = form_of(title)
    entries = [{"question_id": "q", **answer}] if answer else []
    refused = validate_answers(form, entries)
    assert [problem.code.value for problem in refused][:1] == [code]
    (question,) = form.questions
    (view,) = bundle_view("p", "elicitation", [question.to_wire()]).questions
    sentences = dict(view.problems)
    # The page's sentence for the code is the one the operator reads when agentctl refuses.
    told = problems.explain([problem.to_wire() for problem in refused], [question.to_wire()])[0].sentence
    assert sentences[code] == told


def test_a_url_the_browser_calls_malformed_is_left_to_agentctl():
    (question,) = form_of("Contact").questions
    wire = {**question.to_wire(), "constraints": {"format": "uri"}}
    assert "format_mismatch" not in dict(client_problems(wire, typed=True))


QUESTIONS = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=5),
        "kind": st.sampled_from(["text", "number", "integer", "multi", "single", "boolean"]),
        "required": st.booleans(),
        "accepts_text": st.booleans(),
        "constraints": st.fixed_dictionaries(
            {},
            optional={
                "minLength": st.integers(0, 20),
                "maxLength": st.integers(0, 20),
                "pattern": st.text(max_size=10),
                "format": st.sampled_from(["email", "uri", "date", "date-time"]),
                "minimum": st.integers(-9, 9) | st.floats(-9, 9, allow_nan=False),
                "maximum": st.integers(-9, 9) | st.floats(-9, 9, allow_nan=False),
                "minItems": st.integers(0, 3),
                "maxItems": st.integers(0, 3),
            },
        ),
    }
)


@given(question=QUESTIONS)
def test_every_problem_the_page_may_find_is_worded_from_the_catalogue(question):
    (view,) = bundle_view("p", "elicitation", [question]).questions
    for code, sentence in view.problems:
        assert code in set(problems._templates())
        assert code in {c.value for c in ProblemCode}
        assert sentence
        assert sentence != "The agent refused your answer."
    assert dict(view.problem_data).keys() == {f"problem-{code.replace('_', '-')}" for code, _ in view.problems}
    # A path that does not check says nothing before sending.
    (asked,) = bundle_view("p", "ask_user_question", [question]).questions
    assert asked.problems == ()


@given(pattern=st.text(max_size=30))
def test_any_pattern_is_written_or_left_to_agentctl(pattern):
    written = html_pattern(pattern)
    assert written is None or (written.startswith("[\\s\\S]*(?:") and written.endswith(")[\\s\\S]*"))
