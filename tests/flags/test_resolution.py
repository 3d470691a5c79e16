from hypothesis import given
from hypothesis import strategies as st

from kandev_web.flags.registry import ACP_ELICITATION, FLAGS, Kind, RiskLevel, Stability
from kandev_web.flags.resolution import Source, parse_bool, profile_values, resolve

FLAG = FLAGS[ACP_ELICITATION]


def test_acp_elicitation_flag_is_registered_exactly_as_the_spec_table():
    assert (FLAG.key, FLAG.env_var) == ("features.acpElicitation", "KANDEV_FEATURES_ACP_ELICITATION")
    assert (FLAG.kind, FLAG.stability, FLAG.risk_level) == (Kind.FEATURE, Stability.EXPERIMENTAL, RiskLevel.MEDIUM)
    assert FLAG.restart_required is True
    assert FLAG.mutable is True


def test_acp_elicitation_is_off_in_every_profile():
    assert profile_values()[ACP_ELICITATION] == {"prod": "false", "dev": "false", "e2e": "false"}
    for profile in ("prod", "dev", "e2e"):
        state = resolve(FLAG, environ={}, override=None, profile=profile)
        assert (state.effective_value, state.source) == (False, Source.PROFILE)


def test_env_wins_and_locks():
    state = resolve(FLAG, environ={FLAG.env_var: "true"}, override=False, profile="dev")
    assert (state.effective_value, state.source, state.env_locked) == (True, Source.ENV, True)


def test_override_beats_profile():
    state = resolve(FLAG, environ={}, override=True, profile="prod")
    assert (state.effective_value, state.source, state.env_locked) == (True, Source.OVERRIDE, False)


def test_default_when_no_profile_names_the_flag():
    state = resolve(FLAG, environ={}, override=None, profile="dev", profiles={})
    assert (state.effective_value, state.source) == (FLAG.default, Source.DEFAULT)


def test_a_non_boolean_env_value_is_ignored_not_read_as_true():
    state = resolve(FLAG, environ={FLAG.env_var: "ture"}, override=None, profile="dev")
    assert (state.effective_value, state.source, state.env_locked) == (False, Source.PROFILE, False)


@given(
    env=st.one_of(st.none(), st.sampled_from(["true", "false", "1", "0", "yes", "off", "junk"])),
    override=st.one_of(st.none(), st.booleans()),
    profile_value=st.one_of(st.none(), st.sampled_from(["true", "false"])),
)
def test_precedence_is_env_then_override_then_profile_then_default(env, override, profile_value):
    environ = {} if env is None else {FLAG.env_var: env}
    profiles = {} if profile_value is None else {FLAG.key: {"dev": profile_value}}
    state = resolve(FLAG, environ=environ, override=override, profile="dev", profiles=profiles)

    layers = [
        (Source.ENV, parse_bool(env) if env is not None else None),
        (Source.OVERRIDE, override),
        (Source.PROFILE, parse_bool(profile_value) if profile_value is not None else None),
        (Source.DEFAULT, FLAG.default),
    ]
    expected_source, expected_value = next((s, v) for s, v in layers if v is not None)
    assert (state.source, state.effective_value) == (expected_source, expected_value)
    assert state.env_locked == (expected_source == Source.ENV)


@given(st.text(max_size=8))
def test_parse_bool_only_accepts_spelled_booleans(raw):
    value = parse_bool(raw)
    normal = raw.strip().lower()
    if normal in {"1", "true", "yes", "on"}:
        assert value is True
    elif normal in {"0", "false", "no", "off"}:
        assert value is False
    else:
        assert value is None
