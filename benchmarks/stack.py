"""The full stack for the latency and soak benchmarks, and one measured cycle.

Daphne (our own subprocess, flag ``KANDEV_FEATURES_ACP_ELICITATION=true``,
SQLite file database, in-memory channel layer) -> the web app starts one
``kandev-agentctl`` for one task session -> agentctl runs
``benchmarks/bench_agent.py`` -> headless Debian chromium (Playwright) has the
task page open as the operator.

On the several-machines profile (``benchmarks/profiles.py``) there are two
Daphne processes on a fresh PostgreSQL database and one Redis: process A
starts the session, so its agentctl runs on the SSH executor host (started
through sshd) and A holds its stream through its SSH tunnel; the measured page
is on process B. A question then goes agent -> agentctl -> A's tunnel -> A
(recorded in PostgreSQL, the overlay rendered) -> Redis -> B's socket -> the
page, and the page's answer goes B -> B's own SSH tunnel -> agentctl -> agent.

One cycle: the benchmark tells the agent ``go 1``; the agent writes one
``elicitation/create``; the overlay appears in the page; Playwright picks
"Blue" and clicks Submit; the agent reads agentctl's ACP answer; the overlay
goes away. Everything stays in one agent session and one ACP turn.

Clocks. The agent stamps ``time.time()`` (CLOCK_REALTIME). The page stamps
``performance.timeOrigin + performance.now()`` (ms), taken inside the page by
a MutationObserver (overlay inserted), a ``requestAnimationFrame`` callback
(the first frame that can paint it), a capturing ``click`` listener (Submit
clicked), and the task socket's ``message`` listener (the frame carrying the
overlay arrived; the answer's outcome came back) and ``send`` (the answer's
frame left). Before every cycle the page clock is calibrated against this process's
``time.time()``: five ``page.evaluate`` round trips, and the one with the
shortest round trip gives ``offset = page_ms - midpoint_ms`` (its half round
trip is the uncertainty, printed with the results). Page times are converted
to the agent's clock with that offset.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request
from contextlib import ExitStack, suppress
from dataclasses import dataclass, replace
from pathlib import Path

from testing_support.executor import ssh_executor_command

from . import profiles, support
from .bench_agent import CONTROL_VAR, RECORD_VAR

PROFILE_NAME = "Bench agent"
#: ``--agent``: the scripted agent (``bench_agent.py``), or the real Codex adapter behind ``codex_tap.py``.
MOCK, CODEX = "mock", "codex"
#: What the Codex profile's prompts carry, so that the fake Responses API asks with ``request_user_input``.
CODEX_MARKER = "KANDEV-BENCH-CODEX"
CODEX_FINAL_TEXT = "Blue it is."
WORKSPACE = "Bench"
EXECUTOR_NAME = "bench-ssh"

#: The bearer token the benchmark's server takes for ``/metrics`` (its open sockets).
METRICS_TOKEN = "bench-metrics"

#: How long the page must have received nothing before Submit is clicked.
QUIET_MS = 50

#: Installed in the page before any script of the app runs.
INSTRUMENT_JS = r"""
(() => {
  const now = () => performance.timeOrigin + performance.now();
  const B = window.__bench = {overlays: {}, clicks: {}, sends: {}, answers: {}, frames: {}, lastFrame: 0};
  const OVERLAY = "[data-testid=clarification-overlay]";
  function scan(node) {
    if (node.nodeType !== 1) return;
    const found = node.matches(OVERLAY) ? [node] : [];
    node.querySelectorAll(OVERLAY).forEach((el) => found.push(el));
    if (!found.length) return;
    const t = now();
    for (const el of found) {
      const id = el.dataset.pendingId;
      if (id && !(id in B.overlays)) {
        const mark = B.overlays[id] = {dom: t, frame: null, rendered: null};
        // The next frame's callbacks start, then its style, layout and paint run in the same task:
        // a message posted from the callback is handled after them.
        requestAnimationFrame(() => {
          mark.frame = now();
          const channel = new MessageChannel();
          channel.port1.onmessage = () => { mark.rendered = now(); };
          channel.port2.postMessage(null);
        });
      }
    }
  }
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) scan(node);
  }).observe(document, {childList: true, subtree: true});
  // Our listener is added in the constructor, before htmx sets onmessage: it runs first.
  // The answer goes out as a frame on this socket (its send is timed) and its
  // outcome comes back on it, into #answer-outcomes.
  const Native = window.WebSocket;
  const OUTCOME = /data-pending-id="([^"]+)" data-outcome="([^"]*)"/g;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const t = B.lastFrame = now();
        if (typeof event.data !== "string") return;
        for (const m of event.data.matchAll(/data-testid="clarification-overlay"\s+data-pending-id="([^"]+)"/g)) {
          if (!(m[1] in B.frames)) B.frames[m[1]] = t;
        }
        if (event.data.indexOf("#answer-outcomes") < 0) return;
        for (const m of event.data.matchAll(OUTCOME)) {
          if (!(m[1] in B.answers)) B.answers[m[1]] = {t, status: m[2]};
        }
      });
    }
    send(data) {
      if (typeof data === "string" && data.indexOf('"clarification.answer"') >= 0) {
        const id = JSON.parse(data).pending_id;
        if (id && !(id in B.sends)) B.sends[id] = now();
      }
      return super.send(data);
    }
  };
  const pendingOf = (el) => {
    const overlay = el && el.closest && el.closest(OVERLAY);
    return overlay ? overlay.dataset.pendingId : null;
  };
  document.addEventListener("click", (event) => {
    const submit = event.target.closest && event.target.closest("[data-testid=clarification-submit]");
    const id = submit && pendingOf(submit);
    if (id && !(id in B.clicks)) B.clicks[id] = now();
  }, true);
  window.__benchMarks = (id) => ({
    dom: (B.overlays[id] || {}).dom, frame: (B.overlays[id] || {}).frame, rendered: (B.overlays[id] || {}).rendered,
    ws: B.frames[id],
    click: B.clicks[id], send: B.sends[id], answer: (B.answers[id] || {}).t, status: (B.answers[id] || {}).status,
  });
})();
"""


@dataclass
class Cycle:
    index: int
    t_start: float  # time.time() when the agent was told to ask
    create_to_overlay: float  # ms: elicitation/create written -> overlay in the DOM
    create_to_frame: float  # ms: ... -> first animation frame after that
    create_to_rendered: float  # ms: ... -> that frame's style, layout and paint done on the page's main thread
    create_to_ws: float  # ms: ... -> WebSocket frame with the overlay arrived in the page
    submit_to_read: float  # ms: Submit click -> ACP answer read by the agent
    click_to_send: float  # ms: Submit click -> the answer's frame leaves on the task socket
    send_to_read: float  # ms: frame sent -> ACP answer read
    read_to_http: float  # ms: ACP answer read -> the answer's outcome back in the page
    clock_uncertainty: float  # ms: half the calibration round trip
    answer_ok: bool
    outcome: str
    t_written: float = 0.0  # agent clock, s
    t_read: float = 0.0  # agent clock, s
    t_click: float = 0.0  # page clock converted to the agent clock, s
    pending_id: str = ""
    #: ``--agent codex``: what Codex itself takes, outside (a) and (b). ms: the model's call sent ->
    #: its elicitation/create written; the answer read -> the model's next request received.
    agent_create: float = float("nan")
    agent_answer: float = float("nan")


def submit_answer(page, pending_id: str, option_id: str) -> None:
    """Pick ``option_id`` in the overlay of ``pending_id`` and press Submit, as an operator does.

    How the answer then travels (a frame on the task page's socket) is the
    page's business; every benchmark that answers goes through here.
    """
    scope = f"#clarification-{pending_id}"
    page.click(f"{scope} [data-testid=clarification-option][data-option-id={option_id}]")
    page.click(f"{scope} [data-testid=clarification-submit]")


def clock_offset(page, samples: int = 5) -> tuple[float, float]:
    """``(page_ms - wall_ms, uncertainty_ms)`` from the shortest of ``samples`` round trips."""
    best = None
    for _ in range(samples):
        t0 = time.time()
        page_ms = page.evaluate("() => performance.timeOrigin + performance.now()")
        t1 = time.time()
        rtt = (t1 - t0) * 1000
        if best is None or rtt < best[0]:
            best = (rtt, page_ms - (t0 + t1) / 2 * 1000)
    assert best is not None
    return best[1], best[0] / 2


#: Installed in the inbox page: when each waiting item entered the DOM (page clock, ms).
INBOX_INSTRUMENT_JS = r"""
(() => {
  const now = () => performance.timeOrigin + performance.now();
  const arrived = window.__inboxArrived = {};
  const ITEM = "[data-testid=inbox-item][data-state=waiting]";
  new MutationObserver((records) => {
    const t = now();
    for (const record of records) for (const node of record.addedNodes) {
      if (node.nodeType !== 1) continue;
      const found = node.matches(ITEM) ? [node] : Array.from(node.querySelectorAll(ITEM));
      for (const el of found) if (!(el.dataset.pendingId in arrived)) arrived[el.dataset.pendingId] = t;
    }
  }).observe(document, {childList: true, subtree: true});
})();
"""


class ElicitationStack:
    """Server, operator, agent profile, browser page and one started agent session."""

    def __init__(
        self,
        directory: Path,
        *,
        trace: bool = False,
        patches: tuple[str, ...] = (),
        headless: bool = True,
        tracemalloc: bool = False,
        profile: str = profiles.EMBEDDED,
        agent: str = MOCK,
    ) -> None:
        if profile == profiles.SEVERAL_MACHINES and (trace or patches or tracemalloc):
            raise ValueError("probes, patches and tracemalloc run on the embedded profile only")
        if agent == CODEX and profile != profiles.EMBEDDED:
            raise ValueError("--agent codex runs on the embedded profile only")
        self.agent = agent
        #: The real Codex's scripted model (``--agent codex``): it stamps what Codex itself takes.
        self.api = None
        self.directory = directory
        self.profile = profile
        #: The several-machines profile's PostgreSQL, Redis and SSH host (None on the embedded one).
        self.services: profiles.Services | None = None
        #: The embedded profile's SQLite file (None on the several-machines one).
        self.sqlite_path: Path | None = None
        self.trace_path = directory / "server-trace.jsonl" if trace else None
        self.patches = patches
        self.tracemalloc = tracemalloc
        self.headless = headless
        self._exit = ExitStack()
        self.seq = 0

    def __enter__(self) -> ElicitationStack:
        try:
            self._start()
        except BaseException:
            self._exit.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        with suppress(Exception):  # the stack may be gone already; closing is what matters
            self.control.send("end")
        self._exit.close()

    def _start(self) -> None:
        from playwright.sync_api import sync_playwright

        extra = {"KANDEV_FEATURES_ACP_ELICITATION": "true", "KANDEV_METRICS_TOKEN": METRICS_TOKEN}
        if self.trace_path:
            extra["KANDEV_BENCH_TRACE"] = str(self.trace_path)
        if self.patches:
            extra["KANDEV_BENCH_PATCH"] = ",".join(self.patches)
        if self.tracemalloc:
            extra["KANDEV_BENCH_TRACEMALLOC"] = str(self.directory)
        several = self.profile == profiles.SEVERAL_MACHINES
        if several:
            self.services = profiles.Services.from_environ("latency")
            self.database_url = self._exit.enter_context(profiles.fresh_database(self.services.postgres_url))
            extra.update(profiles.web_environ(self.services, self.database_url))
            env = support.server_environ(self.directory / "unused.sqlite3", extra)
            support.migrate(env)
        else:
            self.sqlite_path = support.migrated_database(self.directory)
            env = support.server_environ(self.sqlite_path, extra)
        module = "benchmarks.trace_server" if (self.trace_path or self.patches or self.tracemalloc) else "daphne"
        logs = [self.directory / "server.log", *([self.directory / "server-b.log"] if several else [])]
        servers = self._exit.enter_context(support.running_servers(env, logs, module=module))
        #: The process that starts the session and holds its agent stream.
        self.server = servers[0]
        #: The process the measured page is on: the same one, or the other one.
        self.page_server = servers[-1]
        ids = self.server.create_operator("bench", workspace=WORKSPACE)
        self.task_id = ids["task_ids"][0]
        self.record = support.AgentRecord(self.directory / "agent-record.jsonl")
        self.control = support.Control(self.directory / "control.fifo")
        self._exit.callback(self.control.close)
        (self.directory / "workdir").mkdir()
        if self.agent == CODEX:
            self._add_codex_profile(ids["workspace_id"])
        else:
            self.server.add_profile(
                ids["workspace_id"],
                PROFILE_NAME,
                support.bench_agent_command(),
                {
                    RECORD_VAR: str(self.record.path),
                    CONTROL_VAR: str(self.control.path),
                    "PYTHONPATH": str(support.ROOT),
                },
                str(self.directory / "workdir"),
            )
        if self.services:
            # Anything the host would put in its login's home goes in the run's folder instead.
            host = replace(
                self.services.ssh,
                workdir_root=str(self.directory / "ssh-workdirs"),
                worktree_root=str(self.directory / "ssh-worktrees"),
            )
            self.server.manage(
                *ssh_executor_command(EXECUTOR_NAME, host), "--assign", PROFILE_NAME, "--workspace", WORKSPACE
            )
        self.echo = support.EchoBaseline()
        self._exit.callback(self.echo.close)
        self.tunnelled_echo = support.EchoBaseline(via=self.services.ssh) if self.services else None
        if self.tunnelled_echo:
            self._exit.callback(self.tunnelled_echo.close)

        playwright = self._exit.enter_context(sync_playwright())
        self.browser = browser = playwright.chromium.launch(
            executable_path=support.CHROMIUM, args=support.CHROMIUM_ARGS, headless=self.headless
        )
        self._exit.callback(browser.close)
        context = browser.new_context()
        starter = self._task_page(context, self.server, login=True)
        starter.get_by_test_id("session-start-profile").select_option(label=PROFILE_NAME)
        starter.get_by_test_id("session-start-prompt").fill("Benchmark: ask me questions")
        starter.get_by_test_id("session-start-submit").click()
        self.record.wait_for(lambda e: e["event"] == "prompt", timeout=60)
        # Codex answers that first prompt (it has no marker) and waits for the next, one per cycle.
        state = "WAITING_FOR_INPUT" if self.agent == CODEX else "RUNNING"
        starter.wait_for_selector(f"[data-testid=task-sessions][data-session-state={state}]", timeout=60_000)
        # Stopped before the servers are: an agentctl on the executor host is in none of their process groups,
        # and would otherwise run on, waiting to be adopted.
        self._exit.callback(self._stop_agent, starter)
        if several:
            starter.wait_for_selector(f"[data-testid=session-executor][data-executor={EXECUTOR_NAME}]")
            # The measured page is the only one open, as on the embedded profile.
            self.page = self._task_page(context, self.page_server)
            self.page.wait_for_selector("[data-testid=task-sessions][data-session-state=RUNNING]")
            starter.close()
        else:
            self.page = starter

    def _add_codex_profile(self, workspace_id: int) -> None:
        """The real Codex adapter behind the stamping relay, signed in through the gateway to a scripted model."""
        from testing_support.codex import find_codex
        from testing_support.codex.fake_responses_api import Call, FakeResponsesApi
        from testing_support.codex.harness import offline_environment
        from testing_support.fake_model_server import DenyingProxy

        codex = find_codex()
        question = {
            "id": "colour",
            "header": "Colour",
            "question": "Which colour should I use?",
            "options": [{"label": "Red", "description": "Warm."}, {"label": "Blue", "description": "Cool."}],
        }
        self.api = self._exit.enter_context(
            FakeResponsesApi(
                marker=CODEX_MARKER,
                call=Call("request_user_input", {"questions": [question]}),
                final_text=CODEX_FINAL_TEXT,
                max_calls=1_000_000,
            )
        )
        proxy = self._exit.enter_context(DenyingProxy())
        root = self.directory / "codex"
        root.mkdir()
        env = offline_environment(codex, root, proxy=proxy, marker=os.urandom(8).hex())
        env |= {RECORD_VAR: str(self.record.path), "PYTHONPATH": str(support.ROOT)}
        self.server.add_profile(
            workspace_id,
            PROFILE_NAME,
            [support.PYTHON, str(support.BENCH_DIR / "codex_tap.py"), *codex.argv],
            env,
            str(self.directory / "workdir"),
            agent_id="codex-acp",
            gateway_base_url=self.api.base_url,
            config_options={"collaboration_mode": "plan"},
        )

    def _stop_agent(self, starter) -> None:
        """Stop the session's agent as an operator does, from a task page, and wait until it is gone."""
        page = starter if not starter.is_closed() else self.page
        page.get_by_test_id("session-stop").click()
        page.wait_for_selector("[data-testid=task-sessions][data-agent-live=false]")

    def _task_page(self, context, server: support.Server, *, login: bool = False):
        """The task page on ``server`` in ``context``, instrumented, its socket connected."""
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.add_init_script(INSTRUMENT_JS)
        if login:
            page.goto(f"{server.url}/login/?next=/tasks/{self.task_id}/")
            page.get_by_test_id("login-username").fill("bench")
            page.get_by_test_id("login-password").fill(support.PASSWORD)
            page.get_by_test_id("login-submit").click()
            page.wait_for_url(lambda url: "/login/" not in url)
        else:
            page.goto(f"{server.url}/tasks/{self.task_id}/")
        page.wait_for_selector("[data-testid=task-live][data-live=connected]")
        return page

    def open_extra_pages(self, count: int) -> None:
        """``count`` more windows of the operator on the same task page, each with its own socket.

        Windows of their own (browser contexts with the same login), not tabs:
        a tab opened later would push the measured page into the background,
        where chromium throttles it.
        """
        login = self.page.context.storage_state()
        for _ in range(count):
            page = self.browser.new_context(storage_state=login).new_page()
            page.goto(f"{self.page_server.url}/tasks/{self.task_id}/")
            page.wait_for_selector("[data-testid=task-live][data-live=connected]")

    def open_extra_sockets(self, count: int) -> None:
        """``count`` more live sockets on the same task page, each as a page's, from a process of its own.

        The server does for each what it does for a window's (the catch-up,
        every event rendered and sent); nothing renders what they receive, so
        the figures show what the sockets cost the server, apart from what
        more windows cost the browser on the same cores (:meth:`open_extra_pages`).
        """
        cookies = "; ".join(f"{c['name']}={c['value']}" for c in self.page.context.cookies())
        origin = self.page_server.url
        url = f"{origin.replace('http://', 'ws://')}/ws/tasks/{self.task_id}/"
        process = subprocess.Popen(
            [support.PYTHON, str(support.BENCH_DIR / "socket_clients.py"), url, str(count)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "KANDEV_BENCH_COOKIE": cookies, "KANDEV_BENCH_ORIGIN": origin},
            start_new_session=True,
        )
        self._exit.callback(process.kill)
        assert process.stdout
        line = process.stdout.readline().strip()
        if line != f"connected {count}":
            raise RuntimeError(f"the extra sockets did not connect (their process said {line!r})")

    def open_sockets(self) -> dict[str, int]:
        """The live page sockets open on the page's process, by page, as its ``/metrics`` says."""
        request = urllib.request.Request(
            f"{self.page_server.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
        found = re.findall(r'^kandev_open_sockets\{page="([^"]+)"\} ([0-9.]+)$', text, re.MULTILINE)
        return {page: int(float(count)) for page, count in found}

    def open_inbox(self):
        """The operator's inbox in a window of its own, noting when each question's item enters its DOM."""
        login = self.page.context.storage_state()
        page = self.browser.new_context(storage_state=login).new_page()
        page.add_init_script(INBOX_INSTRUMENT_JS)
        page.goto(f"{self.page_server.url}/inbox/")
        page.wait_for_selector("[data-testid=inbox-live][data-live=connected]")
        return page

    # Measuring ------------------------------------------------------------------

    def agentctl_pids(self) -> list[int]:
        """The session's agentctl: the web process's child, or on the SSH host the pid its execution records."""
        if self.profile == profiles.EMBEDDED:
            return self.server.agentctl_pids()
        import psycopg

        with psycopg.connect(self.database_url) as db:
            rows = db.execute("SELECT pid FROM agent_sessions_agentexecution WHERE pid IS NOT NULL").fetchall()
        return [pid for (pid,) in rows]

    def process_rss(self) -> dict[str, int]:
        """RSS (KiB) of the web process(es), the session's agentctl, and the agent."""
        out = {"server": support.rss_kib(self.server.pid)}
        if self.page_server is not self.server:
            out["server_b"] = support.rss_kib(self.page_server.pid)
        agentctls = self.agentctl_pids()
        out["agentctl"] = sum(support.rss_kib(pid) for pid in agentctls)
        agents = [c for pid in agentctls for c in support.children_of(pid)]
        out["agent"] = sum(support.rss_kib(pid) for pid in agents)
        return out

    def baseline(self, count: int) -> list[float]:
        return [self.echo.round_trip() for _ in range(count)]

    def ssh_baseline(self, count: int) -> list[float]:
        """The same round trips through an SSH tunnel (several machines); none on the embedded profile."""
        return [self.tunnelled_echo.round_trip() for _ in range(count)] if self.tunnelled_echo else []

    def cycle(self, index: int, *, timeout: float = 20.0) -> Cycle:
        page = self.page
        offset, uncertainty = clock_offset(page)
        self.seq += 1
        seq = self.seq
        t_start = time.time()
        if self.agent == CODEX:
            # A prompt per cycle: the model asks once in each turn.
            page.get_by_test_id("session-prompt-input").fill(f"{CODEX_MARKER}: which colour?")
            page.get_by_test_id("session-prompt-submit").click()
        else:
            self.control.send("go 1")
        written = self.record.wait_for(lambda e: e["event"] == "written" and e["seq"] == seq, timeout=timeout)
        overlay = page.wait_for_selector("[data-testid=clarification-overlay]", state="visible", timeout=timeout * 1000)
        pending_id = overlay.get_attribute("data-pending-id")
        scope = f"#clarification-{pending_id}"
        # The overlay comes first, the rest of what the question changed after
        # it; an operator reads before clicking, so Submit waits for the page
        # to be quiet (no frame for QUIET_MS) and (b) is not measured queued
        # behind that rest.
        page.wait_for_function(
            f"() => performance.timeOrigin + performance.now() - window.__bench.lastFrame > {QUIET_MS}"
        )
        submit_answer(page, pending_id, "Blue")
        try:
            read = self.record.wait_for(lambda e: e["event"] == "read" and e["id"] == written["id"], timeout=timeout)
        except TimeoutError:
            told = page.evaluate("(id) => window.__benchMarks(id)", pending_id).get("status")
            raise TimeoutError(f"the agent never read answer {index}; the page was told {told!r}") from None
        page.wait_for_selector(scope, state="detached", timeout=timeout * 1000)
        marks = page.evaluate("(id) => window.__benchMarks(id)", pending_id)
        deadline = time.monotonic() + 5
        while marks.get("answer") is None and time.monotonic() < deadline:
            time.sleep(0.002)
            marks = page.evaluate("(id) => window.__benchMarks(id)", pending_id)

        def wall(key: str) -> float:
            value = marks.get(key)
            return float("nan") if value is None else value - offset

        t_written, t_read = written["t"] * 1000, read["t"] * 1000
        agent_create = agent_answer = float("nan")
        expected: dict = {"action": "accept", "content": {"question_0": "Blue"}}
        if self.api is not None:
            expected = {"action": "accept", "content": {"colour": "Blue"}}
            call = self.api.of_kind("call")[seq - 1]
            deadline = time.monotonic() + timeout
            while not (after := [e for e in self.api.of_kind("after_output") if call.call_id in _call_ids(e)]):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the model never got answer {index} back")
                time.sleep(0.002)
            agent_create = t_written - call.t_sent * 1000
            agent_answer = after[0].t_received * 1000 - t_read
            page.wait_for_selector("[data-testid=task-sessions][data-session-state=WAITING_FOR_INPUT]")
        return Cycle(
            index=index,
            t_start=t_start,
            create_to_overlay=wall("dom") - t_written,
            create_to_frame=wall("frame") - t_written,
            create_to_rendered=wall("rendered") - t_written,
            create_to_ws=wall("ws") - t_written,
            submit_to_read=t_read - wall("click"),
            click_to_send=marks["send"] - marks["click"] if marks.get("send") else float("nan"),
            send_to_read=t_read - wall("send"),
            read_to_http=wall("answer") - t_read,
            clock_uncertainty=uncertainty,
            answer_ok=read.get("result") == expected,
            outcome=str(marks.get("status") or ""),
            t_written=written["t"],
            t_read=read["t"],
            t_click=wall("click") / 1000,
            pending_id=pending_id,
            agent_create=agent_create,
            agent_answer=agent_answer,
        )


def _call_ids(exchange) -> set:
    """The call ids whose output a model request carries."""
    return {item.get("call_id") for item in exchange.outputs()}
