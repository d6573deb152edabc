"""What keeps the page safe on a shared network: body size limit, request rate limit, LAN join code.

Plain ASGI middleware so that it also covers the WebSocket handshake and
answers before any handler reads a byte it should not.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
JOIN_COOKIE = "tablesight_join"
# What a phone may load before it has joined (the join-code route answers the host only, by itself) ...
OPEN_PATHS = frozenset({"/", "/api/join", "/api/join-code"})
OPEN_PREFIX = "/static/"  # ... with the page's own script and style


@dataclass
class GuardConfig:
    max_body_bytes: int = 1_000_000
    requests_per_s: float = 30.0
    burst: int = 120
    lan: bool = False
    join_code: str = field(default_factory=lambda: f"{secrets.randbelow(1_000_000):06d}")
    join_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    loopback: frozenset[str] = LOOPBACK


class _TooLargeError(Exception):
    pass


async def _reply(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            + (headers or []),
        }
    )
    await send({"type": "http.response.body", "body": body})


def _cookie(scope: Scope, name: str) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a garbled cookie header is simply no cookie
                return None
            if name in jar:
                return jar[name].value
    return None


class Guard:
    def __init__(self, app: ASGIApp, config: GuardConfig) -> None:
        self.app = app
        self.config = config
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, last time)

    def is_host(self, scope: Scope) -> bool:
        client = scope.get("client")
        return client is not None and client[0] in self.config.loopback

    def joined(self, scope: Scope) -> bool:
        if not self.config.lan or self.is_host(scope):
            return True
        return secrets.compare_digest(_cookie(scope, JOIN_COOKIE) or "", self.config.join_token)

    def _allow(self, client: str) -> bool:
        now = time.monotonic()
        tokens, last = self._buckets.get(client, (float(self.config.burst), now))
        tokens = min(float(self.config.burst), tokens + (now - last) * self.config.requests_per_s)
        if tokens < 1.0:
            self._buckets[client] = (tokens, now)
            return False
        self._buckets[client] = (tokens - 1.0, now)
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        client = scope.get("client")
        client_id = client[0] if client else "?"
        is_open = path in OPEN_PATHS or path.startswith(OPEN_PREFIX)
        if not is_open and not self.joined(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 4403})
                return
            await _reply(send, 403, "join the game first: enter the join code shown on the host screen")
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        if not self._allow(client_id):
            await _reply(send, 429, "too many requests: slow down", [(b"retry-after", b"1")])
            return
        limit = self.config.max_body_bytes
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    await _reply(send, 400, "content-length is not a number")
                    return
                if length > limit:
                    await _reply(send, 413, f"request body of {length} bytes is over the limit of {limit} bytes")
                    return
        seen = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLargeError
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except _TooLargeError:
            if not started:
                await _reply(send, 413, f"request body is over the limit of {limit} bytes")
