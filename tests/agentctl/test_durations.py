"""Duration parsing and the F13a rule: the answer timeout must be shorter than the idle timeout."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.durations import (
    ANSWER_TIMEOUT_VAR,
    IDLE_TIMEOUT_VAR,
    UNHELD_TIMEOUT_VAR,
    DurationError,
    Timeouts,
    format_duration,
    load_timeouts,
    parse_duration,
)

UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("55m", 3300), ("1h", 3600), ("3300", 3300), (" 2H ", 7200), ("007m", 420)],
)
def test_parses_the_documented_forms(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "s", "h1", "1.5h", "-5s", "+5s", "1d", "1h30m", "5 m", "ten", "0", "0s", "٣s"])
def test_refuses_anything_else_with_a_message_naming_the_value(text: str) -> None:
    with pytest.raises(DurationError, match=r"duration|timeout"):
        parse_duration(text)


def test_refuses_a_duration_too_long_to_represent() -> None:
    with pytest.raises(DurationError, match="too long"):
        parse_duration("99999999999999999h")


@given(st.integers(min_value=1, max_value=10**9), st.sampled_from(sorted(UNIT_SECONDS)))
def test_property_a_number_and_unit_mean_number_times_unit(amount: int, unit: str) -> None:
    assert parse_duration(f"{amount}{unit}") == timedelta(seconds=amount * UNIT_SECONDS[unit])


@given(st.text())
def test_property_any_text_is_a_positive_duration_or_a_duration_error(text: str) -> None:
    try:
        duration = parse_duration(text)
    except DurationError:
        return
    assert duration > timedelta(0)


@given(st.integers(min_value=1, max_value=10**9))
def test_property_formatting_round_trips(seconds: int) -> None:
    duration = timedelta(seconds=seconds)
    assert parse_duration(format_duration(duration)) == duration


def test_defaults_are_55_minutes_to_answer_and_an_hour_idle() -> None:
    assert load_timeouts({}) == Timeouts(answer=timedelta(minutes=55), idle=timedelta(hours=1))


def test_empty_values_mean_the_defaults() -> None:
    assert load_timeouts({ANSWER_TIMEOUT_VAR: "", IDLE_TIMEOUT_VAR: ""}) == load_timeouts({})


def test_reads_both_variables() -> None:
    timeouts = load_timeouts({ANSWER_TIMEOUT_VAR: "90s", IDLE_TIMEOUT_VAR: "2m"})
    assert timeouts == Timeouts(answer=timedelta(seconds=90), idle=timedelta(minutes=2))


@pytest.mark.parametrize(("answer", "idle"), [("1h", "1h"), ("3600", "60m"), ("2h", "1h"), ("90s", "")])
def test_F13a_refuses_an_answer_timeout_that_is_not_shorter_than_the_idle_timeout(answer: str, idle: str) -> None:
    environ = {ANSWER_TIMEOUT_VAR: answer, IDLE_TIMEOUT_VAR: idle or "90s"}
    with pytest.raises(DurationError) as refused:
        load_timeouts(environ)
    assert ANSWER_TIMEOUT_VAR in str(refused.value)
    assert IDLE_TIMEOUT_VAR in str(refused.value)
    assert "must be shorter" in str(refused.value)


def test_an_unheld_agentctl_waits_ten_minutes_unless_told_otherwise() -> None:
    assert load_timeouts({}).unheld == timedelta(minutes=10)
    assert load_timeouts({UNHELD_TIMEOUT_VAR: "2s"}).unheld == timedelta(seconds=2)
    assert load_timeouts({UNHELD_TIMEOUT_VAR: ""}).unheld == timedelta(minutes=10)


def test_a_bad_value_is_reported_with_its_variable() -> None:
    with pytest.raises(DurationError, match=f"^{IDLE_TIMEOUT_VAR}: 'soon' is not a duration"):
        load_timeouts({IDLE_TIMEOUT_VAR: "soon"})
