"""Codex's own tools under a real agentctl: a shell command that needs a permission, and an MCP server's form.

The session is in the adapter's ``read-only`` or ``workspace-write`` mode,
whose approvals go to the client (its default, ``agent``, has a model review
each action instead). Codex 0.166 runs tools from JavaScript (its ``exec``
tool), so the scripted model calls ``exec`` with a line that calls the nested
tool: ``tools.exec_command`` or the MCP server's ``tools.mcp__forms__deploy_settings``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testing_support.agentctl import text_prompt
from testing_support.bridge.forms import forms_server
from testing_support.bridge.forms_mcp_server import RECEIVED, SERVER_NAME, TOOL_NAME
from testing_support.codex import Codex
from testing_support.codex.fake_responses_api import Call, FakeResponsesApi
from testing_support.codex.harness import CodexRun, codex_session, open_session

MARKER = "KANDEV-CODEX-TOOLS-PROBE"
MADE = "made-by-codex.txt"
#: Outside the sandbox (escalated), so Codex asks first; inside, read-only mode would just fail the write.
SHELL = Call(
    "exec",
    code="text(JSON.stringify(await tools.exec_command("
    f'{{cmd: "touch {MADE}", sandbox_permissions: "require_escalated", justification: "Create the file."}})));',
)
MCP = Call("exec", code=f"text(JSON.stringify(await tools.mcp__{SERVER_NAME}__{TOOL_NAME}({{}})));")
#: What the JavaScript says while the MCP server is still connecting.
NOT_YET = "is not a function"


def received_by_the_mcp_server(api: FakeResponsesApi) -> Any:
    """What the MCP server's tool reported it received, from the ``exec`` output the model got.

    The output is a list of text items; the script's own output is the tool's
    result as JSON, whose text is the server's ``RECEIVED {...}`` line.
    """
    items = json.loads(api.outputs_received()[-1])
    result = json.loads(items[-1]["text"])
    text = result["content"][0]["text"]
    assert text.startswith(RECEIVED), text
    return json.loads(text[len(RECEIVED) :])


async def prompt(run: CodexRun, session_id: str) -> None:
    await run.request("agent.prompt", {"session_id": session_id, "prompt": text_prompt(f"{MARKER}: go")})


async def next_step(run: CodexRun) -> tuple[str, dict[str, Any]]:
    return await run.first_of("permission.requested", "elicitation.requested", "turn.completed")


def assert_clean(run: CodexRun) -> None:
    assert run.leftovers == [], "processes outlived agentctl"
    assert run.proxy.attempts == [], "the run tried to leave the machine"


@pytest.mark.asyncio
@pytest.mark.timeout(120)
@pytest.mark.parametrize("allow", [True, False], ids=["allowed", "refused"])
async def test_a_shell_command_runs_only_once_the_operator_allows_it(codex: Codex, tmp_path: Path, allow: bool) -> None:
    api = FakeResponsesApi(marker=MARKER, call=SHELL, final_text="Done.")
    async with codex_session(codex, tmp_path, api) as run:
        session_id = await open_session(run, plan=False, mode="read-only")
        await prompt(run, session_id)
        action, requested = await next_step(run)
        assert action == "permission.requested", run.explain()
        assert requested["tool_call"]["kind"] == "execute"
        kinds = {option["kind"]: option["optionId"] for option in requested["options"]}
        chosen = kinds["allow_once"] if allow else kinds["reject_once"]
        await run.request("agent.permissions.respond", {"pending_id": requested["pending_id"], "option_id": chosen})
        completed = await run.next("turn.completed")
        assert (run.workdir / MADE).exists() is allow
        if allow:
            assert completed["stop_reason"] == "end_turn", run.explain()
            assert '\\"exit_code\\":0' in api.outputs_received()[0], api.outputs_received()
        else:
            # "No, and tell Codex what to do differently": Codex stops the turn for the operator's next word.
            assert completed["stop_reason"] == "cancelled", run.explain()
            assert api.outputs_received() == []
    assert_clean(run)


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_an_mcp_servers_typed_form_through_codex_gets_typed_content_back(codex: Codex, tmp_path: Path) -> None:
    api = FakeResponsesApi(marker=MARKER, call=MCP, final_text="Deploying.", retry_on=NOT_YET)
    async with codex_session(codex, tmp_path, api) as run:
        session_id = await open_session(run, plan=False, mode="workspace-write", mcp_servers=[forms_server()])
        await prompt(run, session_id)
        action, payload = await next_step(run)
        if action == "permission.requested":  # calling the MCP tool is an action to approve in this mode
            allow = next(o["optionId"] for o in payload["options"] if o["kind"] == "allow_once")
            await run.request("agent.permissions.respond", {"pending_id": payload["pending_id"], "option_id": allow})
            action, payload = await next_step(run)
        assert action == "elicitation.requested", run.explain()
        questions = {q["id"]: q for q in payload["questions"]}
        assert sorted(questions) == ["contact", "overwrite", "replicas"]
        assert questions["replicas"]["constraints"] == {"minimum": 1, "maximum": 5}

        answers = [
            {"question_id": "overwrite", "value": True},
            {"question_id": "replicas", "value": 3},
            {"question_id": "contact", "custom_text": "ops@example.com"},
        ]
        respond = {"pending_id": payload["pending_id"], "rejected": False, "reject_reason": "", "answers": answers}
        await run.request("agent.elicitations.respond", respond)
        completed = await run.next("turn.completed")
        assert completed["stop_reason"] == "end_turn", run.explain()

        assert received_by_the_mcp_server(api) == {
            "action": "accept",
            "content": {"contact": "ops@example.com", "overwrite": True, "replicas": 3},
            "valid": True,
        }
    assert_clean(run)
