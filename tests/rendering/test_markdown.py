"""Agent Markdown as the operator reads it: formatted, and never a way in for the agent's markup."""

import html as html_module
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pygments.styles import get_style_by_name
from pygments.token import Error, Whitespace

from kandev_web.rendering.markdown import LINK_SCHEMES, PYGMENTS_STYLE, highlight_css, is_clean, render_markdown

ROOT = Path(__file__).resolve().parents[2]

#: What the sanitizer lets through (kandev_web/rendering/markdown.py); anything else is a leak.
ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "span",
}  # fmt: skip


class Elements(HTMLParser):
    """Every start tag of a fragment, with its attributes."""

    def __init__(self, fragment: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.comments: list[str] = []
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {name: value or "" for name, value in attrs}))

    def handle_comment(self, data):
        self.comments.append(data)


def tags(html: str) -> list[str]:
    return [tag for tag, _ in Elements(html).elements]


def links(html: str) -> list[dict[str, str]]:
    return [attrs for tag, attrs in Elements(html).elements if tag == "a"]


def text_of(html: str) -> str:
    """What the operator reads of a fragment."""
    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def assert_safe(html: str) -> None:
    """No script, no handler, no URL that runs code, nothing the allow-list does not know, and nothing more to clean."""
    parsed = Elements(html)
    assert "<script" not in html.lower()
    assert parsed.comments == []
    for tag, attrs in parsed.elements:
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs.items():
            assert not name.lower().startswith("on"), (tag, name)
            assert not re.match(r"\s*(javascript|vbscript|data):", value, re.I), (tag, name, value)
        if tag == "a":
            # (An address the sanitizer finds malformed loses its href: that is text, not a link.)
            assert attrs.get("href", "mailto:").split(":", 1)[0].lower() in LINK_SCHEMES
            assert attrs["rel"] == "noopener noreferrer nofollow"
    assert is_clean(html)


# Formatting -----------------------------------------------------------------


def test_headings_emphasis_and_line_breaks():
    html = render_markdown("# Plan\n## Steps\nFirst **read**, then *write*.\nNext line.")
    assert "<h1>Plan</h1>" in html
    assert "<h2>Steps</h2>" in html
    assert "<strong>read</strong>" in html
    assert "<em>write</em>" in html
    # A line break the agent wrote stays one.
    assert "then <em>write</em>.<br>\nNext line." in html


def test_lists():
    html = render_markdown("- one\n- two\n\n3. three\n4. four")
    assert re.search(r"<ul>\s*<li>one</li>\s*<li>two</li>\s*</ul>", html)
    assert re.search(r'<ol start="3">\s*<li>three</li>', html)


def test_a_code_fence_is_highlighted_by_its_language():
    html = render_markdown('```python\ndef greet(name):\n    return f"hi {name}"\n```')
    assert html.startswith('<pre class="highlight"><code>')
    assert re.search(r'<span class="k">def</span>(<span class="w"> </span>)?<span class="nf">greet</span>', html)
    assert text_of(html).rstrip() == 'def greet(name):\n    return f"hi {name}"'
    assert_safe(html)


def test_a_fence_without_a_known_language_is_not_guessed_at():
    for fence in ("```\ndef greet(): pass\n```", "```no-such-language\ndef greet(): pass\n```"):
        html = render_markdown(fence)
        assert html == '<pre class="highlight"><code>def greet(): pass\n</code></pre>\n', fence


def test_code_spans_and_fences_show_markup_as_text():
    html = render_markdown("Run `<b>x</b>`.\n\n```html\n</code></pre><script>alert(1)</script>\n```")
    assert "<code>&lt;b&gt;x&lt;/b&gt;</code>" in html
    assert text_of(html).rstrip().endswith("\n</code></pre><script>alert(1)</script>")
    assert tags(html).count("pre") == 1
    assert_safe(html)


def test_tables_keep_their_alignment_as_classes_the_csp_allows():
    """A style attribute would be refused by the page's policy (style-src 'self'), and the alignment lost."""
    html = render_markdown("| Name | Count | Note |\n|:-----|------:|:---:|\n| a | 1 | x |")
    assert re.search(r'<table>\s*<thead>\s*<tr>\s*<th class="align-left">Name</th>', html)
    assert '<td class="align-right">1</td>' in html
    assert '<td class="align-center">x</td>' in html
    assert "style=" not in html
    assert_safe(html)


def test_web_and_mail_links_are_links_that_leak_nothing():
    html = render_markdown("[docs](https://example.com/a?b=1) and <mailto:ops@example.com>")
    assert links(html) == [
        {"href": "https://example.com/a?b=1", "rel": "noopener noreferrer nofollow"},
        {"href": "mailto:ops@example.com", "rel": "noopener noreferrer nofollow"},
    ]


# Hostile input --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
        "<img src=x onerror=alert(1)>",
        '"><svg onload=alert(1)>',
        '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
        "<!-- a comment --> and <!-- <script>alert(1)</script> -->",
        "<details open ontoggle=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "<style>body{display:none}</style>",
    ],
)
def test_raw_html_is_shown_as_text(text):
    html = render_markdown(text)
    assert tags(html) == ["p"]
    assert_safe(html)
    # What the agent wrote is what the operator reads.
    assert text_of(html).strip() == text


@pytest.mark.parametrize(
    "text",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](javascript&#58;alert(1))",
        "[x](&#106;avascript:alert(1))",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x](file:///etc/passwd)",
        "[x](/admin/)",
        "[x](//evil.example/)",
        "<javascript:alert(1)>",
        "<HTTP:>",
        "<HTTP://|>",
        "[x](https:///no-host)",
        "[x](mailto:)",
        "[x][ref]\n\n[ref]: javascript:alert(1)",
    ],
)
def test_links_that_are_not_web_or_mail_links_stay_text(text):
    html = render_markdown(text)
    assert "<a" not in html
    assert_safe(html)


def test_images_are_not_loaded():
    html = render_markdown("![pixel](https://tracker.example/p.gif?secret=1)")
    assert "<img" not in html
    assert links(html) == [{"href": "https://tracker.example/p.gif?secret=1", "rel": "noopener noreferrer nofollow"}]


@pytest.mark.parametrize(
    "text",
    [
        "**<img src=x onerror=alert(1)>**",
        "[<img src=x onerror=alert(1)>](https://example.com)",
        "> - [x](javascript:alert(1))\n>   ```\n>   <script>alert(1)</script>\n>   ```",
        "| a |\n|---|\n| <script>alert(1)</script> [y](javascript:alert(1)) |",
        '```"><script>alert(1)</script>\nbody\n```',
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        '[x](https://example.com "<script>alert(1)</script>" onclick=alert(1))',
        "<<script>script>alert(1)<</script>/script>",
    ],
)
def test_markup_nested_in_markdown_stays_text(text):
    html = render_markdown(text)
    assert_safe(html)
    assert not {"img", "script", "iframe", "svg"} & set(tags(html))


# Properties -----------------------------------------------------------------

#: Pieces of Markdown and HTML that hostile text is made of, mixed with any text at all.
PIECES = [
    "<script>", "</script>", "<img src=x onerror=alert(1)>", "<svg onload=alert(1)>", "<!--", "-->", "<a href=",
    "javascript:", "JAVASCRIPT:", "data:", "&#106;", "&lt;", "&amp;", "\"", "'", ">", "<", "[x](", ")", "](", "<http://",
    "![", "```", "```python\n", "~~~", "`", "*", "_", "**", "# ", "- ", "1. ", "> ", "|", "|---|", "\n", "\n\n", "    ",
    "\\", "https://example.com", "mailto:a@b.c", "onerror=", "style=", "\u2028", "\x00",
]  # fmt: skip
hostile_text = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=40).map("".join),
)


@given(hostile_text)
def test_any_text_renders_to_safe_html(text):
    assert_safe(render_markdown(text))


# The theme ------------------------------------------------------------------


def test_the_highlight_theme_file_is_pygments_own():
    css = (ROOT / "static" / "css" / "highlight.css").read_text()
    assert css.endswith(highlight_css()), "regenerate static/css/highlight.css with highlight_css()"


def _luminance(colour: str) -> float:
    colour = colour.lstrip("#")
    if len(colour) == 3:
        colour = "".join(c * 2 for c in colour)
    channels = [int(colour[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_every_token_colour_of_the_theme_is_legible():
    """WCAG AA (4.5:1) on the theme's background, for every token that shows text."""
    style = get_style_by_name(PYGMENTS_STYLE)
    background = _luminance(style.background_color)
    for token, spec in style:
        if spec["color"] and token not in Whitespace and token not in Error:
            foreground = _luminance(spec["color"])
            ratio = (max(background, foreground) + 0.05) / (min(background, foreground) + 0.05)
            assert ratio >= 4.5, (token, spec["color"], round(ratio, 2))
