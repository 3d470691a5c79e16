"""Latency of an elicitation through the whole stack, over N runs in one agent session.

    .venv/bin/python -m benchmarks.latency [--runs 200] [--warmup 5] [--json out.json]
    scripts/bench latency --profile several-machines [--runs 100]

(a) ``elicitation/create`` written by the agent -> overlay in the operator's
page; (b) Submit clicked -> ACP answer read by the agent. Each with p50, p95,
p99 and its ratios to two references measured in the same run, in the quiet
after every cycle: a bare loopback WebSocket round trip (``--baseline-per-run``)
and the framework floor (``--floor-per-run``), a minimal Channels consumer's
``group_send`` of a small out-of-band fragment to an htmx ws page in the same
chromium (``benchmarks/floor/``). How each timestamp is taken, and on which
clock: ``benchmarks/stack.py``, ``benchmarks/floor/probe.py`` and BENCHMARKS.md#method.

``--background-streams N`` then measures both paths again, in the same run,
while N other sessions of the same server (another operator's, Mock agent)
each stream chunks at ``--background-rate`` a second (25), with no page
watching them (``benchmarks/streams.py``): each figure with its ratio to the
idle one, and the issue's target, (a) p50 within 2x of idle. The sessions are
started after the idle cycles, so those are measured as without the option.

``--agent codex`` puts the real Codex adapter (``@agentclientprotocol/codex-acp``,
installed by scripts/test, signed in through its gateway to a scripted
Responses API, in Plan mode) in place of the scripted agent, behind
``benchmarks/codex_tap.py``, which stamps where the scripted agent does: (a)
and (b) are then kandev's own path with Codex's question, and what Codex
itself takes (the model's call -> its ``elicitation/create``; the answer ->
the model's next request) is printed apart. A prompt starts each cycle.

``--profile several-machines`` runs the same cycles on PostgreSQL, Redis, two
web processes and an SSH executor (``benchmarks/profiles.py``), the framework
floor then in two processes on the same Redis; both references are measured
in the same run on that profile, so each profile's ratios compare.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/latency.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import json
import math
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import profiles, streams, support
from benchmarks.floor.probe import FrameworkFloor
from benchmarks.stack import CODEX, MOCK, Cycle, ElicitationStack
from benchmarks.trace_server import PATCHES

TARGET_SUBMIT_P50 = 5.0
TARGET_OVERLAY_P50 = 15.0
TARGET_OVERLAY_P99 = 40.0
#: With ``--extra-sockets 5``: five more task pages open on the same task.
TARGET_OVERLAY_P50_EXTRA = 20.0
#: With ``--background-streams``: (a) p50 at most this many times its idle p50 of the same run.
TARGET_OVERLAY_P50_BACKGROUND_RATIO = 2.0


@dataclass
class Phase:
    """The cycles of one phase of the run, and the references measured in the quiet after each."""

    cycles: list[Cycle] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    ssh_baseline: list[float] = field(default_factory=list)
    floors: list = field(default_factory=list)
    #: ``time.time()`` at its start and end.
    started: float = 0.0
    ended: float = 0.0


def figures(
    cycles, baseline: list[float], floors
) -> tuple[support.Summary, support.Summary, dict[str, support.Summary]]:
    """(the loopback baseline, the framework floor, the product's paths and their parts)."""
    base = support.Summary("loopback WebSocket round trip (baseline)", baseline)
    floor = support.Summary("framework floor: trigger -> element in DOM", [f.trigger_to_dom for f in floors])

    def summary(name: str, attr: str) -> support.Summary:
        return support.Summary(name, [v for c in cycles if not math.isnan(v := getattr(c, attr))])

    return (
        base,
        floor,
        {
            "create_to_overlay": summary("(a) create -> overlay in DOM", "create_to_overlay"),
            "create_to_frame": summary("    create -> next animation frame", "create_to_frame"),
            "create_to_rendered": summary("    create -> that frame rendered", "create_to_rendered"),
            "create_to_ws": summary("    create -> WS frame reached page", "create_to_ws"),
            "submit_to_read": summary("(b) Submit click -> ACP answer read", "submit_to_read"),
            "click_to_send": summary("    click -> answer frame sent", "click_to_send"),
            "send_to_read": summary("    frame sent -> ACP answer read", "send_to_read"),
            "read_to_http": summary("    ACP answer read -> outcome back", "read_to_http"),
        },
    )


def report(
    cycles, baseline: list[float], floors, *, quiet: bool = False, extra_sockets: int = 0, ssh_baseline=()
) -> dict:
    base, floor, parts = figures(cycles, baseline, floors)
    print(base.line())
    tunnelled = support.Summary("    the same round trip through an SSH tunnel", list(ssh_baseline))
    if tunnelled.values:
        print(tunnelled.line(base))
    print(floor.line(base))
    for summary in parts.values():
        print(summary.line(base, floor))
    overlay, submit = parts["create_to_overlay"], parts["submit_to_read"]
    print(
        f"target (b) submit -> ACP answer p50 <= {TARGET_SUBMIT_P50:.0f} ms: "
        f"{'MET' if submit.p50 <= TARGET_SUBMIT_P50 else 'MISSED'} ({submit.p50:.1f} ms)"
    )
    overlay_target = TARGET_OVERLAY_P50_EXTRA if extra_sockets else TARGET_OVERLAY_P50
    print(
        f"target (a) create -> overlay p50 <= {overlay_target:.0f} ms"
        f"{f' with {extra_sockets} extra sockets' if extra_sockets else ''}: "
        f"{'MET' if overlay.p50 <= overlay_target else 'MISSED'} ({overlay.p50:.1f} ms)"
    )
    if not extra_sockets:
        print(
            f"target (a) create -> overlay p99 <= {TARGET_OVERLAY_P99:.0f} ms: "
            f"{'MET' if overlay.p99 <= TARGET_OVERLAY_P99 else 'MISSED'} ({overlay.p99:.1f} ms)"
        )
    if not quiet and len(cycles) >= 8:
        quarter = len(cycles) // 4
        chunks = [cycles[i * quarter : (i + 1) * quarter] for i in range(4)]
        print(
            "by quarter of the run, p50 (a) / (b) ms: "
            + "  ".join(
                f"Q{i + 1} {statistics.median(c.create_to_overlay for c in chunk):.1f}/"
                f"{statistics.median(c.submit_to_read for c in chunk):.1f}"
                for i, chunk in enumerate(chunks)
            )
        )
    uncertainty = [c.clock_uncertainty for c in cycles] + [f.clock_uncertainty for f in floors]
    print(
        f"page-clock calibration uncertainty (both pages): median {statistics.median(uncertainty):.2f} ms, "
        f"max {max(uncertainty):.2f} ms"
    )
    bad, undelivered = answers(cycles)
    own = agent_costs(cycles)
    return {
        **own,
        "baseline": base.as_dict(),
        **({"ssh_baseline": tunnelled.as_dict(base)} if tunnelled.values else {}),
        "floor": floor.as_dict(base),
        **{key: s.as_dict(base, floor) for key, s in parts.items()},
        "targets": {
            "submit_to_read_p50_ms": TARGET_SUBMIT_P50,
            "submit_to_read_met": submit.p50 <= TARGET_SUBMIT_P50,
            "create_to_overlay_p50_ms": overlay_target,
            "create_to_overlay_met": overlay.p50 <= overlay_target,
            "create_to_overlay_p99_ms": TARGET_OVERLAY_P99,
            "create_to_overlay_p99_met": overlay.p99 <= TARGET_OVERLAY_P99,
            "extra_sockets": extra_sockets,
        },
        "bad_answers": bad,
        "not_delivered": undelivered,
    }


def agent_costs(cycles) -> dict:
    """``--agent codex``: what the agent itself took, outside (a) and (b); nothing for the scripted agent."""
    create = support.Summary(
        "agent itself: model call sent -> elicitation/create",
        [c.agent_create for c in cycles if not math.isnan(c.agent_create)],
    )
    answer = support.Summary(
        "agent itself: answer read -> model's next request",
        [c.agent_answer for c in cycles if not math.isnan(c.agent_answer)],
    )
    if not create.values:
        return {}
    print(create.line())
    print(answer.line())
    return {"agent_create": create.as_dict(), "agent_answer": answer.as_dict()}


def answers(cycles) -> tuple[list[int], list[int]]:
    """The runs whose answer the agent did not read as given, and those whose page was not told 'delivered'."""
    bad = [c.index for c in cycles if not c.answer_ok]
    undelivered = [c.index for c in cycles if c.outcome != "delivered"]
    print(
        f"answers: the agent read the operator's Blue in "
        f"{len(cycles) - len(bad)} of {len(cycles)} runs; the page was told 'delivered' in "
        f"{len(cycles) - len(undelivered)}"
    )
    return bad, undelivered


def to_idle(loaded: support.Summary, idle: support.Summary) -> dict[str, float]:
    """Each percentile of ``loaded`` as a ratio to the same of ``idle``."""
    if not (loaded.values and idle.values):
        return {}
    return {f"idle_ratio_{p}": getattr(loaded, p) / getattr(idle, p) for p in ("p50", "p95", "p99")}


def report_background(idle: Phase, loaded: Phase, *, streams: int, rate: float, recorded: int, turns: int) -> dict:
    """The loaded phase's figures, each against its own references and its idle value; the 2x target."""
    seconds = loaded.ended - loaded.started
    print(f"while {streams} other sessions each stream {rate:g} chunks a second (no page watching them):")
    idle_base, idle_floor, idle_parts = figures(idle.cycles, idle.baseline, idle.floors)
    base, floor, parts = figures(loaded.cycles, loaded.baseline, loaded.floors)

    def line(summary: support.Summary, reference: support.Summary, text: str) -> str:
        ratios = to_idle(summary, reference)
        if not ratios:
            return text
        return text + "  | x idle: " + " ".join(f"{k[-3:]} {v:5.2f}x" for k, v in ratios.items())

    print(line(base, idle_base, base.line()))
    print(line(floor, idle_floor, floor.line(base)))
    for key, summary in parts.items():
        print(line(summary, idle_parts[key], summary.line(base, floor)))
    overlay, idle_overlay = parts["create_to_overlay"], idle_parts["create_to_overlay"]
    ratio = overlay.p50 / idle_overlay.p50
    met = ratio <= TARGET_OVERLAY_P50_BACKGROUND_RATIO
    print(
        f"target (a) create -> overlay p50 within {TARGET_OVERLAY_P50_BACKGROUND_RATIO:g}x of idle "
        f"({idle_overlay.p50:.1f} ms): {'MET' if met else 'MISSED'} ({overlay.p50:.1f} ms, {ratio:.2f}x)"
    )
    asked = streams * rate * seconds
    print(
        f"background: {recorded} chunks sent in the {seconds:.1f} s measured and recorded by its end, "
        f"{recorded / seconds:.0f}/s of the {streams * rate:g}/s asked ({recorded / asked:.0%}); {turns} turns"
    )
    bad, undelivered = answers(loaded.cycles)
    return {
        "streams": streams,
        "rate": rate,
        "seconds": seconds,
        "chunks_recorded": recorded,
        "chunks_per_second": recorded / seconds,
        "turns": turns,
        "baseline": {**base.as_dict(), **to_idle(base, idle_base)},
        "floor": {**floor.as_dict(base), **to_idle(floor, idle_floor)},
        **{key: {**s.as_dict(base, floor), **to_idle(s, idle_parts[key])} for key, s in parts.items()},
        "targets": {
            "create_to_overlay_p50_idle_ratio": TARGET_OVERLAY_P50_BACKGROUND_RATIO,
            "create_to_overlay_within_idle_ratio": met,
        },
        "bad_answers": bad,
        "not_delivered": undelivered,
    }


def measure(args, stack: ElicitationStack, floor: FrameworkFloor) -> Phase:
    """``--runs`` cycles, each followed by the references, for at most ``--max-seconds``."""
    phase = Phase(started=time.time())
    deadline = time.monotonic() + args.max_seconds
    for i in range(args.runs):
        if time.monotonic() > deadline:
            print(f"   stopped after {i} runs: --max-seconds {args.max_seconds} reached")
            break
        phase.cycles.append(stack.cycle(i))
        # The references are taken in the quiet between cycles, on the same machine in the same run.
        time.sleep(args.gap)
        phase.baseline += stack.baseline(args.baseline_per_run)
        phase.ssh_baseline += stack.ssh_baseline(args.baseline_per_run)
        phase.floors += [floor.cycle() for _ in range(args.floor_per_run)]
    phase.ended = time.time()
    print(f"   measured in {phase.ended - phase.started:.1f} s; RSS KiB {stack.process_rss()}")
    return phase


def under_background(args, stack: ElicitationStack, floor: FrameworkFloor, idle: Phase) -> dict:
    """The same cycles again while ``--background-streams`` sessions stream; their figures against ``idle``'s."""
    assert stack.sqlite_path is not None
    started = time.monotonic()
    sessions = streams.Sessions(stack.server, streams.Database(stack.sqlite_path), args.background_streams)
    try:
        with streams.Background(sessions, args.background_rate) as background:
            print(
                f"   {args.background_streams} background sessions started and streaming in "
                f"{time.monotonic() - started:.1f} s"
            )
            loaded = measure(args, stack, floor)
        recorded = background.recorded(loaded.started, loaded.ended)
    finally:
        sessions.operator.close()
    result = report_background(
        idle,
        loaded,
        streams=args.background_streams,
        rate=args.background_rate,
        recorded=recorded,
        turns=background.turns,
    )
    result["cycles"] = [c.__dict__ for c in loaded.cycles]
    return result


def trace_breakdown(cycles, trace_path: Path) -> dict:
    """Where the time of each cycle went on the server, from ``trace_server`` probes (ms, medians)."""
    events = [json.loads(line) for line in trace_path.read_text().splitlines() if line.strip()]

    def first(name, after, pred=lambda d: True, before=None):
        for t, _thread, n, detail in events:
            if n == name and t >= after and (before is None or t <= before) and pred(detail):
                return t
        return None

    parts: dict[str, list[float]] = {}

    def add(key, start, end):
        if start is not None and end is not None:
            parts.setdefault(key, []).append((end - start) * 1000)

    for c in cycles:
        applied = first("apply>", c.t_written, lambda d: d == "elicitation.requested")
        applied_end = first("apply<", applied or c.t_written, lambda d: d == "elicitation.requested")
        sent = first("send>", applied or c.t_written, lambda d: d[1] == "clarification.asked")
        sent_end = first("send<", sent or c.t_written, lambda d: d[1] == "clarification.asked")
        handled = first("consumer>", sent or c.t_written, lambda d: d == "clarification_asked")
        overlay_out = first("ws", handled or c.t_written, lambda d: d["overlay"])
        add("agent write -> runner applies elicitation.requested", c.t_written, applied)
        rendering = first("overlay>", applied or c.t_written)
        handling = first("handler>", applied or c.t_written)
        recording = first("record>", handling or c.t_written)
        recorded = first("record<", recording or c.t_written)
        add("runner applies -> its thread runs the handler", applied, handling)
        add("handler runs -> record transaction starts", handling, recording)
        add("record transaction (insert, commit)", recording, recorded)
        add("record committed -> overlay rendering starts", recorded, rendering)
        add("runner applies -> record committed", applied, rendering)
        add("overlay rendered (query + template)", rendering, first("overlay<", rendering or c.t_written))
        add("runner applies -> overlay queued", applied, sent)
        add("runner: record_requested, all of it", applied, applied_end)
        add("group_send(clarification.asked) called -> returned", sent, sent_end)
        add("group_send(clarification.asked) -> TaskConsumer handler runs", sent, handled)
        add("handler runs -> overlay frame written to the socket", handled, overlay_out)
        received = first("receive>", c.t_click)
        forwarded = first("forward>", c.t_click)
        arrived = first("frame-in>", c.t_click)
        add("Submit click -> TaskConsumer.receive starts", c.t_click, received)
        add("Submit click -> the server reads the answer's frame", c.t_click, arrived)
        add("the server reads the frame -> TaskConsumer.receive starts", arrived, received)
        add("receive starts -> forward() starts", received, forwarded)
        add("forward() starts -> agent reads the answer", forwarded, c.t_read)
        add("agent reads the answer -> forward() returns", c.t_read, first("forward<", c.t_read))
    out = {}
    print("server-side breakdown (trace_server probes), median / p95 ms:")
    for key, values in parts.items():
        out[key] = {"n": len(values), "p50": support.percentile(values, 50), "p95": support.percentile(values, 95)}
        print(f"    {key:<60} {out[key]['p50']:8.2f} / {out[key]['p95']:8.2f}  (n={len(values)})")
    return out


def profiler(args, stack: ElicitationStack, directory: Path) -> list[subprocess.Popen]:
    """py-spy (if asked for) on the server and agentctl, sampling all threads."""
    if not args.py_spy:
        return []
    targets = {"server": stack.server.pid, **{f"agentctl-{p}": p for p in stack.agentctl_pids()}}
    if stack.page_server is not stack.server:
        targets["server-b"] = stack.page_server.pid
    processes = []
    for name, pid in targets.items():
        out = directory / f"py-spy-{name}.txt"
        processes.append(
            subprocess.Popen(
                [
                    args.py_spy,
                    "record",
                    "--pid",
                    str(pid),
                    "--rate",
                    "250",
                    "--format",
                    "raw",
                    "--threads",
                    "--idle",
                    "--output",
                    str(out),
                    "--nonblocking",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        print(f"   profiling {name} (pid {pid}) into {out}")
    return processes


def arguments(argv: list[str] | None):
    """The command line's options, checked against each other."""
    parser = support.cycle_parser(__doc__)
    parser.add_argument("--baseline-per-run", type=int, default=5, help="echo round trips after each cycle")
    parser.add_argument("--floor-per-run", type=int, default=2, help="framework floor cycles after each cycle")
    parser.add_argument("--py-spy", metavar="PATH", help="py-spy binary: profile server and agentctl while measuring")
    parser.add_argument("--headed", action="store_true", help="show the browser (needs a display)")
    parser.add_argument("--trace", action="store_true", help="run the server with timing probes and break (a)/(b) down")
    parser.add_argument(
        "--patch",
        action="append",
        default=[],
        choices=sorted(PATCHES),
        help="run the server with a candidate fix patched in (see benchmarks/trace_server.py)",
    )
    parser.add_argument(
        "--extra-sockets", type=int, default=0, help="more task pages open on the same task, each with its socket"
    )
    parser.add_argument(
        "--extra-as",
        choices=("windows", "sockets"),
        default="windows",
        help="the extra pages as browser windows (the default), or as bare sockets from a process of their own "
        "(what they cost the server, apart from what more windows cost the browser on the same cores)",
    )
    parser.add_argument(
        "--background-streams",
        type=int,
        default=0,
        metavar="N",
        help="then measure again while N other sessions of the server stream chunks (default 0: not at all)",
    )
    parser.add_argument(
        "--background-rate",
        type=float,
        default=25,
        metavar="R",
        help="chunks a second each background session streams (default 25)",
    )
    parser.add_argument(
        "--agent",
        choices=(MOCK, CODEX),
        default=MOCK,
        help="the scripted agent (default), or the real Codex adapter asking with request_user_input",
    )
    profiles.add_profile_option(parser)
    args = parser.parse_args(argv)
    if args.agent == CODEX and (args.profile == profiles.SEVERAL_MACHINES or args.background_streams):
        parser.error("--agent codex runs idle on the embedded profile only")
    if args.floor_per_run < 1:
        parser.error("--floor-per-run must be at least 1: every run reports its paths against the floor")
    several = args.profile == profiles.SEVERAL_MACHINES
    if several and (args.trace or args.patch):
        parser.error("--trace and --patch run on the embedded profile only")
    if several and args.background_streams:
        parser.error("--background-streams runs on the embedded profile only")
    if args.background_streams < 0 or args.background_rate <= 0:
        parser.error("--background-streams must be at least 0 and --background-rate above 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    several = args.profile == profiles.SEVERAL_MACHINES
    support.header(
        f"latency: elicitation/create -> overlay, Submit -> ACP answer (profile {args.profile}, agent {args.agent})"
    )
    if several:
        print(
            "   several machines: PostgreSQL (pool), Redis, agent stream held by web process A over SSH, "
            "page on web process B; floor across two processes on Redis"
        )
    print(
        f"   runs {args.runs} (+{args.warmup} warm-up), {args.baseline_per_run} baseline round trips and "
        f"{args.floor_per_run} framework floor cycles per run"
    )
    if args.background_streams:
        print(
            f"   then the same again while {args.background_streams} other sessions each stream "
            f"{args.background_rate:g} chunks a second"
        )
    started = time.monotonic()
    if args.patch:
        print(f"   server patched with candidate fix(es): {', '.join(args.patch)} (not the product as committed)")
    with (
        support.workdir(keep=args.keep or bool(args.py_spy)) as directory,
        ElicitationStack(
            directory,
            headless=not args.headed,
            trace=args.trace,
            patches=tuple(args.patch),
            profile=args.profile,
            agent=args.agent,
        ) as stack,
        FrameworkFloor(
            directory, stack.browser, redis_url=stack.services.redis_url if stack.services else None
        ) as floor,
    ):
        if args.extra_as == "sockets":
            stack.open_extra_sockets(args.extra_sockets)
        else:
            stack.open_extra_pages(args.extra_sockets)
        print(
            f"   stack up in {time.monotonic() - started:.1f} s, {args.extra_sockets} extra task pages open "
            f"(as {args.extra_as}); "
            f"RSS KiB {stack.process_rss()}"
        )
        open_sockets = stack.open_sockets()
        print(f"   live sockets open on the page's process: {open_sockets}")
        placement = {
            "extra_as": args.extra_as,
            "open_sockets": open_sockets,
            "stream_held_by": stack.server.url,
            "page_on": stack.page_server.url,
            "agentctl_started_by": [name for pid in stack.agentctl_pids() for name in support.ancestors(pid)[:3]],
        }
        print(
            f"   agent stream held by {placement['stream_held_by']}, page on {placement['page_on']}; "
            f"agentctl started by {' < '.join(placement['agentctl_started_by'])}"
        )
        for i in range(args.warmup):
            stack.cycle(-1 - i)
            time.sleep(args.gap)
            stack.baseline(args.baseline_per_run)
            floor.cycle()
        spies = profiler(args, stack, directory)
        if args.background_streams:
            print("idle (no background streams):")
        idle = measure(args, stack, floor)
        measured = report(
            idle.cycles, idle.baseline, idle.floors, extra_sockets=args.extra_sockets, ssh_baseline=idle.ssh_baseline
        )
        result = {"profile": args.profile, **placement, **measured}
        if stack.trace_path:
            result["server_breakdown"] = trace_breakdown(idle.cycles, stack.trace_path)
        cycles = {"cycles": [c.__dict__ for c in idle.cycles]}
        if args.background_streams:
            result["background"] = under_background(args, stack, floor, idle)
            cycles["background_cycles"] = result["background"].pop("cycles")
        for spy in spies:
            spy.send_signal(2)
            spy.wait(timeout=30)
    support.footer()
    if args.json:
        args.json.write_text(json.dumps({"latency": result, **cycles}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
