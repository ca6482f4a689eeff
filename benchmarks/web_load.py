"""Load test of ``parlour serve``: many browser games at once, played to the end.

A uvicorn server on a free loopback port (a fresh database in a temporary directory)
serves ``--clients`` scripted clients at once; each plays its games like a browser
does (``GET /play/<env>``, then one ``POST /game/<id>/move`` per move, following the
redirect to the page), choosing a random legal button each time, until the page
shows the result. Reports games per second, the requests' latency percentiles and
every error (a non-200 answer or a game that did not end is an error).

    python benchmarks/web_load.py --games 50 --clients 50

Loopback only: the server binds 127.0.0.1 and the clients talk to nothing else.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from parlour.web.app import create_app, running
from parlour.web.service import Parlour

_ACTION = re.compile(r'data-action="([^"]+)"')
_PLY = re.compile(r'name="ply" value="(\d+)"')
RESULT = 'data-testid="result"'


@dataclass
class LoadResult:
    """What a load run measured."""

    games: int
    clients: int
    finished: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)  # seconds per request
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def percentile(self, q: float) -> float:
        """The ``q`` quantile of the request latencies, in seconds."""
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def summary(self) -> dict[str, Any]:
        """The figures the report gives."""
        return {
            "games": self.games,
            "clients": self.clients,
            "finished": self.finished,
            "errors": len(self.errors),
            "requests": len(self.latencies),
            "seconds": round(self.seconds, 2),
            "games_per_s": round(self.finished / self.seconds, 2),
            "requests_per_s": round(len(self.latencies) / self.seconds, 1),
            "p50_ms": round(1000 * self.percentile(0.50), 1),
            "p95_ms": round(1000 * self.percentile(0.95), 1),
            "max_ms": round(1000 * max(self.latencies, default=float("nan")), 1),
        }


def play_one(
    client: httpx.Client, url: str, rng: random.Random, result: LoadResult
) -> None:
    """One scripted browser game from ``url`` (a ``/play/...`` address) to its end."""

    def timed(method: str, target: str, **kw: Any) -> httpx.Response:
        start = time.perf_counter()
        response = client.request(method, target, follow_redirects=True, **kw)
        with result.lock:
            result.latencies.append(time.perf_counter() - start)
        if response.status_code != 200:
            raise RuntimeError(f"{method} {target}: HTTP {response.status_code}")
        return response

    page = timed("GET", url)
    for _ in range(5000):
        if RESULT in page.text:
            with result.lock:
                result.finished += 1
            return
        actions = _ACTION.findall(page.text)
        ply = _PLY.search(page.text)
        if not actions or ply is None:
            raise RuntimeError(f"{page.url}: no move offered and no result")
        page = timed(
            "POST",
            f"{page.url.copy_with(query=None)}/move",
            data={"action": rng.choice(actions), "ply": ply.group(1)},
        )
    raise RuntimeError(f"{page.url}: the game did not end")


def run_load(
    games: int = 50,
    clients: int = 50,
    env_name: str = "german_whist_v0",
    opponent: str = "random",
    options: str = "",
    seed: int = 0,
    db: str | Path | None = None,
) -> LoadResult:
    """Serve a fresh app on loopback and play ``games`` games with ``clients``
    concurrent clients; returns what was measured."""
    result = LoadResult(games, clients)
    with tempfile.TemporaryDirectory() as tmp:
        parlour = Parlour(db or Path(tmp) / "load.sqlite")
        with running(create_app(parlour)) as base:
            query = f"opponent={opponent}" + (f"&o={options}" if options else "")
            url = f"{base}/play/{env_name}?{query}"
            todo = list(range(games))
            todo_lock = threading.Lock()

            def client_loop(index: int) -> None:
                rng = random.Random(seed * 1000 + index)
                with httpx.Client(timeout=120) as client:
                    while True:
                        with todo_lock:
                            if not todo:
                                return
                            todo.pop()
                        try:
                            play_one(client, url, rng, result)
                        except Exception as err:  # every failure is counted, not hidden
                            with result.lock:
                                result.errors.append(f"{type(err).__name__}: {err}")

            start = time.perf_counter()
            threads = [
                threading.Thread(target=client_loop, args=(i,)) for i in range(clients)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            result.seconds = time.perf_counter() - start
            health = httpx.get(f"{base}/healthz", timeout=30)
            if health.text != "ok":
                result.errors.append(f"/healthz after the run: {health.text!r}")
    return result


def main() -> None:
    """Command line: run the load test and print its figures as JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=50)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--env", default="german_whist_v0")
    p.add_argument("--opponent", default="random")
    p.add_argument("--options", default="", help="KEY=VALUE ... for the env")
    args = p.parse_args()
    result = run_load(args.games, args.clients, args.env, args.opponent, args.options)
    print(json.dumps(result.summary(), indent=2))
    for err in result.errors[:10]:
        print("error:", err)


if __name__ == "__main__":
    main()
