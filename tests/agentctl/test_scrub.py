"""agentctl masks the profile's secrets in everything it says (docs/decisions/operator.md#secrets-at-rest)."""

import logging

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl.scrub import MASK, MIN_LENGTH, SECRET_NAMES_VAR, Scrubber, ScrubbingFormatter

KEY = "sk-ant-api03-0123456789abcdef"


def test_values_of_the_named_variables_are_masked_others_are_not():
    scrubber = Scrubber.from_environment(
        {SECRET_NAMES_VAR: "ANTHROPIC_API_KEY, MISSING_TOKEN", "ANTHROPIC_API_KEY": KEY, "HOME": "/home/agent"}
    )
    assert scrubber.text(f"auth failed for {KEY} in /home/agent") == f"auth failed for {MASK} in /home/agent"


def test_a_secret_holding_another_is_masked_whole():
    scrubber = Scrubber(["abcdef", "abcdef-longer-secret"])
    assert scrubber.text("x abcdef-longer-secret y abcdef") == f"x {MASK} y {MASK}"


def test_short_values_are_not_masked():
    assert Scrubber(["a" * (MIN_LENGTH - 1)]).text("aaaaa banana") == "aaaaa banana"
    assert not Scrubber(["short"])
    assert not Scrubber.from_environment({})


def test_json_payloads_are_masked_in_every_string_keys_included():
    payload = {"update": {"content": [{"text": f"my key is {KEY}"}], KEY: 3, "n": 1, "ok": True, "none": None}}
    assert Scrubber([KEY]).value(payload) == {
        "update": {"content": [{"text": f"my key is {MASK}"}], MASK: 3, "n": 1, "ok": True, "none": None}
    }


@given(secret=st.text(min_size=MIN_LENGTH, max_size=60), before=st.text(max_size=40), after=st.text(max_size=40))
def test_no_occurrence_survives(secret, before, after):
    scrubbed = Scrubber([secret]).text(before + secret + after + secret)
    assert secret not in scrubbed.replace(MASK, "\0")


def test_the_log_formatter_masks_messages_and_tracebacks():
    formatter = ScrubbingFormatter("%(message)s", Scrubber([KEY]))
    try:
        raise ValueError(f"bad key {KEY}")
    except ValueError as error:
        failure = (type(error), error, error.__traceback__)
        record = logging.LogRecord("agentctl", logging.ERROR, __file__, 1, "agent said %s", (KEY,), failure)
    line = formatter.format(record)
    assert KEY not in line
    assert f"agent said {MASK}" in line
    assert f"bad key {MASK}" in line


def test_the_scrubber_never_shows_its_secrets():
    assert KEY not in repr(Scrubber([KEY]))
