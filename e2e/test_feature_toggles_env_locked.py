"""A flag set in the launch environment shows locked, and its switch is disabled."""

from playwright.sync_api import expect

from testing_support.browser import login

SERVER_ENV = {"KANDEV_FEATURES_ACP_ELICITATION": "true"}


def test_env_set_flag_is_locked(page, server):
    server.create_operator("root", workspace="Ops", staff=True)
    login(page, server, "root", "/settings/feature-toggles/")
    card = page.get_by_test_id("feature-toggle-features.acpElicitation")
    expect(card).to_have_attribute("data-effective", "true")
    expect(card).to_have_attribute("data-source", "env")
    expect(card).to_have_attribute("data-env-locked", "true")
    expect(card.get_by_test_id("feature-toggle-env-locked")).to_be_visible()
    expect(card.get_by_test_id("feature-toggle-switch")).to_be_disabled()
    expect(card.get_by_test_id("feature-toggle-use-default")).to_have_count(0)
