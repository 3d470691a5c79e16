// The clarification overlay: choosing, typing, stepping, keyboard.
//
// The server renders every question; this keeps the operator's in-progress
// answer in the form (hidden inputs and text areas) and mirrors it in data-*
// state. A question's data-kind says how it is answered: "single" (one option
// or custom text), "multi" (several options), "text" (typing only), typed
// forms' "boolean" (Yes and No, picked like options), "number" and "integer"
// (a number field). How the overlay walks its questions is the bundle's flow
// (clarifications/overlay_model.py), as flags on the overlay: data-auto-advance,
// data-all-required, data-confirm-empty, data-keep-picks and data-checks; the
// two question paths differ there and nowhere else in this file. Where the
// flow checks, a question's field carries its constraints as the browser's own
// attributes (required, min, max, step, minlength, pattern, type=email|url|date),
// and before an answer is sent the browser's validity of each field, with the
// few checks HTML cannot express, gives agentctl's problem code for what does
// not fit; the sentence for that code is rendered on the question's problem
// slot from the one catalogue (clarifications/problems.py) and said beside the
// question. The rules, and where HTML's differ from agentctl's, are in
// clarifications/native_checks.py and docs/decisions/mapping.md#typed-forms: the page
// may be laxer than agentctl, never stricter. agentctl still decides: a
// problem it reports comes back the same way. A card with data-note="true"
// (Codex's note, docs/decisions/mapping.md#codex-forms) keeps its picks when
// text is typed and its text when a pick is made: both are sent; its
// data-other-option names the option that says the note is the answer.
(function () {
  "use strict";

  const overlayOf = (el) => el.closest("[data-role=overlay]");
  const cards = (overlay) => Array.from(overlay.querySelectorAll("[data-role=question]"));
  const activeCard = (overlay) => cards(overlay).find((card) => !card.hidden);
  const options = (card) => Array.from(card.querySelectorAll("[data-action=choose]"));
  const textArea = (card) => card.querySelector("[data-role=answer]");
  const flow = (overlay, flag) => overlay.dataset[flag] === "true";
  const problemSlot = (card) => card.querySelector("[data-role=problem]");

  // A JSON number: what the answer service sends as a number (clarifications/answering.py);
  // anything else, 01 or .5 though the browser takes them, goes as text, which agentctl refuses.
  const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
  // The white space Python's str.strip() takes off, which is how the server and agentctl trim
  // (JavaScript's trim() also takes U+FEFF and leaves U+001C-U+001F and U+0085).
  // eslint-disable-next-line no-control-regex -- U+001C-U+001F are white space to Python, so named here on purpose.
  const EDGE_SPACE = /^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
  const strip = (text) => text.replace(EDGE_SPACE, "");
  // Lengths as agentctl counts them: code points, not UTF-16 units.
  const length = (text) => [...text].length;

  // A datetime-local value (the operator's wall clock) as RFC 3339 with their offset.
  function withOffset(local) {
    const when = new Date(local);
    if (!local || Number.isNaN(when.getTime())) return "";
    const pad = (n) => String(Math.trunc(Math.abs(n))).padStart(2, "0");
    const offset = -when.getTimezoneOffset();
    const seconds = local.length === 16 ? ":00" : "";
    return `${local}${seconds}${offset >= 0 ? "+" : "-"}${pad(offset / 60)}:${pad(offset % 60)}`;
  }

  // An RFC 3339 default shown in the browser's datetime-local control, in local time.
  function asLocal(rfc3339) {
    const when = new Date(rfc3339);
    if (!rfc3339 || Number.isNaN(when.getTime())) return "";
    const pad = (n) => String(n).padStart(2, "0");
    return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:${pad(when.getMinutes())}:${pad(when.getSeconds())}`;
  }

  // A text area has no pattern attribute; its data-pattern is checked as the browser checks an input's.
  function patternMismatch(field) {
    if (field.validity.patternMismatch) return true;
    if (field.dataset.pattern === undefined || !field.value) return false;
    let pattern;
    try { pattern = new RegExp(`^(?:${field.dataset.pattern})$`, "v"); } catch { return false; } // agentctl decides
    return !pattern.test(field.value);
  }

  // What the browser finds wrong with a field (its ValidityState), as agentctl's problem code.
  function validityCode(field, kind) {
    const validity = field.validity;
    if (validity.badInput) return field.type === "number" ? "wrong_type" : "format_mismatch";
    if (validity.valueMissing) return "required_unanswered";
    if (validity.stepMismatch) return "not_an_integer";
    if (validity.rangeUnderflow) return "below_minimum";
    if (validity.rangeOverflow) return "above_maximum";
    if (validity.tooShort) return "too_short";
    // The browser tests the value as typed, agentctl the trimmed text: spaces around it leave the pattern to agentctl.
    if (kind === "text" && strip(field.value) === field.value && patternMismatch(field)) return "pattern_mismatch";
    if (validity.typeMismatch) return "format_mismatch";
    return "";
  }

  // The problem code for what does not fit in one card's answer, agentctl's
  // own (answers.py), in the order it checks; "" when it fits. Codes are
  // written out here, as literals, for tests/clarifications/test_native_checks.py.
  function misfitCode(card) {
    const data = card.dataset;
    const field = textArea(card);
    const typedText = field ? strip(field.value) : "";
    const picked = options(card).filter((o) => o.dataset.selected === "true").length;
    if (field && field.validity.badInput) return validityCode(field, data.kind);
    if (!answered(card)) return data.required === "true" ? "required_unanswered" : "";
    if (typedText && data.kind !== "number" && data.kind !== "integer") {
      if (length(typedText) > Number(overlayOf(card).dataset.answerChars)) return "text_too_long";
      if (data.kind === "text" && data.maxLength !== undefined && length(typedText) > Number(data.maxLength)) return "too_long";
    }
    if (data.kind === "number" || data.kind === "integer") {
      if (!JSON_NUMBER.test(typedText)) return "wrong_type";
    }
    const code = field && typedText ? validityCode(field, data.kind) : "";
    if (code) return code;
    if (data.kind === "multi" && picked && !typedText) {
      if (data.minItems !== undefined && picked < Number(data.minItems)) return "too_few_items";
      if (data.maxItems !== undefined && picked > Number(data.maxItems)) return "too_many_items";
    }
    // A note (Codex) goes beside the picks: with one, or with the option that says the note is the answer, the question is answered.
    const noted = data.note === "true" && (picked || data.otherOption !== undefined);
    if (data.required === "true" && typedText && options(card).length && data.kind !== "text" && !noted) {
      // Typed text replaces the picks and goes to the companion key: the question itself stays unanswered.
      return "required_unanswered";
    }
    return "";
  }

  // The sentence for what does not fit in one card's answer; "" when it fits,
  // or when the page has no sentence for it: a problem the page does not know
  // how to say for this question is agentctl's to find. The field's own
  // validity says it too (setCustomValidity), for :invalid and assistive technology.
  function misfit(card) {
    const field = textArea(card);
    if (field) field.setCustomValidity("");
    const code = misfitCode(card);
    const slot = problemSlot(card);
    const sentence = (code && slot && slot.getAttribute(`data-problem-${code.replaceAll("_", "-")}`)) || "";
    if (field) field.setCustomValidity(sentence);
    return sentence;
  }

  function showProblem(card, sentence, source) {
    const slot = problemSlot(card);
    if (!slot) return;
    slot.textContent = sentence;
    slot.hidden = !sentence;
    slot.dataset.source = sentence ? source : "";
    card.dataset.invalid = String(Boolean(sentence));
  }

  // Before sending: every card checked, each misfit said beside its question,
  // and the first of them brought up. True when the answer may go.
  function fits(overlay) {
    if (!flow(overlay, "checks")) return true;
    const all = cards(overlay);
    const failing = all.filter((card) => {
      const sentence = misfit(card);
      showProblem(card, sentence, "client");
      return Boolean(sentence);
    });
    const marker = overlay.querySelector("[data-role=outcome]");
    if (!failing.length) return true;
    marker.dataset.outcome = "unfit";
    marker.textContent = marker.dataset.unfit || "";
    show(overlay, all.indexOf(failing[0]));
    return false;
  }

  // While the operator fixes an answer, its sentence follows what they type.
  function recheck(card) {
    const slot = problemSlot(card);
    if (slot && !slot.hidden) showProblem(card, misfit(card), "client");
  }

  function setSelected(option, selected) {
    option.dataset.selected = String(selected);
    option.setAttribute("aria-checked", String(selected));
  }

  // Write the chosen options into the form, in declaration order.
  function syncSelection(card) {
    const overlay = overlayOf(card);
    const chosen = options(card).filter((o) => o.dataset.selected === "true" || o.dataset.kept === "true");
    card.querySelectorAll("input[data-role=selected]").forEach((input, i) => { if (i > 0) input.remove(); });
    const first = card.querySelector("input[data-role=selected]");
    if (first) {
      first.value = chosen.length ? chosen[0].dataset.optionId : "";
      for (const option of chosen.slice(1)) {
        const extra = first.cloneNode();
        extra.value = option.dataset.optionId;
        first.after(extra);
      }
    }
    refresh(overlay);
  }

  function answered(card) {
    const text = textArea(card);
    const typed = text && strip(text.value) !== "";
    const picked = card.querySelector("input[data-role=selected]");
    return typed || Boolean(picked && picked.value);
  }

  function refresh(overlay) {
    const all = cards(overlay);
    let count = 0;
    all.forEach((card, i) => {
      const done = answered(card);
      card.dataset.answered = String(done);
      if (done) count += 1;
      const step = overlay.querySelector(`[data-action=show-step][data-step-index="${i}"]`);
      if (step) {
        step.dataset.answered = String(done);
        step.dataset.active = String(!card.hidden);
      }
    });
    const progress = overlay.querySelector("[data-role=progress]");
    if (progress) {
      progress.dataset.answered = String(count);
      progress.textContent = progress.dataset.template.replace("__N__", count);
    }
    const submit = overlay.querySelector("[data-role=submit]");
    // Some flows take a partial or empty answer, others want them all
    // (docs/decisions/answers.md#f3-validation-on-the-two-paths).
    if (submit) submit.disabled = flow(overlay, "allRequired") && count < all.length;
    const index = all.indexOf(activeCard(overlay));
    const prev = overlay.querySelector("[data-action=previous]");
    const next = overlay.querySelector("[data-action=next]");
    if (prev) prev.disabled = index <= 0;
    if (next) next.disabled = index >= all.length - 1;
    // The question "Send without answers?" is about an empty form; an answer ends it.
    if (count > 0) confirming(overlay, false);
  }

  function show(overlay, index) {
    const all = cards(overlay);
    if (index < 0 || index >= all.length) return;
    all.forEach((card, i) => { card.hidden = i !== index; });
    refresh(overlay);
    const target = all[index].querySelector("[data-action=choose][tabindex='0']") || textArea(all[index]);
    if (target) target.focus();
  }

  function submit(overlay) {
    const form = overlay.querySelector("form");
    if (form.dataset.sending === "true") return;
    if (!fits(overlay)) return;
    if (needsConfirmation(overlay)) {
      confirming(overlay, true);
      return;
    }
    form.dataset.sending = "true";
    htmx.trigger(form, "submit");
  }

  // Where the flow asks, a Submit with nothing answered is valid (accept {},
  // AC-12b) but easily a slip, so it asks once, inside the overlay: the
  // operator confirms there, or presses Submit again while it asks.
  function needsConfirmation(overlay, submitter) {
    if (!flow(overlay, "confirmEmpty") || (submitter && submitter.value === "skip")) return false;
    if (cards(overlay).some(answered)) return false;
    return overlay.querySelector("form").dataset.confirming !== "true";
  }

  function confirming(overlay, on) {
    const form = overlay.querySelector("form");
    const ask = overlay.querySelector("[data-role=confirm-empty]");
    if (!ask || (form.dataset.confirming === "true") === on) return;
    form.dataset.confirming = String(on);
    ask.hidden = !on;
    if (on) ask.querySelector("[data-role=confirm-send]").focus();
  }

  // Collapsed, the overlay keeps its toggle (and who asks) so the way back is in sight.
  function setCollapsed(overlay, collapsed) {
    overlay.dataset.collapsed = String(collapsed);
    const toggle = overlay.querySelector("[data-action=collapse]");
    if (!toggle) return;
    toggle.setAttribute("aria-expanded", String(!collapsed));
    toggle.textContent = collapsed ? toggle.dataset.labelExpand : toggle.dataset.labelCollapse;
  }

  // After an answer to one question: a lone question that advances itself is sent, otherwise move on.
  function advance(overlay) {
    const all = cards(overlay);
    if (all.length === 1 && flow(overlay, "autoAdvance")) {
      submit(overlay);
      return;
    }
    const index = all.indexOf(activeCard(overlay));
    if (index < all.length - 1) show(overlay, index + 1);
  }

  function choose(option) {
    const card = option.closest("[data-role=question]");
    const overlay = overlayOf(card);
    const text = textArea(card);
    if (card.dataset.kind === "multi") {
      setSelected(option, option.dataset.selected !== "true");
    } else {
      options(card).forEach((o) => setSelected(o, o === option));
    }
    options(card).forEach((o) => { o.tabIndex = o === option ? 0 : -1; delete o.dataset.kept; });
    if (card.dataset.note === "true") {
      // A note stays beside the pick; the option that says the note is the answer asks for it.
      if (text && option.dataset.optionId === card.dataset.otherOption && option.dataset.selected === "true") text.focus();
    } else if (text && strip(text.value) !== "") {
      // A pick after typing makes the pick the answer again.
      text.value = "";
      card.querySelector("[data-role=custom-input]").dataset.active = "false";
    }
    syncSelection(card);
    recheck(card);
    // Without auto-advance the bundle is reviewed before sending, so it stays put.
    if (card.dataset.kind !== "multi" && flow(overlay, "autoAdvance")) advance(overlay);
  }

  function typed(text) {
    const card = text.closest("[data-role=question]");
    const overlay = overlayOf(card);
    if (text.type === "datetime-local") {
      card.querySelector("input[data-role=datetime-value]").value = withOffset(text.value);
    }
    const active = strip(text.value) !== "";
    card.querySelector("[data-role=custom-input]").dataset.active = String(active);
    // A note (Codex) is sent beside the picks, so they stay as chosen.
    const picks = card.dataset.note === "true" ? [] : options(card);
    for (const option of picks) {
      if (active && option.dataset.selected === "true") {
        // Typed text replaces the choice. A flow that keeps picks keeps it in
        // the record (the options only look deselected); otherwise it is dropped.
        if (flow(overlay, "keepPicks")) option.dataset.kept = "true";
        setSelected(option, false);
      } else if (!active && option.dataset.kept === "true") {
        setSelected(option, true);
        delete option.dataset.kept;
      }
    }
    syncSelection(card);
    recheck(card);
  }

  document.addEventListener("click", (event) => {
    const target = event.target.closest("button");
    if (!target || !overlayOf(target)) return;
    const overlay = overlayOf(target);
    const index = cards(overlay).indexOf(activeCard(overlay));
    switch (target.dataset.action) {
      case "choose": choose(target); break;
      case "show-step": show(overlay, Number(target.dataset.stepIndex)); break;
      case "previous": show(overlay, index - 1); break;
      case "next": show(overlay, index + 1); break;
      case "keep-answering":
        confirming(overlay, false);
        overlay.querySelector("[data-role=submit]").focus();
        break;
      case "collapse": {
        const collapse = overlay.dataset.collapsed !== "true";
        setCollapsed(overlay, collapse);
        if (!collapse) show(overlay, index);
        break;
      }
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("input", (event) => {
    if (event.target.matches("[data-role=answer]")) typed(event.target);
  });
  // Date and number controls may report only a change, not every input.
  document.addEventListener("change", (event) => {
    if (event.target.matches("[data-role=answer]")) typed(event.target);
  });

  document.addEventListener("keydown", (event) => {
    const overlay = event.target.closest && event.target.closest("[data-role=overlay]");
    const anyOverlay = overlay || document.querySelector("[data-role=overlay]");
    if (!anyOverlay) return;
    const inText = event.target.matches("textarea, input");
    if (event.key === "Enter" && (event.metaKey || event.ctrlKey)) {
      const submitButton = anyOverlay.querySelector("[data-role=submit]");
      if (!submitButton || !submitButton.disabled) submit(anyOverlay);
      event.preventDefault();
      return;
    }
    if (event.target.matches("[data-role=answer]") && event.key === "Enter" && !event.shiftKey && !event.altKey) {
      if (strip(event.target.value) === "") return;
      event.preventDefault();
      const all = cards(anyOverlay);
      const last = all.indexOf(activeCard(anyOverlay)) === all.length - 1;
      // A bundle that does not advance itself is reviewed as a whole: Enter on its last question sends it.
      if (!flow(anyOverlay, "autoAdvance") && last) submit(anyOverlay);
      else advance(anyOverlay);
      return;
    }
    if (inText || event.metaKey || event.ctrlKey || event.altKey) return;
    const card = activeCard(anyOverlay);
    if (event.key === "Escape") {
      const collapse = anyOverlay.dataset.collapsed !== "true";
      setCollapsed(anyOverlay, collapse);
      // Collapsed, the keyboard stays on the control that brings it back.
      if (collapse) anyOverlay.querySelector("[data-action=collapse]").focus();
      else show(anyOverlay, cards(anyOverlay).indexOf(card));
      event.preventDefault();
    } else if (/^[1-9]$/.test(event.key) && card) {
      const option = options(card)[Number(event.key) - 1];
      if (option) { choose(option); event.preventDefault(); }
    } else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      const index = cards(anyOverlay).indexOf(card);
      show(anyOverlay, index + (event.key === "ArrowRight" ? 1 : -1));
      event.preventDefault();
    } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && card && event.target.matches("[data-action=choose]")) {
      const all = options(card);
      const next = all[(all.indexOf(event.target) + (event.key === "ArrowDown" ? 1 : all.length - 1)) % all.length];
      next.focus();
      event.preventDefault();
    } else if (event.key === " " && event.target.matches("[data-action=choose]")) {
      choose(event.target);
      event.preventDefault();
    }
  });

  // A Submit button's own submit event, before htmx's ws-send sees it: an empty
  // answer may ask first (the keyboard's path goes through submit() above).
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches || !form.matches("[data-role=answer-form]")) return;
    const overlay = overlayOf(form);
    const skipping = event.submitter && event.submitter.value === "skip";
    if (!skipping && !fits(overlay)) {
      event.preventDefault();
      event.stopPropagation();
      form.dataset.sending = "false";
      return;
    }
    if (!needsConfirmation(overlay, event.submitter)) return;
    event.preventDefault();
    event.stopPropagation();
    confirming(overlay, true);
  }, true);

  // The form goes out as a frame on the task page's socket (ws-send). Say
  // which button sent it, and hold the buttons until its outcome comes back.
  document.addEventListener("htmx:wsConfigSend", (event) => {
    const form = event.detail.elt;
    if (!form.matches || !form.matches("[data-role=answer-form]")) return;
    const submitter = event.detail.triggeringEvent && event.detail.triggeringEvent.submitter;
    event.detail.parameters.action = submitter && submitter.value === "skip" ? "skip" : "submit";
    form.dataset.sending = "true";
    form.querySelectorAll("button[type=submit]").forEach((button) => { button.disabled = true; });
  });

  // What became of a sent answer arrives in #answer-outcomes (the overlay may
  // be gone by then: answered is answered). Show it on the overlay, if it is
  // still there, and let the operator try again after a failure.
  kandev.onSwap("answer-outcomes", (outcomes) => {
    const latest = outcomes.lastElementChild;
    while (outcomes.children.length > 5) outcomes.firstElementChild.remove();
    const overlay = latest && latest.dataset.pendingId && document.getElementById(`clarification-${latest.dataset.pendingId}`);
    if (!overlay) return;
    const marker = overlay.querySelector("[data-role=outcome]");
    marker.dataset.outcome = latest.dataset.outcome;
    const message = latest.querySelector("[data-role=message]");
    marker.textContent = message ? message.textContent : latest.textContent;
    // agentctl's verdict replaces the overlay's own: each problem beside its question.
    const all = cards(overlay);
    all.forEach((card) => showProblem(card, "", "server"));
    const refused = [];
    latest.querySelectorAll("[data-role=problem]").forEach((problem) => {
      const card = all.find((c) => c.dataset.questionId === problem.dataset.questionId);
      if (!card) return;
      const slot = problemSlot(card);
      showProblem(card, slot && !slot.hidden ? `${slot.textContent} ${problem.textContent}` : problem.textContent, "server");
      refused.push(card);
    });
    const form = overlay.querySelector("[data-role=answer-form]");
    form.dataset.sending = "false";
    form.querySelectorAll("button[type=submit]").forEach((button) => { button.disabled = false; });
    confirming(overlay, false);
    refresh(overlay);
    if (refused.length) show(overlay, all.indexOf(refused[0]));
  });

  // New overlays arrive over the socket: bring them to their first question.
  function init(root) {
    root.querySelectorAll("[data-role=overlay]:not([data-ready])").forEach((overlay) => {
      overlay.dataset.ready = "true";
      // A date-time default is RFC 3339; its control shows it in the operator's local time.
      overlay.querySelectorAll("input[data-role=answer][type=datetime-local]").forEach((input) => {
        const sent = input.closest("[data-role=question]").querySelector("input[data-role=datetime-value]");
        input.value = asLocal(sent.value);
        if (!input.value) sent.value = "";
      });
      refresh(overlay);
      takeKeyboard(overlay);
    });
  }

  // Take the keyboard unless the operator is typing somewhere else. At the next
  // frame, not in the swap: focusing lays the page out, which that frame does
  // anyway, so the overlay is in the page sooner and painted no later.
  function takeKeyboard(overlay) {
    requestAnimationFrame(() => {
      if (!overlay.isConnected || (document.activeElement && document.activeElement !== document.body)) return;
      const first = overlay.querySelector("[data-action=choose][tabindex='0'], [data-role=answer]");
      if (first) first.focus({ preventScroll: false });
    });
  }
  document.addEventListener("DOMContentLoaded", () => init(document));
  kandev.onSwap(null, () => init(document));
  document.addEventListener("htmx:afterSwap", () => init(document));
})();
