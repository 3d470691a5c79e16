"""500 sessions, each with a pending elicitation, answered concurrently (agentctl level).

    .venv/bin/python -m benchmarks.concurrency [--sessions 500] [--batches 5]
    scripts/bench concurrency --profile several-machines [--sessions 500]

One real ``kandev-agentctl`` runs ``benchmarks/bench_agent.py``; this script is
its client over the agent stream (``AgentStreamClient``, as the web app is).
It opens ``--sessions`` ACP sessions in that one agent, sends a prompt in each
(every turn stays open), then has the agent send one ``elicitation/create``
per session, ``--batches`` batches of sessions/batches, reading agentctl's RSS
(``/proc/<pid>/status`` VmRSS) before and after each batch is parked.

Round 1, latency: every pending is answered once, all at once
(``asyncio.gather`` of ``agent.elicitations.respond``). Figures: answer sent ->
ACP answer read by the agent (both ``time.time()`` on this machine), and answer
sent -> agentctl's response.

Round 2, exactly once: a new pending per session, each answered twice at the
same moment by two different connections. Exactly one answer per pending must
win, the other must get NOT_FOUND, the agent must read exactly one ACP answer
per request and every pending must be settled exactly once.

Why not through the web app: each task session gets its own agentctl and agent
process (about 40 MiB together, and a Python start-up each) and the web app
re-renders the task page for every change; 500 of them on this 2-core machine
would measure process start-up and swapping, not answering. The web app's
share of one answer is what ``benchmarks.latency`` measures.

``--profile several-machines``: agentctl is started on the SSH executor host
(the private sshd ``scripts/bench`` runs, through ``SshExecutor.launch`` as a
web process starts it), and the two connections reach it as two web processes
do, each through an SSH connection and tunnel of its own: the first holds the
stream (it gets the notifications), the second is the other web process's.
Round 1 goes through the first; round 2 races the two tunnels. PostgreSQL and
Redis play no part at this level. The loopback round trip is the same one,
and beside it the same round trip through an SSH tunnel to the host.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/concurrency.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import argparse
import asyncio
import collections
import json
import os
import secrets
import time
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path

from benchmarks import profiles, support
from benchmarks.bench_agent import CONTROL_VAR, RECORD_VAR

ANSWER = [{"question_id": "question_0", "selected_options": ["Blue"], "custom_text": ""}]


class Notes:
    """agentctl's notifications as they arrive, with their arrival time."""

    def __init__(self) -> None:
        self.by_action: dict[str, list[tuple[float, dict]]] = collections.defaultdict(list)
        self.changed = asyncio.Event()

    def __call__(self, action: str, payload: dict) -> None:
        self.by_action[action].append((time.time(), payload))
        self.changed.set()

    async def wait_count(self, action: str, count: int, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while len(self.by_action[action]) < count:
                self.changed.clear()
                await self.changed.wait()


def agentctl_rss(pid: int) -> int:
    return support.rss_kib(pid)


async def wait_agent(record: support.AgentRecord, predicate, count: int, timeout: float) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        record.poll()
        found = [e for e in record.events if predicate(e)]
        if len(found) >= count:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"the agent recorded {len(found)} of {count} expected events")
        await asyncio.sleep(0.01)


async def respond(client, pending_id: str) -> tuple[float, float, str]:
    """(sent, answered, outcome) for one answer; outcome is "ok" or the error code."""
    from kandev_web.agentctl.stream_client import StreamError

    payload = {"pending_id": pending_id, "answers": ANSWER, "rejected": False, "reject_reason": ""}
    sent = time.time()
    try:
        result = await client.request("agent.elicitations.respond", payload, timeout=60)
        outcome = "ok" if result.get("content") == {"question_0": "Blue"} else f"bad result {result}"
    except StreamError as error:
        outcome = error.code
    return sent, time.time(), outcome


async def start_agentctl(profile: str, env: dict[str, str], directory: Path, closing: AsyncExitStack):
    """(agentctl, the stream URL of the first connection, of the second) on this profile.

    Embedded: agentctl is this process's child and both connections go
    straight to it. Several machines: started on the SSH host through one
    SSH connection, whose tunnel the first connection uses; the second gets a
    tunnel through an SSH connection of its own.
    """
    from kandev_web.agentctl.launcher import launch
    from kandev_web.executor.ssh import SshExecutor

    if profile == profiles.EMBEDDED:
        agentctl = await launch(support.bench_agent_command(), env={**os.environ, **env})
        return agentctl, agentctl.url, agentctl.url
    host = ssh_host(directory)
    holder, other = SshExecutor(host), SshExecutor(host)
    closing.push_async_callback(holder.close)
    closing.push_async_callback(other.close)
    agentctl = await holder.launch(
        support.bench_agent_command(),
        env=env,
        token=secrets.token_urlsafe(32),
        workdir=str(directory),
        workdir_name="bench",
    )
    return agentctl, agentctl.url, await other.tunnel(agentctl.remote_url)


def ssh_host(directory: Path):
    """The several-machines profile's SSH host, its folders in the run's own."""
    return replace(
        profiles.Services.from_environ("concurrency").ssh,
        workdir_root=str(directory / "ssh-workdirs"),
        worktree_root=str(directory / "ssh-worktrees"),
    )


async def run(args, directory: Path) -> dict:
    async with AsyncExitStack() as closing:
        return await _run(args, directory, closing)


async def _run(args, directory: Path, closing: AsyncExitStack) -> dict:
    from kandev_web.agentctl.stream_client import AgentStreamClient
    from testing_support.agentctl import text_prompt

    n = args.sessions
    record = support.AgentRecord(directory / "agent-record.jsonl")
    control = support.Control(directory / "control.fifo")
    env = {
        RECORD_VAR: str(record.path),
        CONTROL_VAR: str(control.path),
        "PYTHONPATH": str(support.ROOT),
        "KANDEV_AGENTCTL_LOG_LEVEL": "WARNING",
    }
    baseline = support.EchoBaseline()
    tunnelled_echo = None
    if args.profile == profiles.SEVERAL_MACHINES:
        tunnelled_echo = support.EchoBaseline(via=ssh_host(directory))
        closing.callback(tunnelled_echo.close)
    agentctl, first_url, second_url = await start_agentctl(args.profile, env, directory, closing)
    notes = Notes()
    clients = [
        AgentStreamClient(first_url, agentctl.token, on_notification=notes),
        AgentStreamClient(second_url, agentctl.token),
    ]
    for client in clients:
        await client.connect()
    client = clients[0]
    result: dict = {
        "profile": args.profile,
        "sessions": n,
        "agentctl_started_by": support.ancestors(agentctl.pid)[:3],
        "tunnelled": first_url != second_url,
    }
    print(f"   agentctl started by {' < '.join(result['agentctl_started_by'])}")
    try:
        rss_start = agentctl_rss(agentctl.pid)
        await client.request(
            "agent.initialize", {"agent_id": "bench-agent", "runtime_flags": {"features.acpElicitation": True}}
        )
        started = time.monotonic()
        session_ids = []
        for chunk in range(0, n, 100):
            opened = await asyncio.gather(
                *(
                    client.request("agent.session.new", {"cwd": str(directory), "mcp_servers": []})
                    for _ in range(min(100, n - chunk))
                )
            )
            session_ids += [s["session_id"] for s in opened]
        await asyncio.gather(
            *(
                client.request("agent.prompt", {"session_id": s, "prompt": text_prompt("wait for me")})
                for s in session_ids
            )
        )
        await wait_agent(record, lambda e: e["event"] == "prompt", n, 60)
        print(f"   {n} sessions opened and prompted in {time.monotonic() - started:.1f} s")
        await asyncio.sleep(0.5)
        rss_before = agentctl_rss(agentctl.pid)
        rss_steps = [(0, rss_before)]
        per_batch = -(-n // args.batches)
        parked = 0
        started = time.monotonic()
        while parked < n:
            batch = min(per_batch, n - parked)
            control.send(f"go {batch}")
            parked += batch
            await notes.wait_count("elicitation.requested", parked, 60)
            await asyncio.sleep(0.2)
            rss_steps.append((parked, agentctl_rss(agentctl.pid)))
        park_seconds = time.monotonic() - started
        rss_parked = rss_steps[-1][1]
        print(f"   {n} elicitations parked in {park_seconds:.2f} s")
        print("   agentctl RSS (KiB) by pendings parked: " + ", ".join(f"{k}: {v}" for k, v in rss_steps))
        kib_per_pending = (rss_parked - rss_before) / n
        # Least squares over the batches, less sensitive to one allocator step.
        xs, ys = [k for k, _ in rss_steps], [v for _, v in rss_steps]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
        print(f"   agentctl memory per pending: {kib_per_pending:.2f} KiB (end - start), {slope:.2f} KiB (slope)")

        # Round 1: every pending answered once, all at once.
        requested = [p for _, p in notes.by_action["elicitation.requested"]]
        pending_by_session = {p["session_id"]: p["pending_id"] for p in requested}
        await wait_agent(record, lambda e: e["event"] == "written", n, 30)
        written = {e["session"]: e for e in record.events if e["event"] == "written"}
        baseline_before = [baseline.round_trip() for _ in range(args.baseline)]
        tunnelled_before = [tunnelled_echo.round_trip() for _ in range(args.baseline)] if tunnelled_echo else []
        t0 = time.monotonic()
        answers = await asyncio.gather(*(respond(client, pending_by_session[s]) for s in session_ids))
        round1_seconds = time.monotonic() - t0
        reads = await wait_agent(record, lambda e: e["event"] == "read", n, 60)
        await notes.wait_count("elicitation.settled", n, 60)
        read_by_id = collections.defaultdict(list)
        for event in reads:
            read_by_id[event["id"]].append(event)
        to_read, to_response = [], []
        for session, (sent, answered, _) in zip(session_ids, answers, strict=True):
            agent_reads = read_by_id[written[session]["id"]]
            to_response.append((answered - sent) * 1000)
            if agent_reads:
                to_read.append((agent_reads[0]["t"] - sent) * 1000)
        ok1 = sum(1 for *_, outcome in answers if outcome == "ok")
        once1 = sum(1 for s in session_ids if len(read_by_id[written[s]["id"]]) == 1)
        blue = [{"action": "accept", "content": {"question_0": "Blue"}}]
        right1 = sum(1 for s in session_ids if [r["result"] for r in read_by_id[written[s]["id"]]] == blue)
        settled1 = collections.Counter(p["pending_id"] for _, p in notes.by_action["elicitation.settled"])
        rss_after = agentctl_rss(agentctl.pid)
        base = support.Summary("loopback WebSocket round trip (baseline)", baseline_before)
        read_summary = support.Summary(f"answer sent -> ACP answer read ({n} at once)", to_read)
        response_summary = support.Summary(f"answer sent -> agentctl response ({n} at once)", to_response)
        print(f"   round 1: {n} answers sent at once, all settled in {round1_seconds * 1000:.0f} ms")
        print(base.line())
        tunnelled_summary = support.Summary("    the same round trip through an SSH tunnel", tunnelled_before)
        if tunnelled_before:
            print(tunnelled_summary.line(base))
        print(read_summary.line(base))
        print(response_summary.line(base))
        print(
            f"   delivered: {ok1}/{n} answers ok; agent read exactly one ACP answer for {once1}/{n} requests, "
            f"the right one for {right1}/{n}; settled exactly once: "
            f"{sum(1 for c in settled1.values() if c == 1)}/{n}"
        )
        print(f"   agentctl RSS after settling: {rss_after} KiB (before parking {rss_before}, parked {rss_parked})")

        # Round 2: every pending answered twice at once, by two connections.
        before = len(notes.by_action["elicitation.requested"])
        control.send(f"go {n}")
        await notes.wait_count("elicitation.requested", before + n, 60)
        round2 = [p for _, p in notes.by_action["elicitation.requested"][before:]]
        await wait_agent(record, lambda e: e["event"] == "written", 2 * n, 30)
        written2 = {e["id"]: e for e in record.events if e["event"] == "written" and e["seq"] > n}
        t0 = time.monotonic()
        raced = await asyncio.gather(*(respond(c, p["pending_id"]) for p in round2 for c in clients))
        round2_seconds = time.monotonic() - t0
        await wait_agent(record, lambda e: e["event"] == "read", 2 * n, 60)
        await notes.wait_count("elicitation.settled", 2 * n, 60)
        await asyncio.sleep(0.5)  # anything extra would arrive now
        record.poll()
        outcomes = collections.Counter(o for *_, o in raced)
        per_pending = collections.Counter()
        for p, (_, _, outcome) in zip([p for p in round2 for _ in clients], raced, strict=True):
            if outcome == "ok":
                per_pending[p["pending_id"]] += 1
        reads2 = collections.Counter(e["id"] for e in record.events if e["event"] == "read" and e["id"] in written2)
        settled2 = collections.Counter(
            p["pending_id"]
            for _, p in notes.by_action["elicitation.settled"]
            if p["pending_id"] in {q["pending_id"] for q in round2}
        )
        exactly_once = (
            all(per_pending[p["pending_id"]] == 1 for p in round2)
            and outcomes.get("NOT_FOUND", 0) == n
            and len(reads2) == n
            and all(c == 1 for c in reads2.values())
            and len(settled2) == n
            and all(c == 1 for c in settled2.values())
        )
        print(
            f"   round 2: {2 * n} answers ({n} pendings x 2 connections) in {round2_seconds * 1000:.0f} ms: "
            f"outcomes {dict(outcomes)}; ACP answers read per request {dict(collections.Counter(reads2.values()))}; "
            f"settled per pending {dict(collections.Counter(settled2.values()))}"
        )
        print(f"exactly once ({n} sessions, answered concurrently, twice each): {'YES' if exactly_once else 'NO'}")
        result.update(
            {
                "baseline": base.as_dict(),
                **({"ssh_baseline": tunnelled_summary.as_dict(base)} if tunnelled_before else {}),
                "sent_to_read": read_summary.as_dict(base),
                "sent_to_response": response_summary.as_dict(base),
                "round1_seconds": round1_seconds,
                "round1_delivered": ok1,
                "round1_read_once": once1,
                "rss_kib": {
                    "start": rss_start,
                    "before_parking": rss_before,
                    "steps": rss_steps,
                    "after_settling": rss_after,
                },
                "kib_per_pending": kib_per_pending,
                "kib_per_pending_slope": slope,
                "round2_outcomes": dict(outcomes),
                "exactly_once": exactly_once,
            }
        )
    finally:
        for c in clients:
            await c.close()
        await agentctl.stop()
        control.close()
        baseline.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=500, help="ACP sessions, one pending each (default 500)")
    parser.add_argument("--batches", type=int, default=5, help="park the pendings in this many batches (default 5)")
    parser.add_argument("--baseline", type=int, default=200, help="loopback WebSocket round trips (default 200)")
    parser.add_argument("--max-seconds", type=float, default=300, help="give up after this long (default 300)")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (agent record)")
    profiles.add_profile_option(parser)
    args = parser.parse_args(argv)

    support.header(
        f"concurrency: {args.sessions} sessions with a pending elicitation each, one agentctl (profile {args.profile})"
    )
    if args.profile == profiles.SEVERAL_MACHINES:
        print("   several machines: agentctl on the SSH executor host, each connection through its own SSH tunnel")

    async def bounded(directory):
        async with asyncio.timeout(args.max_seconds):
            return await run(args, directory)

    with support.workdir(keep=args.keep) as directory:
        result = asyncio.run(bounded(directory))
    support.footer()
    if args.json:
        args.json.write_text(json.dumps({"concurrency": result}, indent=1))
    return 0 if result.get("exactly_once") else 1


if __name__ == "__main__":
    raise SystemExit(main())
