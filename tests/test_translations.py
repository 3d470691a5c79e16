"""The German catalogue is complete: every operator-facing string of the code is in it, translated, and compiled.

``scripts/translations`` (makemessages, then compilemessages) runs on a copy of
the tree, never on the checkout; what it makes of the committed ``django.po``
shows what the code asks for. A new ``gettext("...")`` or ``{% translate %}``
without its German, a fuzzy guess left in, a msgid the code dropped, or a
``django.mo`` not compiled from the ``.po`` fails here.
"""

from __future__ import annotations

import gettext
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import polib
import pytest

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = Path("kandev_web/locale/de/LC_MESSAGES")
#: What makemessages reads (Python and templates) and what scripts/translations needs to run.
SOURCES = ("manage.py", "kandev_web", "templates", "scripts/translations")
#: Named %-placeholders, ``{name}`` fields and the ``__N__`` a script fills in: a translation keeps them all.
PLACEHOLDER = re.compile(r"%\(\w+\)[sdif]|\{\w*\}|__N__")


@dataclass(frozen=True)
class Regenerated:
    """A copy of the tree after scripts/translations: its catalogue is the committed one merged with the code."""

    po: polib.POFile
    mo: Path


def _key(entry: polib.POEntry) -> str:
    return f"{entry.msgctxt}\x04{entry.msgid}" if entry.msgctxt else entry.msgid


def _regenerate(tmp: Path, *, edit=None) -> Regenerated:
    for source in SOURCES:
        origin = ROOT / source
        if origin.is_dir():
            shutil.copytree(origin, tmp / source, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (tmp / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, tmp / source)
    # Compiled afresh from the regenerated .po, whatever the mtimes say.
    (tmp / CATALOGUE / "django.mo").unlink(missing_ok=True)
    if edit:
        edit(tmp)
    # The copy's kandev_web, not the checkout's (an editable install would otherwise win).
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(tmp)}
    done = subprocess.run(
        [str(tmp / "scripts/translations")], cwd=tmp, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"scripts/translations failed:\n{done.stdout}\n{done.stderr}"
    return Regenerated(polib.pofile(str(tmp / CATALOGUE / "django.po")), tmp / CATALOGUE / "django.mo")


def catalogue_problems(regenerated: polib.POFile, committed: polib.POFile | None) -> list[str]:
    """What keeps the committed catalogue from being complete for the code, one line a problem."""
    problems = []
    have = {_key(e): e for e in committed} if committed is not None else {}
    for entry in regenerated:
        if entry.obsolete:
            continue
        where = ", ".join(sorted({path for path, _ in entry.occurrences}))
        if _key(entry) not in have:
            problems.append(f"not in the German catalogue: {entry.msgid!r} ({where})")
        elif "fuzzy" in entry.flags:
            problems.append(f"fuzzy (a guess to check, then remove the flag): {entry.msgid!r} ({where})")
        elif not entry.translated():
            problems.append(f"not translated: {entry.msgid!r} ({where})")
    code = {_key(e) for e in regenerated if not e.obsolete}
    problems += [f"no longer in the code: {key!r}" for key in have if key not in code]
    return problems


@pytest.fixture(scope="module")
def committed() -> polib.POFile:
    path = ROOT / CATALOGUE / "django.po"
    assert path.is_file(), f"no German catalogue at {path}: run scripts/translations and translate it"
    return polib.pofile(str(path))


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Regenerated:
    return _regenerate(tmp_path_factory.mktemp("tree"))


def test_every_string_of_the_code_is_in_the_german_catalogue_translated(regenerated, committed):
    problems = catalogue_problems(regenerated.po, committed)
    how = "Run scripts/translations and translate (docs/testing.md#translations):\n"
    assert not problems, how + "\n".join(problems)


def test_the_committed_catalogue_has_no_untranslated_or_fuzzy_entry(committed):
    assert committed.metadata.get("Language") == "de"
    assert not committed.metadata_is_fuzzy, "the header is still marked fuzzy"
    assert [e.msgid for e in committed.untranslated_entries()] == []
    assert [e.msgid for e in committed.fuzzy_entries()] == []
    assert [e.msgid for e in committed.obsolete_entries()] == []


def test_every_translation_keeps_the_placeholders_of_its_msgid(committed):
    def placeholders(text: str) -> list[str]:
        return sorted(PLACEHOLDER.findall(text))

    wrong = []
    for entry in committed.translated_entries():
        if entry.msgid_plural:
            # German has two forms, like English: singular for the singular, plural for the plural.
            pairs = [(entry.msgid, entry.msgstr_plural[0]), (entry.msgid_plural, entry.msgstr_plural[1])]
        else:
            pairs = [(entry.msgid, entry.msgstr)]
        wrong += [f"{msgid!r} -> {german!r}" for msgid, german in pairs if placeholders(msgid) != placeholders(german)]
    assert not wrong, "\n".join(wrong)


def test_the_committed_mo_is_compiled_from_the_po(regenerated):
    committed_mo = ROOT / CATALOGUE / "django.mo"
    assert committed_mo.is_file(), "django.mo is not committed: run scripts/translations"
    with committed_mo.open("rb") as ours, regenerated.mo.open("rb") as fresh:
        ours, fresh = gettext.GNUTranslations(ours)._catalog, gettext.GNUTranslations(fresh)._catalog
    # The header ("") carries the time makemessages ran; every message must match.
    stale = {key: text for key, text in fresh.items() if key != "" and ours.get(key) != text}
    stale |= {key: None for key in ours.keys() - fresh.keys() if key != ""}
    example = next(iter(stale), None)
    assert not stale, f"django.mo is stale for {len(stale)} message(s), e.g. {example!r}: run scripts/translations"


def test_a_new_string_without_its_german_fails_the_check(tmp_path, committed):
    """The check above is not vacuous: a template gaining a {% translate %} is caught before it ships."""

    def add_a_string(tree: Path) -> None:
        template = tree / "templates/base.html"
        template.write_text(template.read_text() + '\n{% translate "A sentence nobody has translated yet" %}\n')

    problems = catalogue_problems(_regenerate(tmp_path, edit=add_a_string).po, committed)
    assert problems == ["not in the German catalogue: 'A sentence nobody has translated yet' (templates/base.html)"]
