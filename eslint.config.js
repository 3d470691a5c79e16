// Lint for kandev's own JavaScript (static/js): `npx eslint static/js`, run by
// scripts/test's lint step. The vendored htmx (static/vendor) is not ours to fix.
"use strict";

const js = require("@eslint/js");
const globals = require("globals");

const SERVICE_WORKER = "static/js/sw.js";

// Product JavaScript finds elements by data-role and data-action; data-testid is
// the tests' alone, so markup can change for people without breaking a test's
// hook, and a test's hook cannot quietly become behaviour.
const TEST_ID_MESSAGE = "data-testid is for tests; hook product JavaScript on data-role or data-action.";
const NO_TEST_IDS = [
  "error",
  { selector: "Literal[value=/data-testid/]", message: TEST_ID_MESSAGE },
  { selector: "TemplateElement[value.raw=/data-testid/]", message: TEST_ID_MESSAGE },
];

module.exports = [
  { ignores: ["static/vendor/**", "staticfiles/**", "node_modules/**", "var/**"] },
  js.configs.recommended,
  {
    // Every file is a classic script: the pages load them deferred (templates/base.html),
    // the browser registers the service worker as one (static/js/push.js).
    files: ["static/js/**/*.js"],
    languageOptions: { ecmaVersion: "latest", sourceType: "script" },
    rules: { "no-restricted-syntax": NO_TEST_IDS },
  },
  {
    files: ["static/js/**/*.js"],
    ignores: [SERVICE_WORKER],
    // kandev: what static/js/swaps.js, loaded first, shares with the others.
    languageOptions: { globals: { ...globals.browser, htmx: "readonly", kandev: "readonly" } },
  },
  {
    // The service worker runs in its own global scope: no window, no document, no htmx.
    files: [SERVICE_WORKER],
    languageOptions: { globals: globals.serviceworker },
  },
];
