"""Agent text in templates: ``{{ text|markdown }}``, and telling repeated wording apart.

``{% load agent_text %}`` wherever an agent's words are shown: the timeline
and the answer overlay render them the same way.
"""

from django import template
from django.utils.safestring import SafeString, mark_safe

from kandev_web.rendering.markdown import render_markdown
from kandev_web.rendering.text import says_the_same
from kandev_web.sessions.scenarios import scenario_of_prompt

register = template.Library()


@register.filter
def markdown(text) -> SafeString:
    """An agent's Markdown as sanitised HTML (``kandev_web.rendering.markdown``)."""
    # Safe to mark: render_markdown's output went through the allow-list sanitizer.
    return mark_safe(render_markdown(str(text or "")))  # noqa: S308 - sanitised, as said above


@register.filter
def same_as(text, other) -> bool:
    """Whether ``text`` says what ``other`` says (case, spacing and final punctuation aside)."""
    return says_the_same(str(text or ""), str(other or ""))


@register.filter
def repeats_a_prompt(context, questions) -> bool:
    """Whether a bundle's ``context`` only repeats the prompt of one of its ``questions``."""
    return any(says_the_same(str(context or ""), str(question.get("prompt") or "")) for question in questions or [])


@register.filter
def played_scenario(prompt):
    """The mock agent's scenario an operator's prompt plays (``sessions.scenarios``), for the timeline to name."""
    return scenario_of_prompt(str(prompt or ""))
