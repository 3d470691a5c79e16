"""The conversation the fake Chat Completions API plays in the Kimi tests and the e2e spec.

The model asks two questions with Kimi's AskUserQuestion (the second
multi-select); once answered it closes with ``FINAL_TEXT``. Without the tool it
falls back to prose (``NO_TOOL_TEXT``).
"""

from __future__ import annotations

from typing import Any

from .fake_chat_completions import FakeChatCompletions

COLOUR = "Pick a colour"
ENVS = "Which environments should it deploy to?"
QUESTIONS: list[dict[str, Any]] = [
    {
        "question": COLOUR,
        "header": "Colour",
        "multi_select": False,
        "options": [
            {"label": "Red", "description": "The warm one."},
            {"label": "Blue", "description": "The cool one."},
        ],
    },
    {
        "question": ENVS,
        "header": "Envs",
        "multi_select": True,
        "options": [
            {"label": "Red", "description": "The red cluster."},
            {"label": "Green", "description": "The green cluster."},
            {"label": "Blue", "description": "The blue cluster."},
        ],
    },
]
FINAL_TEXT = "Thanks: noted your answers."
NO_TOOL_TEXT = "I can't ask you here. Pick a colour: Red or Blue?"
#: What Kimi tells the model when the operator declines or cancels.
DISMISSED = "User dismissed the question without answering."


def prompt(marker: str) -> str:
    """The operator's prompt; ``marker`` lets the fake tell this run's requests apart."""
    return f"{marker}: use the AskUserQuestion tool right now to ask me to pick a colour and the environments."


def fake_api(marker: str, questions: list[dict[str, Any]] | None = None) -> FakeChatCompletions:
    return FakeChatCompletions(
        marker=marker, questions=questions or QUESTIONS, final_text=FINAL_TEXT, no_tool_text=NO_TOOL_TEXT
    )
