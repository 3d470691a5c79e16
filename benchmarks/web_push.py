"""Latency of a question's Web Push: ``elicitation/create`` -> the push request received by the push service.

    .venv/bin/python -m benchmarks.web_push [--runs 200] [--warmup 5] [--json out.json]

The same stack as ``benchmarks.latency`` (server, bench agent, a browser
page on the task, answering each question), with the operator subscribed to
a local push service (testing_support/fakes.py) that decrypts
every push and checks it is this question's. Each run's time is from the
agent writing ``elicitation/create`` (its ``time.time()``) to the push
service having read the request (its ``time.time()``, same machine). Two
loopback floors, measured in the quiet after every run: a WebSocket round
trip (as ``benchmarks.latency``'s baseline) and an HTTP POST of a push-sized
body to the same push service with requests, pywebpush's client.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/web_push.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import json
import time
from pathlib import Path

import requests

from benchmarks import support
from benchmarks.stack import ElicitationStack
from testing_support.fakes import FakeBrowser, PushService

TARGET_PUSH_P50 = 100.0


def subscribe(stack: ElicitationStack, subscription: dict) -> None:
    """Subscribe the bench operator's browser on the server, as the settings page's POST would."""
    script = (
        "from django.contrib.auth import get_user_model;"
        "from kandev_web.notifications import services, webpush;"
        f"subscription = webpush.parse_subscription({subscription!r}, allow_http=True);"
        "services.subscribe(get_user_model().objects.get(username='bench'), subscription)"
    )
    stack.server.manage("shell", "-c", script)


def http_floor(endpoint: str, count: int) -> list[float]:
    """Loopback POSTs of a push-sized body to the push service, as pywebpush makes them (ms)."""
    out = []
    body = b"\0" * 200
    for _ in range(count):
        started = time.perf_counter()
        requests.post(endpoint, data=body, headers={"TTL": "60", "Content-Encoding": "aes128gcm"}, timeout=5)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = support.cycle_parser(__doc__)
    parser.add_argument("--floor-per-run", type=int, default=3, help="round trips of each floor after each cycle")
    args = parser.parse_args(argv)

    support.header("web push: elicitation/create -> push request received by the push service")
    push_service = PushService()
    browser = FakeBrowser()
    endpoint = push_service.endpoint("bench")
    floor_endpoint = push_service.endpoint("floor")
    try:
        with support.workdir(keep=args.keep) as directory, ElicitationStack(directory) as stack:
            subscribe(stack, browser.subscription(endpoint))
            pushes, ws_floor, post_floor, wrong = [], [], [], []
            deadline = time.monotonic() + args.max_seconds
            for i in range(-args.warmup, args.runs):
                if time.monotonic() > deadline:
                    print(f"   stopped after {i} runs: --max-seconds {args.max_seconds} reached")
                    break
                cycle = stack.cycle(i)
                push = push_service.wait_for(endpoint, count=args.warmup + i + 1, timeout=20)[-1]
                payload = push.decrypt(browser)
                if payload["url"] != f"/tasks/{stack.task_id}/" or "Which" in payload["body"]:
                    wrong.append(i)
                time.sleep(args.gap)
                if i >= 0:
                    pushes.append((push.at - cycle.t_written) * 1000)
                    ws_floor += stack.baseline(args.floor_per_run)
                    post_floor += http_floor(floor_endpoint, args.floor_per_run)
            ws = support.Summary("loopback WebSocket round trip (baseline)", ws_floor)
            post = support.Summary("loopback HTTP POST to the push service", post_floor)
            latency = support.Summary("elicitation/create -> push received", pushes)
            print(ws.line())
            print(post.line(ws))
            print(latency.line(ws, post))
            print(
                f"target p50 <= {TARGET_PUSH_P50:.0f} ms: "
                f"{'MET' if latency.p50 <= TARGET_PUSH_P50 else 'MISSED'} ({latency.p50:.1f} ms)"
            )
            print(f"pushes: {len(pushes)} measured, {len(wrong)} not this question's or naming its text")
    finally:
        push_service.close()
    support.footer()
    if args.json:
        result = {
            "baseline": ws.as_dict(),
            "post_floor": post.as_dict(ws),
            "create_to_push": latency.as_dict(ws, post),
            "target_p50_ms": TARGET_PUSH_P50,
            "met": latency.p50 <= TARGET_PUSH_P50,
            "wrong": wrong,
        }
        args.json.write_text(json.dumps({"web_push": result}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
