"""The conversation the fake Messages API plays in the real-bridge tests and the e2e spec.

The model asks two questions with AskUserQuestion (the second multi-select);
once answered it closes with ``FINAL_TEXT``. Without the tool it falls back to
prose (``NO_TOOL_TEXT``), as a real Claude does.
"""

from __future__ import annotations

from typing import Any

from .fake_messages_api import FakeMessagesApi

COLOUR = "Pick a colour"
ENVS = "Which environments should it deploy to?"
QUESTIONS: list[dict[str, Any]] = [
    {
        "question": COLOUR,
        "header": "Colour",
        "multiSelect": False,
        "options": [
            {"label": "Red", "description": "The warm one."},
            {"label": "Blue", "description": "The cool one."},
        ],
    },
    {
        "question": ENVS,
        "header": "Envs",
        "multiSelect": True,
        # The CLI's tool schema requires a description on every option.
        "options": [
            {"label": "dev", "description": "Developer sandbox."},
            {"label": "staging", "description": "Pre-production."},
            {"label": "prod", "description": "Customers."},
        ],
    },
]
FINAL_TEXT = "Thanks: Blue, deploying to dev and prod."
NO_TOOL_TEXT = "I don't have the AskUserQuestion tool here. Pick a colour: Red or Blue?"


def prompt(marker: str) -> str:
    """The operator's prompt; ``marker`` lets the fake tell this run's requests apart."""
    return f"{marker}: use the AskUserQuestion tool right now to ask me to pick a colour and the environments."


def fake_api(marker: str) -> FakeMessagesApi:
    return FakeMessagesApi(marker=marker, questions=QUESTIONS, final_text=FINAL_TEXT, no_tool_text=NO_TOOL_TEXT)
