"""A record keeps its questions in agentctl's wire shape: each option's id under ``id``, no longer ``option_id``.

Only the key is renamed; the ids themselves (what answers name, and what an
``ask_user_question_kandev`` agent gets back as ``selected_option``) stay, and
so do the bundles' ``dedup_key``, which names no keys. Back again, the key
is ``option_id`` once more.
"""

from django.db import migrations


def rekeyed(questions, old, new):
    """``questions`` with each option's ``old`` key renamed ``new``; None when no option has ``old``."""
    if not isinstance(questions, list):
        return None
    changed = False
    result = []
    for question in questions:
        options = question.get("options") if isinstance(question, dict) else None
        if isinstance(options, list) and any(isinstance(option, dict) and old in option for option in options):
            question = {**question, "options": [_rekeyed_option(option, old, new) for option in options]}
            changed = True
        result.append(question)
    return result if changed else None


def _rekeyed_option(option, old, new):
    if not isinstance(option, dict) or old not in option:
        return option
    # Rebuilt rather than popped, so the id stays the option's first key, as the wire has it.
    return {(new if key == old else key): value for key, value in option.items()}


def _rename(old, new):
    def rename(apps, schema_editor):
        Clarification = apps.get_model("clarifications", "Clarification")
        for pk, questions in Clarification.objects.values_list("pk", "questions").iterator():
            renamed = rekeyed(questions, old, new)
            if renamed is not None:
                Clarification.objects.filter(pk=pk).update(questions=renamed)

    return rename


class Migration(migrations.Migration):
    dependencies = [
        ("clarifications", "0007_attempt_accepted"),
    ]

    operations = [
        migrations.RunPython(_rename("option_id", "id"), _rename("id", "option_id")),
    ]
