"""The repository documents itself: every reference resolves inside it.

Code and tests cite the wire protocol (``docs/agent-stream.md``), the product
rules with their spec ids (``docs/decisions/``, one file per topic) and the
other documents by section (``docs/operating.md#secrets``). These checks keep
those citations from pointing outside the repository or at a section no
document has, from naming an id the docs do not define, every link of the
README, of docs/ and of BENCHMARKS.md from breaking when a section moves, each
decision from going missing from the decisions' index, the README short enough
to read first, BENCHMARKS.md holding current figures and not their history,
and the protocol reference from falling behind the actions agentctl actually
handles and sends.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DECISIONS = DOCS / "decisions"
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: References to documents that live outside the repository.
OUTSIDE_REFERENCES = re.compile(r"\.\./shared|/work/shared|shared/contracts|shared/decisions|§K")

#: A spec id: an acceptance criterion (AC-12i), a determinism rule (D1) or a finding (F13a).
SPEC_ID = re.compile(r"\b(AC-[0-9]+[a-z]?|D[0-9]+|F[0-9]+a?)\b")

#: Linter codes in noqa comments (F401) look like spec ids and are not.
NOQA = re.compile(r"#\s*noqa\b.*$", re.MULTILINE)

#: ``docs/<file>.md#<anchor>``, ``docs/decisions/<file>.md#<anchor>``, ``README.md#<anchor>`` or
#: ``BENCHMARKS.md#<anchor>``, cited from code, tests, documents.
DOC_LINK = re.compile(r"\b((?:docs/(?:decisions/)?[A-Za-z0-9-]+|README|BENCHMARKS)\.md)#([a-z0-9_-]+)")

#: Documents split or moved, each kept as a pointer so that links from outside the repository still
#: land somewhere: where its text went.
MOVED = {"decisions.md": "decisions/README.md"}

#: The README is what a newcomer reads first: what kandev-web is, the two commands, the demo, the map and links.
README_LIMIT_BYTES = 10 * 1024

#: The method and one table of current figures per benchmark; earlier ones go to docs/benchmarks-history.md.
BENCHMARKS = ROOT / "BENCHMARKS.md"
BENCHMARKS_LIMIT_BYTES = 15 * 1024

#: An inline Markdown link or image, ``[text](target)`` or ``![alt](target "title")``: its target.
MARKDOWN_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")

#: A link with a scheme (``https:``, ``mailto:``) leaves the repository and is not checked here.
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)

#: Code is shown, not followed: fenced blocks, then inline spans.
FENCED_CODE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1", re.DOTALL)


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


def without_code(markdown: str) -> str:
    """The document with its code blocks and code spans left out: a ``# comment`` in a shell block is no heading."""
    return INLINE_CODE.sub("", FENCED_CODE.sub("", markdown))


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a document's headings.

    Lower case, punctuation dropped, spaces to hyphens; a heading whose anchor
    is taken already gets ``-1``, ``-2``… after it.
    """
    anchors: set[str] = set()
    for line in FENCED_CODE.sub("", markdown).splitlines():
        if match := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line):
            text = match[1].lower().replace("`", "")
            anchor = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
            unique, repeat = anchor, 0
            while unique in anchors:
                repeat += 1
                unique = f"{anchor}-{repeat}"
            anchors.add(unique)
    return anchors


def linked_documents() -> list[Path]:
    """The README and every document under docs/: the pages a reader follows links between."""
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted(DECISIONS.glob("*.md"))]


def decision_files() -> list[Path]:
    """The files of docs/decisions/ that hold decisions: all but the index."""
    return sorted(path for path in DECISIONS.glob("*.md") if path.name != "README.md")


def defined_spec_ids(markdown: str) -> set[str]:
    """Ids named in a heading or in bold (``**AC-09**``): where docs/decisions/ defines them."""
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
    assert offenders == [], "point these at docs/agent-stream.md or docs/decisions/:\n" + "\n".join(offenders)


def test_every_spec_id_the_code_uses_is_defined_in_decisions() -> None:
    used: dict[str, str] = {}
    # The README and the documents written per reader; docs/decisions/ is where ids are defined.
    documents = [path.relative_to(ROOT).as_posix() for path in linked_documents() if not path.is_relative_to(DECISIONS)]
    for path in tracked_files("kandev_web", "tests", "e2e", *documents):
        for spec_id in SPEC_ID.findall(NOQA.sub("", read_text(path))):
            used.setdefault(spec_id, str(path.relative_to(ROOT)))
    assert used, "no spec ids found: has the id pattern stopped matching?"
    defined = set().union(*(defined_spec_ids(read_text(path)) for path in decision_files()))
    # Each undefined id maps to its first use, to show where it comes from.
    undefined = {spec_id: where for spec_id, where in sorted(used.items()) if spec_id not in defined}
    assert undefined == {}


def test_every_cited_doc_anchor_exists() -> None:
    """Code, tests and configuration cite sections as ``docs/<file>.md#<anchor>``: each is a heading there.

    The decisions are cited the same way, one folder down: ``docs/decisions/<file>.md#<anchor>``.
    """
    cited: dict[tuple[str, str], str] = {}
    for path in tracked_files():
        for target, anchor in DOC_LINK.findall(read_text(path)):
            cited.setdefault((target, anchor), str(path.relative_to(ROOT)))
    assert cited, "nothing cites docs/<file>.md#<anchor>: has the link pattern stopped matching?"
    anchors = {target: heading_anchors(read_text(ROOT / target)) for target, _ in cited if (ROOT / target).is_file()}
    broken = {
        f"{target}#{anchor}": where
        for (target, anchor), where in sorted(cited.items())
        if anchor not in anchors.get(target, set())
    }
    assert broken == {}, "cited section -> first file citing it"


def broken_links(document: Path) -> list[str]:
    """The relative links of a Markdown document that name no file of the repository or no heading of it."""
    broken = []
    for target in MARKDOWN_LINK.findall(without_code(read_text(document))):
        if EXTERNAL.match(target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (document.parent / path).resolve() if path else document
        where = f"{document.relative_to(ROOT)}: ({target})"
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(f"{where}: no such file")
        elif anchor and resolved.suffix != ".md":
            broken.append(f"{where}: an anchor into a file that is not Markdown")
        elif anchor and anchor not in heading_anchors(read_text(resolved)):
            broken.append(f"{where}: no heading with that anchor")
    return broken


def test_every_link_in_the_readme_and_docs_resolves() -> None:
    """Each relative link names a file of the repository and, with ``#anchor``, a heading of that file."""
    assert [link for document in linked_documents() for link in broken_links(document)] == []


def test_every_document_is_linked_from_the_readme_or_the_index() -> None:
    """A document in docs/ that neither the README nor docs/README.md links to is one no reader finds.

    The decisions are one document of many files: their index stands for them here.
    """
    index = read_text(ROOT / "README.md") + doc("README.md")
    documents = [path.name for path in DOCS.glob("*.md") if path.name not in {"README.md", *MOVED}]
    unlinked = [name for name in [*documents, "decisions/README.md"] if name not in index]
    assert unlinked == []


@pytest.mark.parametrize(("moved", "to"), MOVED.items(), ids=MOVED)
def test_a_moved_document_points_at_where_its_text_went(moved: str, to: str) -> None:
    """What is left where a document was is a few lines linking its new place, not a second copy to keep up."""
    pointer = DOCS / moved
    assert to in MARKDOWN_LINK.findall(read_text(pointer))
    assert len(pointer.read_bytes()) <= 1024, f"docs/{moved} should only point at docs/{to}"


def test_the_decisions_index_links_every_file_and_every_decision() -> None:
    """A reader who knows a decision's name or id finds it from docs/decisions/README.md in one click."""
    index = set(MARKDOWN_LINK.findall(without_code(read_text(DECISIONS / "README.md"))))
    unlinked_files = [path.name for path in decision_files() if path.name not in index]
    assert unlinked_files == [], "say in docs/decisions/README.md what each of these decides"
    unlisted = [
        f"{path.name}#{anchor}"
        for path in decision_files()
        # The file's title is its own line in the index; every heading below it is a decision.
        for anchor in sorted(heading_anchors(read_text(path)) - heading_anchors(read_text(path).partition("\n")[0]))
        if f"{path.name}#{anchor}" not in index
    ]
    assert unlisted == [], "list these under 'Every decision by name' in docs/decisions/README.md"


def test_the_readme_stays_short() -> None:
    """Everything beyond the two commands, the demo, the map and the links belongs to a document in docs/."""
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT_BYTES, f"README.md is {size} bytes: move a section into docs/"


def test_benchmarks_holds_current_figures_only() -> None:
    """One table per benchmark, replaced when it is re-run: a file that outgrows this is keeping its history."""
    size = len(BENCHMARKS.read_bytes())
    assert size <= BENCHMARKS_LIMIT_BYTES, f"BENCHMARKS.md is {size} bytes: move old tables to the history"
    assert broken_links(BENCHMARKS) == []


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
