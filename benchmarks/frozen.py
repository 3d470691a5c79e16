"""The board for other operators while one answer waits on a frozen agentctl, against no such answer.

    .venv/bin/python -m benchmarks.frozen [--requests 50] [--updates 10] [--json out.json]

One Daphne (``KANDEV_FEATURES_ACP_ELICITATION=true``, SQLite file database,
in-memory channel layer) and three operators in one workspace:

- the *asker*, in headless chromium on a task page, starts the Mock agent on
  ``/e2e:elicit-single`` and waits for its question;
- the *reader* GETs the board page over HTTP (keep-alive, as a browser) and
  holds the board's WebSocket open;
- the *writer* creates tasks through the board's create endpoint, as the
  board's form does (an htmx POST).

Two phases in the same run, the same work in each: ``--requests`` board GETs,
with ``--updates`` live updates spread evenly among them (a task created by the
writer -> the frame carrying its card on the reader's board socket; both ends
timed with ``time.perf_counter`` here). First with no frozen answer; then the
asker's agentctl is stopped (SIGSTOP, its pid from the server's process tree)
and the asker answers in the overlay, an answer that cannot be delivered, and
the same work is measured while it is outstanding. The answer is over when
the asker's page shows a toast (its time is taken by a MutationObserver in the
page, mapped onto this process's clock as ``benchmarks/stack.py`` does); a
sample counts for the frozen phase only if it ended before that, and the
figures say how many did. agentctl is resumed (SIGCONT) whatever happens, and
every process started here ends with the run.

Loopback only; every loop is bounded (``--max-seconds`` per phase,
``--answer-timeout`` for the frozen answer's outcome, a timeout on every
request and every wait).
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/frozen.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import argparse
import json
import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks import support
from benchmarks.stack import clock_offset, submit_answer

WORKSPACE = "Frozen answer bench"
SCENARIO = "/e2e:elicit-single"
REQUEST_TIMEOUT = 30.0  # s, each GET, POST and socket wait

#: On the asker's page before its scripts: when each toast (an answer's outcome) appears, and what it says.
TOASTS_JS = r"""
(() => {
  const toasts = window.__benchToasts = [];
  new MutationObserver((records) => {
    const t = performance.timeOrigin + performance.now();
    for (const record of records) for (const node of record.addedNodes) {
      if (node.nodeType !== 1) continue;
      for (const toast of [node, ...node.querySelectorAll("[data-testid=toast]")]) {
        if (!toast.matches("[data-testid=toast]")) continue;
        const body = toast.querySelector("[data-testid=toast-body]") || toast;
        toasts.push({t, level: toast.dataset.level, text: body.textContent.trim()});
      }
    }
  }).observe(document, {childList: true, subtree: true});
})();
"""


@dataclass
class Sample:
    kind: str  # "get" or "update"
    ms: float
    ended: float  # time.time() when it completed


class Operator:
    """An operator's HTTP client, logged in through the login form (cookies and CSRF as a browser keeps them)."""

    def __init__(self, server: support.Server, username: str) -> None:
        import httpx2

        self.server = server
        self.http = httpx2.Client(base_url=server.url, trust_env=False, timeout=REQUEST_TIMEOUT)
        form = self.http.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        self.http.post(
            "/login/",
            data={"username": username, "password": support.PASSWORD, "csrfmiddlewaretoken": token, "next": "/"},
        )
        if "sessionid" not in self.http.cookies:
            raise RuntimeError(f"{username} could not log in")

    def get(self, path: str) -> None:
        response = self.http.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path}: {response.status_code}")

    def post(self, path: str, data: dict[str, str]) -> str:
        """A POST as the board's htmx forms send it (CSRF header, ``HX-Request``); the response's HTML."""
        headers = {"X-CSRFToken": self.http.cookies["csrftoken"], "HX-Request": "true"}
        response = self.http.post(path, data=data, headers=headers)
        if response.status_code != 200:
            raise RuntimeError(f"POST {path}: {response.status_code}")
        return response.text

    def create_task(self, board_id: int, step_id: int, title: str) -> int:
        """The new task's id, read from its card in the response (the only card in it)."""
        html = self.post(f"/boards/{board_id}/tasks/", {"title": title, "description": "", "step": str(step_id)})
        card = re.search(r'data-task-id="(\d+)"', html)
        if card is None:
            raise RuntimeError(f"creating {title!r}: no card in the response")
        return int(card.group(1))

    def delete_task(self, task_id: int) -> None:
        self.post(f"/tasks/{task_id}/delete/", {})

    def board_socket(self, board_id: int):
        """The board's live socket, as the board page opens it (same origin, session cookie); a context manager."""
        from websockets.sync.client import connect

        url = self.server.url.replace("http://", "ws://", 1) + f"/ws/boards/{board_id}/"
        cookie = f"sessionid={self.http.cookies['sessionid']}"
        return connect(
            url,
            origin=self.server.url,
            additional_headers={"Cookie": cookie},
            compression=None,
            proxy=None,
            open_timeout=REQUEST_TIMEOUT,
        )

    def close(self) -> None:
        self.http.close()


#: The outcome is the first toast after the answer that is not a notification (those announce questions).
OUTCOME_JS = "(n) => window.__benchToasts.slice(n).find((toast) => toast.level !== 'notify')"


def answer_outcome(page, toasts_before: int, timeout: float) -> dict:
    """How the answer ended, as the operator is told: ``{"t": page clock ms, "level", "text"}``."""
    page.wait_for_function(OUTCOME_JS, arg=toasts_before, timeout=timeout * 1000)
    return page.evaluate(OUTCOME_JS, toasts_before)


def schedule(requests: int, updates: int):
    """The GETs, with the live updates spread evenly among them: both see the same part of the window."""
    for i in range(requests):
        yield "get"
        if (i + 1) * updates // requests > i * updates // requests:
            yield "update"


@dataclass
class BoardProbe:
    """The other operators' side: the reader's GETs and board socket, the writer's creates."""

    reader: Operator
    writer: Operator
    socket: object  # the reader's board socket (websockets.sync.client.ClientConnection)
    pool: ThreadPoolExecutor  # posts the writer's create while the socket is read here
    board_id: int
    step_id: int

    def board_get(self) -> float:
        start = time.perf_counter()
        self.reader.get(f"/boards/{self.board_id}/")
        return (time.perf_counter() - start) * 1000

    def live_update(self, title: str) -> float:
        """ms from the writer's create POST leaving to the frame with the new card reaching the reader's socket."""
        start = time.perf_counter()
        posted = self.pool.submit(self.writer.create_task, self.board_id, self.step_id, title)
        deadline = start + REQUEST_TIMEOUT
        while title not in self.socket.recv(timeout=max(deadline - time.perf_counter(), 0.001)):
            pass  # another change's frame
        elapsed = (time.perf_counter() - start) * 1000
        # Untimed: the board goes back to its size, so every GET of both phases renders the same cards.
        self.writer.delete_task(posted.result(timeout=REQUEST_TIMEOUT))
        return elapsed

    def measure(self, phase: str, requests: int, updates: int, max_seconds: float) -> list[Sample]:
        samples: list[Sample] = []
        deadline = time.monotonic() + max_seconds
        for kind in schedule(requests, updates):
            if time.monotonic() > deadline:
                print(f"   {phase}: stopped after {len(samples)} samples, {max_seconds} s reached")
                break
            # The brackets keep one title from being the start of another.
            ms = self.board_get() if kind == "get" else self.live_update(f"Live update [{phase} {len(samples)}]")
            samples.append(Sample(kind, ms, time.time()))
        return samples


@contextmanager
def frozen(pid: int):
    """agentctl stopped for the block, and resumed whatever happens in it."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def open_asker(browser, server: support.Server, task_id: int):
    """The asker's task page, its agent started on the elicitation scenario and the question shown."""
    page = browser.new_context().new_page()
    page.set_default_timeout(REQUEST_TIMEOUT * 1000)
    page.add_init_script(TOASTS_JS)
    page.goto(f"{server.url}/login/?next=/tasks/{task_id}/")
    page.get_by_test_id("login-username").fill("asker")
    page.get_by_test_id("login-password").fill(support.PASSWORD)
    page.get_by_test_id("login-submit").click()
    page.wait_for_url(lambda url: "/login/" not in url)
    page.wait_for_selector("[data-testid=task-live][data-live=connected]")
    page.get_by_test_id("session-start-prompt").fill(SCENARIO)
    page.get_by_test_id("session-start-submit").click()
    overlay = page.wait_for_selector("[data-testid=clarification-overlay]", state="visible")
    return page, overlay.get_attribute("data-pending-id")


def summaries(samples: list[Sample], label: str) -> dict[str, support.Summary]:
    return {
        "board_get": support.Summary(f"board GET, {label}", [s.ms for s in samples if s.kind == "get"]),
        "live_update": support.Summary(f"live update, {label}", [s.ms for s in samples if s.kind == "update"]),
    }


def report(idle: list[Sample], during: list[Sample], after: list[Sample], answer: dict) -> dict:
    calm, held = summaries(idle, "no frozen answer"), summaries(during, "frozen answer in flight")
    for key in calm:
        print(calm[key].line())
        print(held[key].line())
    ratios = {}
    for key in calm:
        a, b = calm[key], held[key]
        ratios[key] = {"p50": b.p50 / a.p50, "p95": b.p95 / a.p95} if a.values and b.values else None
        if ratios[key]:
            print(f"{key}: frozen / none  p50 {ratios[key]['p50']:.2f}x  p95 {ratios[key]['p95']:.2f}x")
    print(
        f"frozen answer: ended after {answer['seconds']:.1f} s, "
        f"the operator told ({answer['level']}) {answer['text']!r}; "
        f"{len(during)} of {len(during) + len(after)} samples ended while it was outstanding"
        + (f" ({len(after)} after it ended are left out)" if after else "")
    )
    return {
        "no_frozen_answer": {k: s.as_dict() for k, s in calm.items()},
        "frozen_answer_in_flight": {k: s.as_dict() for k, s in held.items()},
        "ratio_frozen_to_none": ratios,
        "frozen_answer": answer,
        "samples_after_the_answer_ended": len(after),
    }


def run(args, directory: Path) -> dict:
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:
        env = support.server_environ(
            support.migrated_database(directory),
            # The frozen answer must stay outstanding for the whole frozen phase;
            # the product's default gives up after 4 s.
            {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_AGENT_ANSWER_TIMEOUT_SECONDS": "60"},
        )
        server = stack.enter_context(support.running_server(env, directory / "server.log"))
        ids = server.create_operator("asker", workspace=WORKSPACE)
        for name in ("reader", "writer"):
            server.create_operator(name, workspace=WORKSPACE, tasks=False)
        reader, writer = Operator(server, "reader"), Operator(server, "writer")
        stack.callback(reader.close)
        stack.callback(writer.close)
        socket = stack.enter_context(reader.board_socket(ids["board_id"]))
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=1))
        board = BoardProbe(reader, writer, socket, pool, ids["board_id"], ids["step_ids"][0])

        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=support.CHROMIUM, args=support.CHROMIUM_ARGS)
        stack.callback(browser.close)
        page, pending_id = open_asker(browser, server, ids["task_ids"][0])
        pids = server.agentctl_pids()
        if len(pids) != 1:
            raise RuntimeError(f"expected one agentctl, found {pids}")
        print(f"   question {pending_id} open; agentctl pid {pids[0]}")

        board.measure("warm-up", args.warmup, min(1, args.warmup), args.max_seconds)
        idle = board.measure("idle", args.requests, args.updates, args.max_seconds)

        with frozen(pids[0]):
            offset, _uncertainty = clock_offset(page)
            toasts_before = page.evaluate("() => window.__benchToasts.length")
            submit_answer(page, pending_id, "Red")
            submitted = time.time()
            held = board.measure("frozen", args.requests, args.updates, args.max_seconds)
            outcome = answer_outcome(page, toasts_before, args.answer_timeout)
        ended = (outcome["t"] - offset) / 1000
        answer = {"seconds": ended - submitted, "level": outcome["level"], "text": outcome["text"]}
        during = [s for s in held if s.ended <= ended]
        after = [s for s in held if s.ended > ended]
        result = report(idle, during, after, answer)
        result["samples"] = {"idle": [asdict(s) for s in idle], "frozen": [asdict(s) for s in held]}
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=50, help="board GETs per phase (default 50)")
    parser.add_argument("--updates", type=int, default=10, help="live updates per phase, among the GETs (default 10)")
    parser.add_argument("--warmup", type=int, default=5, help="board GETs (and one update) first, not counted")
    parser.add_argument("--max-seconds", type=float, default=120, help="stop a phase after this long (default 120)")
    parser.add_argument(
        "--answer-timeout", type=float, default=120, help="seconds to wait for the frozen answer's end (default 120)"
    )
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (server log)")
    args = parser.parse_args(argv)
    if not 1 <= args.updates <= args.requests:
        parser.error("--updates must be between 1 and --requests")

    support.header("frozen: board GET and live update, with and without an answer held by a frozen agentctl")
    print(f"   {args.requests} board GETs and {args.updates} live updates per phase (+{args.warmup} warm-up GETs)")
    with support.workdir(keep=args.keep) as directory:
        result = run(args, directory)
    support.footer()
    if args.json:
        args.json.write_text(json.dumps({"frozen": result}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
