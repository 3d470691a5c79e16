"""Dark mode: the system's preference by default, the operator's own choice once made, and no flash on load."""

from playwright.sync_api import expect

from testing_support.browser import login


def board_connected(page) -> None:
    """The board's catch-up is in: it replaces every column, so a column read before it may be detached."""
    expect(page.get_by_test_id("board-live")).to_have_attribute("data-live", "connected")


def background_of(locator) -> tuple[int, ...]:
    """A surface's computed background colour as (r, g, b)."""
    value = locator.evaluate("element => getComputedStyle(element).backgroundColor")
    return tuple(int(part) for part in value[value.index("(") + 1 : value.index(")")].split(",")[:3])


def is_dark(rgb: tuple[int, ...]) -> bool:
    return sum(rgb) / 3 < 64


def test_a_browser_that_prefers_dark_gets_the_dark_palette(browser, server):
    ids = server.create_operator("nocturnal", workspace="Nocturnal", tasks=True)
    page = browser.new_context(color_scheme="dark").new_page()
    login(page, server, "nocturnal", f"/boards/{ids['board_id']}/")
    expect(page.locator("html")).to_have_attribute("data-color-scheme", "dark")
    expect(page.get_by_test_id("color-scheme-system")).to_have_attribute("aria-pressed", "true")
    assert is_dark(background_of(page.locator("body")))
    board_connected(page)
    assert is_dark(background_of(page.locator("section[data-testid^=kanban-column-]").first))


def test_the_light_scheme_stays_light_for_a_browser_that_prefers_light(browser, server):
    page = browser.new_context(color_scheme="light").new_page()
    page.goto(f"{server.url}/login/")
    expect(page.locator("html")).to_have_attribute("data-color-scheme", "light")
    assert not is_dark(background_of(page.locator("body")))


def test_the_toggle_switches_the_scheme_and_is_remembered_across_a_reload(browser, server):
    ids = server.create_operator("switcher", workspace="Switcher", tasks=True)
    page = browser.new_context(color_scheme="light").new_page()
    login(page, server, "switcher", f"/boards/{ids['board_id']}/")
    html = page.locator("html")
    expect(html).to_have_attribute("data-color-scheme", "light")

    page.get_by_test_id("color-scheme-dark").click()
    expect(html).to_have_attribute("data-color-scheme", "dark")
    expect(page.get_by_test_id("color-scheme-dark")).to_have_attribute("aria-pressed", "true")
    assert is_dark(background_of(page.locator("body")))

    page.reload()
    expect(page.get_by_test_id("color-scheme-dark")).to_have_attribute("aria-pressed", "true")
    expect(html).to_have_attribute("data-color-scheme", "dark")
    board_connected(page)
    assert is_dark(background_of(page.locator("section[data-testid^=kanban-column-]").first))

    # Back to the system's preference: this browser prefers light.
    page.get_by_test_id("color-scheme-system").click()
    expect(html).to_have_attribute("data-color-scheme", "light")
    page.reload()
    expect(html).to_have_attribute("data-color-scheme", "light")


def test_the_scheme_is_set_before_the_first_paint(browser, server):
    """The attribute is on <html> as soon as the document's head has run: before the body is parsed."""
    ids = server.create_operator("early", workspace="Early", tasks=True)
    context = browser.new_context(color_scheme="dark")
    # Runs at the first element after <head>'s scripts: records what <html> said before the body existed.
    context.add_init_script(
        """new MutationObserver((_, observer) => {
             if (!document.body) return;
             window.__schemeAtBody = document.documentElement.dataset.colorScheme || "unset";
             observer.disconnect();
           }).observe(document, {childList: true, subtree: true});"""
    )
    page = context.new_page()
    login(page, server, "early", f"/boards/{ids['board_id']}/")
    expect(page.locator("html")).to_have_attribute("data-color-scheme", "dark")
    assert page.evaluate("window.__schemeAtBody") == "dark"
