"""Where things are on screen, for the specs that check what covers what and what a finger can hit."""

from playwright.sync_api import expect

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

#: WCAG 2.5.5's target size, which the board, the task page and the overlay keep on a phone.
TAP_TARGET_PX = 44


def intersects(a: dict, b: dict) -> bool:
    """Whether two bounding boxes (Playwright's ``{x, y, width, height}``) overlap by more than a hairline."""
    return (
        min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"]) > 0.5
        and min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"]) > 0.5
    )


def toast_boxes(page) -> list[dict]:
    toasts = page.get_by_test_id("toast")
    return [box for box in (toasts.nth(i).bounding_box() for i in range(toasts.count())) if box]


def assert_uncovered_by_toasts(page, *regions) -> None:
    """No toast overlaps any of ``regions`` (locators): with the page at its top, and with each
    region scrolled to the bottom of the window, where an operator reads the composer."""
    for region in regions:
        for i in range(region.count()):
            for scroll in ("() => scrollTo(0, 0)", "(el) => el.scrollIntoView({block: 'end'})"):
                region.nth(i).evaluate(scroll)
                box = region.nth(i).bounding_box()
                toasts = toast_boxes(page)
                assert toasts, "the check needs toasts on screen"
                for toast in toasts:
                    assert box is None or not intersects(toast, box), f"a toast {toast} covers {region} {box}"


#: Where a click at the middle of ``el`` lands: on ``el`` itself (or inside it), or on whatever covers it.
_HIT = """(el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return hit === el || el.contains(hit) ? "" : (hit ? hit.outerHTML.slice(0, 200) : "nothing");
}"""


def measured(locator) -> dict:
    """``locator``'s bounding box once it is on screen.

    Found and measured are two steps: a live swap between them (the composer
    re-rendered by the agent's news) leaves nothing to measure, so it is
    found again until it is measured.
    """
    for _ in range(20):
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        if box is not None:
            return box
    raise AssertionError(f"{locator} kept being replaced before it could be measured")


def assert_reachable(page, target) -> None:
    """``target`` takes a click at its middle wherever the operator scrolls it: top, middle or bottom of the window."""
    expect(target).to_be_visible()
    for block in ("start", "center", "end"):
        target.evaluate("(el, block) => el.scrollIntoView({block})", block)
        covered_by = target.evaluate(_HIT)
        assert covered_by == "", f"scrolled to the {block}, a click on {target} lands on {covered_by}"


def assert_no_horizontal_scroll(page) -> None:
    width, inner = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert width <= inner, f"the page is {width} px wide in a {inner} px window"


#: Every control a finger can hit that is on screen, except links inside running text (WCAG's inline exception).
_SMALL_TARGETS = """(minimum) => {
    const controls = ["a[href]", "button", "input:not([type=hidden])", "select", "textarea", "summary",
        "[role=button]", "[tabindex='0']"].join(", ");
    const inline = ":is(.toast-body, .msg-body, .task-description, .clarification-prompt, .clarification-context) a";
    return Array.from(document.querySelectorAll(controls))
        .filter((el) => !el.matches(inline) && !el.closest(".sr-only"))
        .map((el) => ({el, box: el.getBoundingClientRect()}))
        .filter(({el, box}) => box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden")
        .filter(({box}) => box.width < minimum || box.height < minimum)
        .map(({el, box}) => `${el.dataset.testid || el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 30)}" `
            + `${Math.round(box.width)}x${Math.round(box.height)}`);
}"""


def assert_tap_targets(page) -> None:
    small = page.evaluate(_SMALL_TARGETS, TAP_TARGET_PX)
    assert small == [], f"smaller than {TAP_TARGET_PX} px: {small}"


def assert_within_window(page, locator) -> None:
    """``locator`` is no wider than the window and starts and ends inside it."""
    inner = page.evaluate("() => innerWidth")
    box = measured(locator)
    assert box["x"] >= 0, f"{locator} spans {box} in a {inner} px window"
    assert box["x"] + box["width"] <= inner, f"{locator} spans {box} in a {inner} px window"
