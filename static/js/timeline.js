// The task page's timeline: it follows new messages while the operator reads at its end, and stops
// following the moment they scroll up to read something earlier (until they come back down, or use
// "Jump to the latest"). Whether it follows is data-stuck on #timeline. Times are shown in the
// operator's own locale and time zone; the server's rendering is the fallback.
(function () {
  "use strict";

  const timeline = document.getElementById("timeline");
  if (!timeline) return;
  const jump = document.querySelector("[data-action=jump-to-latest]");
  // This close to the end still counts as at the end (a rounding pixel, a last line half in view).
  const SLACK_PX = 32;

  function atEnd() {
    return timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight <= SLACK_PX;
  }

  function setStuck(stuck) {
    timeline.dataset.stuck = String(stuck);
    if (jump) jump.hidden = stuck;
  }

  function toEnd() {
    timeline.scrollTop = timeline.scrollHeight;
  }

  // Only a scroll changes whether it follows: content growing under a stuck
  // timeline is followed before the next scroll event can be fired, so that
  // event finds it at the end again.
  let lastTop = timeline.scrollTop;
  let movedDown = false;
  timeline.addEventListener(
    "scroll",
    () => {
      movedDown = timeline.scrollTop > lastTop;
      lastTop = timeline.scrollTop;
      setStuck(atEnd());
    },
    { passive: true },
  );
  // A scroll down is animated, and the stream goes on meanwhile: one that
  // ends near the end (within a quarter of the view) came back to it.
  timeline.addEventListener("scrollend", () => {
    if (timeline.dataset.stuck !== "true" && movedDown && !atEnd()) {
      const left = timeline.scrollHeight - timeline.scrollTop - timeline.clientHeight;
      if (left <= timeline.clientHeight / 4) {
        toEnd();
        setStuck(true);
      }
    }
  });

  if (jump) {
    jump.addEventListener("click", () => {
      toEnd();
      setStuck(true);
      timeline.focus({ preventScroll: true });
    });
  }

  const sameDay = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit" });
  const otherDay = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  const full = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });

  function localiseTimes(root) {
    const today = new Date().toDateString();
    for (const time of root.querySelectorAll("time[data-local-time]:not([data-localised])")) {
      const when = new Date(time.dateTime);
      time.dataset.localised = "true";
      if (Number.isNaN(when.getTime())) continue;
      time.textContent = (when.toDateString() === today ? sameDay : otherDay).format(when);
      time.title = full.format(when);
    }
  }

  function update() {
    // The whole page, not the timeline alone: the sessions list's times too, so one page shows one format.
    localiseTimes(document);
    if (timeline.dataset.stuck === "true") toEnd();
  }

  // A message replaced in place (a live patch as its text streams in, a catch-up after a
  // reconnect) keeps open the Thinking the operator opened: the new copy arrives closed.
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const { target, fragment } = event.detail;
    if (!target || !fragment || !timeline.contains(target)) return;
    const opened = Array.from(target.querySelectorAll("details"), (details) => details.open);
    fragment.querySelectorAll("details").forEach((details, i) => {
      if (opened[i]) details.open = true;
    });
  });

  // Observed rather than hooked into htmx: messages arrive out of band, as
  // catch-ups and live patches alike, and replace each other in place.
  new MutationObserver(update).observe(timeline, { childList: true, subtree: true, characterData: true });
  // The sessions list is swapped in whole from outside the timeline (a new session, a state change).
  new MutationObserver(() => localiseTimes(document)).observe(document.body, { childList: true, subtree: true });
  update();
})();
