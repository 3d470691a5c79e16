"""The repository documents itself: every reference resolves inside it.

Code and tests cite the wire protocol (``docs/agent-stream.md``) and the
product rules with their spec ids (``docs/decisions.md``). These checks keep
those citations from pointing outside the repository, from naming an id the
docs do not define, and the protocol reference from falling behind the
actions agentctl actually handles and sends.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: References to documents that live outside the repository.
OUTSIDE_REFERENCES = re.compile(r"\.\./shared|/work/shared|shared/contracts|shared/decisions|§K")

#: A spec id: an acceptance criterion (AC-12i), a determinism rule (D1) or a finding (F13a).
SPEC_ID = re.compile(r"\b(AC-[0-9]+[a-z]?|D[0-9]+|F[0-9]+a?)\b")

#: Linter codes in noqa comments (F401) look like spec ids and are not.
NOQA = re.compile(r"#\s*noqa\b.*$", re.MULTILINE)

DOC_NAMES = ("agent-stream", "decisions")

#: ``docs/<file>.md#<anchor>`` as cited from code, tests and the README.
DOC_LINK = re.compile(r"docs/(agent-stream|decisions)\.md#([a-z0-9_-]+)")

#: A Markdown link inside docs/: ``[…](decisions.md#limits)`` or ``[…](#limits)``.
RELATIVE_LINK = re.compile(r"\]\((?:(agent-stream|decisions)\.md)?#([^)\s]+)\)")


def tracked_files(*paths: str) -> list[Path]:
    """Text files git tracks under ``paths`` (everything when none), this file excluded."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *paths], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    files = [ROOT / name for name in listed if name and name != THIS_FILE and (ROOT / name).is_file()]
    # Binary files (a compiled catalogue) hold id-like bytes by chance; a NUL early on gives them away.
    return [path for path in files if b"\0" not in path.read_bytes()[:8192]]


def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def doc(name: str) -> str:
    path = DOCS / name
    assert path.is_file(), f"docs/{name} is missing"
    return read_text(path)


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for line in markdown.splitlines():
        if match := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line):
            text = match[1].lower().replace("`", "")
            anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def defined_spec_ids(markdown: str) -> set[str]:
    """Ids named in a heading or in bold (``**AC-09**``): where decisions.md defines them."""
    headings = "\n".join(line for line in markdown.splitlines() if line.startswith("#"))
    bold = " ".join(re.findall(r"\*\*([^*]+)\*\*", markdown))
    return set(SPEC_ID.findall(headings)) | set(SPEC_ID.findall(bold))


def test_nothing_outside_docs_points_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in tracked_files()
        if not path.relative_to(ROOT).as_posix().startswith("docs/")
        for number, line in enumerate(read_text(path).splitlines(), start=1)
        if OUTSIDE_REFERENCES.search(line)
    ]
    assert offenders == [], "point these at docs/agent-stream.md or docs/decisions.md:\n" + "\n".join(offenders)


def test_every_spec_id_the_code_uses_is_defined_in_decisions() -> None:
    used: dict[str, str] = {}
    for path in tracked_files("kandev_web", "tests", "e2e", "README.md"):
        for spec_id in SPEC_ID.findall(NOQA.sub("", read_text(path))):
            used.setdefault(spec_id, str(path.relative_to(ROOT)))
    assert used, "no spec ids found: has the id pattern stopped matching?"
    defined = defined_spec_ids(doc("decisions.md"))
    # Each undefined id maps to its first use, to show where it comes from.
    undefined = {spec_id: where for spec_id, where in sorted(used.items()) if spec_id not in defined}
    assert undefined == {}


def test_every_cited_doc_anchor_exists() -> None:
    texts = {name: doc(f"{name}.md") for name in DOC_NAMES}
    anchors = {name: heading_anchors(text) for name, text in texts.items()}
    cited = {(name, anchor) for path in tracked_files() for name, anchor in DOC_LINK.findall(read_text(path))}
    assert cited, "nothing cites docs/<file>.md#<anchor>: has the link pattern stopped matching?"
    cited |= {
        (target or name, anchor) for name, text in texts.items() for target, anchor in RELATIVE_LINK.findall(text)
    }
    broken = sorted(f"docs/{name}.md#{anchor}" for name, anchor in cited if anchor not in anchors[name])
    assert broken == []


def _string_keys_of_handler_tables(source: Path) -> set[str]:
    """The keys of every ``self._handlers = {...}`` in a module: the actions it dispatches."""
    actions = set()
    for node in ast.walk(ast.parse(read_text(source))):
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and isinstance(target := (node.targets[0] if isinstance(node, ast.Assign) else node.target), ast.Attribute)
            and target.attr == "_handlers"
            and isinstance(node.value, ast.Dict)
        ):
            actions |= {key.value for key in node.value.keys if isinstance(key, ast.Constant)}
    return actions


def _emitted_notifications(package: Path) -> set[str]:
    """Every literal action passed to ``emit`` / ``_emit`` / ``broadcast`` in a package."""
    actions = set()
    for source in package.rglob("*.py"):
        for node in ast.walk(ast.parse(read_text(source))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            first = node.args[0]
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            if name in {"emit", "_emit", "broadcast"} and literal:
                actions.add(first.value)
    return actions


ACTION_SOURCES = {
    "agentctl request": lambda: _string_keys_of_handler_tables(ROOT / "kandev_web/agentctl/controller.py"),
    "agentctl notification": lambda: _emitted_notifications(ROOT / "kandev_web/agentctl"),
}


@pytest.mark.parametrize(("kind", "found"), ACTION_SOURCES.items(), ids=ACTION_SOURCES)
def test_agent_stream_doc_names_every_action_in_the_code(kind: str, found) -> None:
    actions = found()
    assert actions, f"no {kind} actions found in the code: has the dispatch table moved?"
    reference = doc("agent-stream.md")
    missing = sorted(action for action in actions if f"`{action}`" not in reference)
    assert missing == [], f"docs/agent-stream.md does not describe these {kind} actions"
