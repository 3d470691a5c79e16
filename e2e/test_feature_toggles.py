"""The staff-only feature toggles page, with no flag set in the environment."""

from playwright.sync_api import expect

from testing_support.browser import login

CARD = "feature-toggle-features.acpElicitation"


def test_toggle_persists_across_reload_and_can_return_to_default(page, server):
    server.create_operator("root", workspace="Ops", staff=True)
    login(page, server, "root", "/settings/feature-toggles/")
    card = page.get_by_test_id(CARD)
    expect(card).to_have_attribute("data-effective", "false")
    expect(card).to_have_attribute("data-source", "profile")
    expect(card.get_by_test_id("feature-toggle-stability")).to_have_attribute("data-value", "experimental")
    expect(card.get_by_test_id("feature-toggle-restart-note")).to_be_visible()

    card.get_by_test_id("feature-toggle-switch").check()
    expect(card).to_have_attribute("data-source", "override")
    expect(card).to_have_attribute("data-effective", "true")

    page.reload()
    card = page.get_by_test_id(CARD)
    expect(card).to_have_attribute("data-effective", "true")
    expect(card.get_by_test_id("feature-toggle-switch")).to_be_checked()

    card.get_by_test_id("feature-toggle-use-default").click()
    expect(card).to_have_attribute("data-source", "profile")
    expect(card).to_have_attribute("data-effective", "false")
    page.reload()
    expect(page.get_by_test_id(CARD)).to_have_attribute("data-effective", "false")


def test_non_staff_operator_cannot_reach_the_settings_page(page, server):
    server.create_operator("plain", workspace="Ops")
    login(page, server, "plain")
    expect(page.get_by_test_id("nav-feature-toggles")).to_have_count(0)
    assert page.goto(f"{server.url}/settings/feature-toggles/").status == 403
