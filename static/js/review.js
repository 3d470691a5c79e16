// The review page (templates/review/review.html): a click on a line of the new
// side picks it for the file's comment form (its number in the Line field, the
// comment's text focused); a comment added empties its form for the next.
(function () {
  "use strict";

  document.addEventListener("click", (event) => {
    const line = event.target.closest("[data-role=review-line][data-line]");
    if (!line) return;
    const file = line.closest("[data-role=review-file]");
    const form = file && file.querySelector("[data-role=review-comment-form]");
    if (!form) return;
    const picked = file.querySelector("[data-role=review-line][data-picked=true]");
    if (picked) picked.dataset.picked = "false";
    line.dataset.picked = "true";
    form.elements.line.value = line.dataset.line;
    form.elements.text.focus();
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.target.closest && event.target.closest("[data-role=review-comment-form]");
    const xhr = event.detail.xhr;
    // A refusal answers with a toast and HX-Reswap: none; the text stays to be corrected.
    if (!form || !event.detail.successful || (xhr && xhr.getResponseHeader("HX-Reswap") === "none")) return;
    form.reset();
    const picked = form.closest("[data-role=review-file]").querySelector("[data-role=review-line][data-picked=true]");
    if (picked) picked.dataset.picked = "false";
  });
})();
