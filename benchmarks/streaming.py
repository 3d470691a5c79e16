"""N agents each streaming M chunks at R a second, with no page and with one page watching (issue 26).

    .venv/bin/python -m benchmarks.streaming [--agents 1,10,20] [--chunks 300] [--rate 25] [--json out.json]

One Daphne (SQLite file database, in-memory channel layer: the default
profile) and one operator with ``max(--agents)`` tasks, each with a session of
the Mock agent: its own ``kandev-agentctl`` and ``python -m
kandev_web.mock_agent``, as an operator starts it. Every session is started
first on a one-line scenario, so every agent is up before any stream begins
and no start-up is measured. Then, for each N and with 0 and 1 page watching,
the first N sessions are sent ``/e2e:stream-chunks M R`` at once (the
composer's POST): each agent sends M ``agent_message_chunk`` s, one every 1/R
s of its own clock, each a Markdown list item with its number and the
``time.time()`` it was written at (the mock agent's ``stream`` step), then
"Done." and the turn's end. A warm-up stream (N = 1, not counted) runs first,
and a long one last: N = 1 with the page, each chunk padded so that the
message reaches ``--long-kb`` (100 KB by default).

The page is a WebSocket client of the first task's socket (``/ws/tasks/<id>/``)
in this process, connected as the page's htmx ws extension is (session cookie,
Origin), stamping every frame's arrival with ``time.time()``. No browser: what
the server does and sends is measured, not how fast chromium paints it.

Figures, per configuration:

- *server CPU per chunk*: the Daphne process's own user + system CPU time
  (``/proc/<pid>/stat``; agentctl and the agents are processes of their own)
  from the prompts' POSTs to the last turn's end recorded, over N x M chunks;
  and the same over the stream's first and last thirds, whose ratio says
  whether a chunk costs more as its message grows (while the agents keep
  pace: a stream that falls behind is measured past its last third);
- *write -> page* (p50, p99): for every chunk of the watched agent, the first
  frame that carries its text, minus the time the agent stamped in it;
- *lag behind the agents' own pace*: each agent's turn's end as recorded
  (``completed_at``, recorded after its last chunk, in order) minus the time
  stamped in its last chunk (p50 and max over the N agents), and the page's
  last chunk (write -> page);
- a check: every agent's message holds chunks 1..M, each once, in order.

Ratios are to the same run: CPU per chunk to N = 1 without a page, write ->
page to N = 1 with one. Loopback only; every wait is bounded.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/streaming.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import argparse
import json
import threading
import time
from contextlib import ExitStack, contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import support
from benchmarks.frozen import REQUEST_TIMEOUT, Operator
from benchmarks.streams import CHUNK, Database, Sessions


def wall(timestamp: str) -> float:
    """A ``completed_at`` as SQLite holds it (UTC) as ``time.time()``."""
    return datetime.fromisoformat(timestamp).replace(tzinfo=UTC).timestamp()


class Page:
    """The watched task page's socket, read on a thread of its own: every frame with its arrival time."""

    def __init__(self, socket) -> None:
        self.socket = socket
        self.frames: list[tuple[float, str]] = []
        self.socket.recv(timeout=REQUEST_TIMEOUT)  # the catch-up: what the page had before the stream
        self._reading = threading.Thread(target=self._read, daemon=True)
        self._reading.start()

    @classmethod
    @contextmanager
    def of(cls, operator: Operator, task_id: int):
        """The task page's socket, as its htmx ws extension opens it (session cookie, Origin), until the block ends."""
        from websockets.sync.client import connect

        url = operator.server.url.replace("http://", "ws://", 1) + f"/ws/tasks/{task_id}/"
        cookie = f"sessionid={operator.http.cookies['sessionid']}"
        with connect(
            url,
            origin=operator.server.url,
            additional_headers={"Cookie": cookie},
            compression=None,
            proxy=None,
            open_timeout=REQUEST_TIMEOUT,
        ) as socket:
            page = cls(socket)
            try:
                yield page
            finally:
                socket.close()
                page._reading.join(timeout=REQUEST_TIMEOUT)

    def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for frame in self.socket:
                self.frames.append((time.time(), str(frame)))
        except ConnectionClosed:
            pass

    def arrivals(self, since: float) -> dict[int, tuple[float, float]]:
        """Each chunk written after ``since``: (written, first frame carrying it)."""
        seen: dict[int, tuple[float, float]] = {}
        for arrived, frame in self.frames:
            for number, written in CHUNK.findall(frame):
                if float(written) >= since and int(number) not in seen:
                    seen[int(number)] = (float(written), arrived)
        return seen


class Bench(Sessions):
    """The sessions, and one measured stream of some of them at a time."""

    def stream(self, agents: int, chunks: int, rate: float, *, watched: bool, pad: int = 0) -> dict:
        sessions = self.session_ids[:agents]
        prompt = f"/e2e:stream-chunks {chunks} {rate:g} {'x' * pad}".rstrip()
        with Page.of(self.operator, self.task_ids[0]) if watched else nullcontext() as page:
            samples = [(time.time(), support.cpu_seconds(self.server.pid))]
            for session in sessions:
                self.prompt(session, prompt)
            ended = self.wait_for_turns(sessions, timeout=chunks / rate + 60, samples=samples)
        start, cpu_start = samples[0]
        end, cpu_end = samples[-1]
        result = {
            "agents": agents,
            "pages": int(watched),
            "message_kb": 0.0,
            "chunks": agents * chunks,
            "cpu_ms_per_chunk": (cpu_end - cpu_start) * 1000 / (agents * chunks),
            "seconds": end - start,
        }
        # The stream's first and last thirds, at the agents' pace, from the samples nearest their bounds.
        third = chunks / rate / 3

        def cpu_at(moment: float) -> float:
            return min(samples, key=lambda sample: abs(sample[0] - moment))[1]

        first = cpu_at(start + third) - cpu_at(start)
        last = cpu_at(start + 3 * third) - cpu_at(start + 2 * third)
        per_third = agents * chunks / 3
        result["cpu_ms_per_chunk_first_third"] = first * 1000 / per_third
        result["cpu_ms_per_chunk_last_third"] = last * 1000 / per_third

        lags, whole = [], True
        for session, completed_at in zip(sessions, ended, strict=True):
            turn, _ = self.database.last_turn(session)
            streamed = self.database.streamed(turn)
            result["message_kb"] = max(result["message_kb"], len(streamed.encode()) / 1024)
            found = CHUNK.findall(streamed)
            whole &= [int(number) for number, _ in found] == list(range(1, chunks + 1))
            if found:
                lags.append((wall(completed_at) - float(found[-1][1])) * 1000)
        result["every_chunk_once_in_order"] = whole
        result["recorded_lag"] = support.Summary("turn end recorded - last chunk written", lags).as_dict()
        if page is not None:
            arrivals = page.arrivals(since=start)
            latencies = [(arrived - written) * 1000 for written, arrived in arrivals.values()]
            result["page_chunks"] = len(arrivals)
            result["write_to_page"] = latencies
            last = arrivals.get(chunks)
            result["page_last_chunk_ms"] = (last[1] - last[0]) * 1000 if last else None
        return result


def report(results: list[dict], chunks: int) -> dict:
    """Print each configuration's figures, with ratios to the same run's N = 1 (without a page, and with one)."""
    cpu_base = next(r for r in results if r["agents"] == 1 and r["pages"] == 0)["cpu_ms_per_chunk"]
    page_base = next((r for r in results if r["agents"] == 1 and r["pages"] == 1), None)
    base = support.Summary("write -> page", page_base["write_to_page"]) if page_base else None
    out = []
    for r in results:
        label = f"N={r['agents']:<2} pages={r['pages']} {r['message_kb']:3.0f} KB"
        print(
            f"   {label}  server CPU {r['cpu_ms_per_chunk']:6.3f} ms/chunk (x{r['cpu_ms_per_chunk'] / cpu_base:4.2f}"
            f" N=1)  first third {r['cpu_ms_per_chunk_first_third']:6.3f}, last third"
            f" {r['cpu_ms_per_chunk_last_third']:6.3f}  | {r['seconds']:5.1f} s"
            f"  | all chunks once, in order: {'yes' if r['every_chunk_once_in_order'] else 'NO'}"
        )
        lag = r["recorded_lag"]
        print(f"   {label}  turn end recorded - last chunk written: p50 {lag['p50']:7.1f} max {lag['max']:7.1f} ms")
        entry = {key: value for key, value in r.items() if key != "write_to_page"}
        entry["cpu_ratio_to_n1"] = r["cpu_ms_per_chunk"] / cpu_base
        if "write_to_page" in r:
            summary = support.Summary(f"{label}  write -> page", r["write_to_page"])
            print(f"   {summary.line(base)}")
            print(
                f"   {label}  page: {r['page_chunks']}/{chunks} chunks;"
                f" last chunk {r['page_last_chunk_ms'] or float('nan'):.1f} ms after it was written"
            )
            entry["write_to_page"] = summary.as_dict(base)
        out.append(entry)
    return {"runs": out, "chunks_per_agent": chunks}


@contextmanager
def bench(directory: Path, sessions: int):
    with ExitStack() as stack:
        database = support.migrated_database(directory)
        server = stack.enter_context(support.running_server(support.server_environ(database), directory / "server.log"))
        bench = Bench(server, Database(database), sessions)
        stack.callback(bench.operator.close)
        yield bench


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default="1,10,20", help="numbers of agents streaming at once (default 1,10,20)")
    parser.add_argument("--chunks", type=int, default=300, help="chunks each agent streams (default 300)")
    parser.add_argument("--rate", type=float, default=25, help="chunks a second each agent sends (default 25)")
    parser.add_argument("--long-kb", type=int, default=100, help="the long message's size, KB (default 100)")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (server log, database)")
    args = parser.parse_args(argv)
    counts = sorted({int(n) for n in args.agents.split(",")} | {1})

    support.header("streaming: server CPU per chunk, write -> page, lag behind the agents' pace")
    print(f"   N = {counts} agents, {args.chunks} chunks each at {args.rate:g}/s; 0 and 1 page watching")
    with support.workdir(keep=args.keep) as directory, bench(directory, max(counts)) as running:
        running.stream(1, min(args.chunks, 50), args.rate, watched=True)  # warm-up, not counted
        results = [
            running.stream(n, args.chunks, args.rate, watched=watched) for n in counts for watched in (False, True)
        ]
        # Each chunk "- chunk N sent at T PAD\n" is about 40 bytes and its padding.
        pad = max(args.long_kb * 1024 // args.chunks - 40, 0)
        results.append(running.stream(1, args.chunks, args.rate, watched=True, pad=pad))
    figures = report(results, args.chunks)
    support.footer()
    if args.json:
        args.json.write_text(json.dumps({"streaming": figures}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
