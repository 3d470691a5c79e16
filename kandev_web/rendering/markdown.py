"""Agent Markdown as safe HTML: CommonMark and tables, code fences highlighted.

Two walls, so that a mistake in one is caught by the other:

1. markdown-it-py parses with ``html=False``: raw HTML in the text (a
   ``<script>``, an ``<img onerror>``, an HTML comment) is shown as text,
   never parsed; links are made only for http, https and mailto URLs;
   images are not made at all (an agent's image would be fetched by the
   operator's browser the moment it is shown: a tracking pixel, or a URL
   that carries data out).
2. nh3 (ammonia) then keeps only an allow-list of tags, attributes and
   classes, drops relative URLs and gives every link
   ``rel="noopener noreferrer nofollow"``.

Code fences are highlighted by Pygments with class names (the theme is
``static/css/highlight.css``, from :func:`highlight_css`), the lexer chosen
by the fence's language alone: guessing it from the code would let an
agent pick a lexer by writing the right first line.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

#: The schemes a link may have; anything else stays text.
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"
#: A host name or address a browser would accept (anything else would lose its link to the sanitizer anyway).
_HOST = re.compile(r"[\w.-]+|[0-9a-f:.]+")
#: The Pygments theme, chosen for contrast: each of its colours reads at
#: 4.5:1 or better on its background (WCAG AA), as tests check.
PYGMENTS_STYLE = "default"
#: Longer code is shown unhighlighted: highlighting is a nicety, not worth
#: the time a huge fence would take on every live re-render.
MAX_HIGHLIGHTED_CHARS = 20_000

_FORMATTER = HtmlFormatter(style=PYGMENTS_STYLE, nowrap=True)

_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "span",
}  # fmt: skip
#: A table column's alignment, as a class: the page's Content-Security-Policy refuses style attributes.
_ALIGN_CLASSES = {"align-left", "align-center", "align-right"}
_CLEANER = nh3.Cleaner(
    tags=_TAGS,
    attributes={"a": {"href", "title"}, "ol": {"start"}},
    allowed_classes={
        "pre": {"highlight"},
        "span": {name for name in STANDARD_TYPES.values() if name},
        "th": _ALIGN_CLASSES,
        "td": _ALIGN_CLASSES,
    },
    url_schemes=set(LINK_SCHEMES),
    url_relative="deny",
    link_rel=LINK_REL,
    strip_comments=True,
)


def _valid_link(url: str) -> bool:
    """Whether ``url`` may be a link: a web address with a host, or a mail address."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    if parts.scheme.lower() == "mailto":
        return bool(parts.path)
    return parts.scheme.lower() in LINK_SCHEMES and bool(parts.hostname and _HOST.fullmatch(parts.hostname))


def _highlight(code: str, lang: str, attrs: str) -> str:
    """A fence as ``<pre class="highlight"><code>``, its tokens in Pygments' classed spans if its language is known."""
    body = html.escape(code)
    if lang and len(code) <= MAX_HIGHLIGHTED_CHARS:
        try:
            lexer = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
        except ClassNotFound:
            pass
        else:
            body = highlight(code, lexer, _FORMATTER)
    return f'<pre class="highlight"><code>{body}</code></pre>'


def _aligned_cell(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A table cell with markdown-it's ``style="text-align:…"`` as an ``align-…`` class instead."""
    token = tokens[idx]
    style = token.attrs.pop("style", None)
    if isinstance(style, str) and style.startswith("text-align:"):
        token.attrSet("class", "align-" + style.removeprefix("text-align:"))
    return renderer.renderToken(tokens, idx, options, env)


class _LinkCheckingMarkdownIt(MarkdownIt):
    """markdown-it's parser, links made only where :func:`_valid_link` allows."""

    def validateLink(self, url: str) -> bool:
        return _valid_link(url)


def _parser() -> MarkdownIt:
    # ``breaks``: agents write plain lines as often as Markdown, and a line
    # break they wrote should stay one (as it did before Markdown).
    parser = _LinkCheckingMarkdownIt("commonmark", {"html": False, "breaks": True, "highlight": _highlight})
    parser.enable("table").disable("image")
    parser.add_render_rule("th_open", _aligned_cell)
    parser.add_render_rule("td_open", _aligned_cell)
    return parser


_PARSER = _parser()


@functools.lru_cache(maxsize=256)
def render_markdown(text: str) -> str:
    """``text`` (an agent's Markdown) as HTML that is safe to put in a page as it is.

    Cached: a streamed message is re-rendered for every open page on every
    chunk, and every page shows the same text.
    """
    return _CLEANER.clean(_PARSER.render(text))


def is_clean(fragment: str) -> bool:
    """Whether ``fragment`` is already what the sanitizer would make of it."""
    return _CLEANER.clean(fragment) == fragment


def highlight_css(selector: str = ".highlight") -> str:
    """The rules of ``static/css/highlight.css``: the theme's background and token colours, under ``selector``."""
    rules = [*_FORMATTER.get_background_style_defs(selector), *_FORMATTER.get_token_style_defs(selector)]
    return "\n".join(rules) + "\n"
