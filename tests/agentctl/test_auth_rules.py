"""Which ACP auth methods agentctl uses unattended, and the sentences it fails with otherwise."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kandev_web.agentctl import auth

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)

# What real agents offer (their initialize answers), and whether a person must sign in.
REAL_METHODS = [
    ({"id": "oauth-personal", "name": "Log in with Google", "description": None}, True),
    ({"id": "gemini-api-key", "name": "Use Gemini API key", "description": "Requires setting GEMINI_API_KEY"}, False),
    ({"id": "vertex-ai", "name": "Vertex AI", "description": None}, False),
    ({"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your ChatGPT login"}, True),
    ({"id": "openai-api-key", "name": "Use OPENAI_API_KEY", "description": None}, False),
    (
        {
            "id": "claude-login",
            "name": "Log in with Claude Code",
            "_meta": {"terminal-auth": {"command": "claude", "args": ["/login"]}},
        },
        True,
    ),
    ({"id": "login", "name": "Terminal login", "type": "terminal", "args": ["--login"]}, True),
    ({"id": "key", "name": "API key", "type": "env_var", "vars": [{"name": "KEY"}]}, False),
]


def test_real_agents_methods_are_told_apart() -> None:
    methods = auth.parse_methods([raw for raw, _ in REAL_METHODS])
    assert [method.needs_person() for method in methods] == [person for _, person in REAL_METHODS]


@given(json_values)
def test_any_auth_methods_value_parses_to_methods_with_string_ids(raw) -> None:
    for method in auth.parse_methods(raw):
        assert isinstance(method.id, str)
        assert method.id
        assert isinstance(method.needs_person(), bool)
        assert set(method.summary()) == {"id", "name", "description", "type", "needs_person", "env_vars"}


@given(st.lists(json_values, max_size=5), st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=4))
def test_the_automatic_method_needs_nobody_and_has_its_variables(raw, env) -> None:
    chosen = auth.automatic_method(auth.parse_methods(raw), env)
    if chosen is not None:
        assert not chosen.needs_person()
        assert chosen.missing_variables(env) == []


def test_an_env_var_method_is_picked_only_once_its_variables_are_set() -> None:
    methods = auth.parse_methods([raw for raw, _ in REAL_METHODS])
    assert auth.automatic_method(methods, {}) is None
    assert auth.automatic_method(methods, {"KEY": "x"}).id == "key"


def test_a_terminal_method_tells_to_run_the_agent_with_its_args() -> None:
    [method] = auth.parse_methods([{"id": "login", "name": "Terminal login", "type": "terminal", "args": ["--login"]}])
    sentence = auth.person_sentence("Goose", method, host="box", agent_argv=["/usr/bin/goose", "acp"])
    assert "on box, as the user that runs its agents, run `/usr/bin/goose acp --login` in a terminal" in sentence


@given(st.text(), st.text(), st.text())
def test_sentences_quote_agent_text_on_one_line_and_briefly(agent, name, message) -> None:
    [method] = auth.parse_methods([{"id": "m", "name": name or "m"}])
    for sentence in (
        auth.person_sentence(agent, method, host="h", agent_argv=["a"]),
        auth.refused_sentence(agent, method, message),
        auth.missing_variables_sentence(agent, method, ["KEY"]),
    ):
        assert not any(char in sentence for char in "\n\r\t")
        assert len(sentence) < 1000


def test_unchosen_sentence_lists_methods_that_need_nobody() -> None:
    methods = auth.parse_methods([raw for raw, _ in REAL_METHODS[:3]])
    sentence = auth.unchosen_sentence("Gemini CLI", methods, host="h", agent_argv=["gemini"])
    assert sentence == (
        "Gemini CLI needs you to sign in first: choose one of its auth methods in the agent profile, "
        "e.g. “Use Gemini API key” (gemini-api-key), “Vertex AI” (vertex-ai), then start the session again."
    )
