"""Load on the referee page: N WebSocket clients receiving table updates at 5 Hz.

Starts a real ``tablesight serve`` (the sample game, units moving every tick so
that every tick is an update), connects the clients, and measures for each
update the time from the server stamping it (``sent_at``) to the client
receiving it, both on this machine's clock. The baseline, in the same run, is
one client alone.

    python benchmarks/bench_web.py                # 20 clients for 60 s (the issue's figure)
    python benchmarks/bench_web.py --clients 5 --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.web.server import Server  # noqa: E402


async def client(url: str, seconds: float, latencies: list[float], from_frame: list[float], dropped: list[str]) -> int:
    received = 0
    try:
        async with websockets.connect(url, max_size=2**22) as ws:
            end = time.time() + seconds
            while time.time() < end:
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=max(0.01, end - time.time()))
                except TimeoutError:
                    break
                now = time.time()
                message = json.loads(raw)
                received += 1
                if received > 1:  # the first message is the current view, sent at once on connecting
                    latencies.append(now - message["sent_at"])
                    from_frame.append(now - message["frame_at"])
    except Exception as error:  # a dropped client is the finding, not a crash of the benchmark
        dropped.append(f"{type(error).__name__}: {error}")
    return received


async def run(url: str, clients: int, seconds: float) -> tuple[list[float], list[float], list[int], list[str]]:
    latencies: list[float] = []
    from_frame: list[float] = []
    dropped: list[str] = []
    counts = await asyncio.gather(*(client(url, seconds, latencies, from_frame, dropped) for _ in range(clients)))
    return latencies, from_frame, list(counts), dropped


def _figures(values: list[float]) -> str:
    ms = sorted(x * 1000 for x in values)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    return f"median {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms"


def summary(
    label: str,
    latencies: list[float],
    from_frame: list[float],
    counts: list[int],
    dropped: list[str],
    seconds: float,
    hz: float,
) -> None:
    print(
        f"{label}: {len(counts)} clients, {seconds:.0f} s; updates per client min {min(counts)} / expected ~{seconds * hz:.0f}; "
        f"dropped {len(dropped)}\n  update sent -> received: {_figures(latencies)}"
        f"\n  frame read -> received (scene, rulings, send): {_figures(from_frame)}"
    )
    for reason in dropped[:5]:
        print(f"  dropped: {reason}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hz", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder) / "load.sqlite", "--tick", str(1 / args.hz), "--motion", "0.6")
        try:
            url = server.url.replace("http", "ws") + "/ws"
            base = asyncio.run(run(url, 1, min(10.0, args.seconds)))
            summary("baseline", *base, min(10.0, args.seconds), args.hz)
            load = asyncio.run(run(url, args.clients, args.seconds))
            summary("load    ", *load, args.seconds, args.hz)
            ratio = statistics.median(load[0]) / statistics.median(base[0])
            print(f"median latency under load / alone: x{ratio:.2f}")
            ok = not load[3] and statistics.median(load[1]) * 1000 <= 100
            print("target (no client dropped, median <= 100 ms):", "met" if ok else "NOT met")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
