"""Secrets at rest: round trips, key rotation, tampering, the credential rule.

The rule: docs/decisions/operator.md#secrets-at-rest.
"""

import pytest
from cryptography.fernet import Fernet
from hypothesis import given
from hypothesis import strategies as st

from kandev_web.secret_box import (
    SecretBox,
    SecretsKeyError,
    SecretUnreadable,
    derived_key,
    is_variable_name,
    looks_like_credential,
    parse_keys,
)
from kandev_web.storable import storable_text

OLD, NEW = Fernet.generate_key(), Fernet.generate_key()
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,40}", fullmatch=True)
# Any text at all, lone surrogates and NULs included, and the same made storable (what a form keeps).
VALUES = st.text(st.characters(codec=None, categories=None), max_size=300)


@given(name=NAMES, value=VALUES)
def test_a_sealed_value_opens_to_itself_and_never_shows_in_the_token(name, value):
    box = SecretBox([OLD])
    for text in (value, storable_text(value)):
        token = box.seal(text)
        assert box.open(name, token) == text
        if len(text) >= 4:
            assert text not in token


def test_each_seal_is_different_so_equal_secrets_do_not_show_as_equal():
    box = SecretBox([OLD])
    assert box.seal("sk-ant-same") != box.seal("sk-ant-same")


def test_a_new_key_first_still_opens_the_old_and_rotation_moves_every_secret_to_it():
    old_token = SecretBox([OLD]).seal("sk-ant-rotate-me")
    ring = SecretBox([NEW, OLD])
    assert ring.open("ANTHROPIC_API_KEY", old_token) == "sk-ant-rotate-me"
    rotated = ring.rotate("ANTHROPIC_API_KEY", old_token)
    assert SecretBox([NEW]).open("ANTHROPIC_API_KEY", rotated) == "sk-ant-rotate-me"
    # The old key dropped: what was not rotated no longer opens.
    with pytest.raises(SecretUnreadable):
        SecretBox([NEW]).open("ANTHROPIC_API_KEY", old_token)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda token: token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"),
        lambda token: token[:20] + token[21:],
        lambda token: "",
        lambda token: "not a token at all",
        lambda token: "ünïcode",
    ],
    ids=["altered", "shortened", "empty", "garbage", "non-ascii"],
)
def test_a_tampered_token_is_a_clear_error_naming_the_secret_never_a_crash(tamper):
    token = SecretBox([OLD]).seal("sk-ant-tamper-0123456789")
    with pytest.raises(SecretUnreadable) as unreadable:
        SecretBox([OLD]).open("OPENAI_API_KEY", tamper(token))
    assert unreadable.value.name == "OPENAI_API_KEY"
    assert "OPENAI_API_KEY cannot be decrypted with KANDEV_SECRETS_KEY" in str(unreadable.value)
    assert "sk-ant" not in str(unreadable.value)


def test_open_all_names_the_one_that_does_not_open():
    box = SecretBox([OLD])
    with pytest.raises(SecretUnreadable) as unreadable:
        box.open_all({"GOOD_TOKEN": box.seal("fine-value"), "BAD_TOKEN": SecretBox([NEW]).seal("other")})
    assert unreadable.value.name == "BAD_TOKEN"


def test_the_box_never_shows_its_keys():
    assert OLD.decode() not in repr(SecretBox([OLD]))
    assert "SecretBox" in repr(SecretBox([OLD]))


def test_keys_are_read_comma_separated_first_first():
    assert parse_keys(f" {NEW.decode()} , {OLD.decode()} ,") == [NEW, OLD]


@pytest.mark.parametrize(("text", "says"), [("", "is empty"), (" , ", "is empty"), ("hunter2", "Key 1 of")])
def test_a_key_that_is_no_fernet_key_is_refused_with_how_to_make_one(text, says):
    with pytest.raises(SecretsKeyError) as refused:
        parse_keys(text)
    assert says in str(refused.value)
    if text.strip(" ,"):
        assert "Fernet.generate_key()" in str(refused.value)
        assert "hunter2" not in str(refused.value)


@given(st.text(max_size=100))
def test_the_embedded_default_key_is_a_fernet_key_fixed_by_the_secret_key(secret_key):
    key = derived_key(secret_key)
    assert parse_keys(key.decode()) == [key]
    assert derived_key(secret_key) == key
    assert derived_key(secret_key + "x") != key


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "openai_api_key",
        "GEMINI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "HF_TOKEN",
        "GITHUB_TOKEN",
        "ANTHROPIC_AUTH_TOKEN",
        "CLIENT_SECRET",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MY_PASSWD",
        "OPENAI_APIKEY",
        "TOKEN",
        "KEY",
    ],
)
def test_names_that_look_like_credentials(name):
    assert looks_like_credential(name)


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "MONKEY", "KEYBOARD_LAYOUT", "MAX_TOKENS", "TOKENIZERS_PARALLELISM", "ANTHROPIC_MODEL"]
)
def test_names_that_do_not(name):
    assert not looks_like_credential(name)


@given(NAMES)
def test_shell_names_are_variable_names(name):
    assert is_variable_name(name)


@pytest.mark.parametrize("name", ["", "1ABC", "A-B", "A B", "A=B", "É"])
def test_other_names_are_not(name):
    assert not is_variable_name(name)
