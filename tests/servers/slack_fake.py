"""Fake Slack Web API: POST /api/<method>, the methods co-tui calls, cursor pagination."""

from __future__ import annotations

import base64
from typing import Any

from tests.servers.http_fake import FakeServer, Received, Reply

BOT_TOKEN = "xoxb-test"
POSTED_TS = "1762160400.000200"


def _cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: str | None) -> int | None:
    if not cursor:
        return 0
    try:
        return int(base64.b64decode(cursor).decode().removeprefix("offset:"))
    except ValueError:
        return None


def _channels() -> list[dict[str, Any]]:
    names = ["general", "random", "eng", "design", "ops"]
    chans = [
        {
            "id": f"C0{i:07d}",
            "name": n,
            "is_channel": True,
            "is_private": False,
            "is_archived": False,
            "is_member": n != "ops",
            "num_members": 10 + i,
            "topic": {"value": f"All about {n}"},
            "purpose": {"value": ""},
        }
        for i, n in enumerate(names, start=1)
    ]
    return chans


def _history() -> list[dict[str, Any]]:
    msgs = [
        {
            "type": "message",
            "user": "U0000001",
            "text": f"message {i}",
            "ts": f"17621604{i:02d}.000100",
        }
        for i in range(30, 0, -1)
    ]
    msgs[0] |= {"thread_ts": msgs[0]["ts"], "reply_count": 2, "text": "who is on call?"}
    return msgs


def _users() -> list[dict[str, Any]]:
    users = [
        {
            "id": "U0000001",
            "name": "alice",
            "real_name": "Alice Example",
            "deleted": False,
            "is_bot": False,
            "profile": {"real_name": "Alice Example", "title": "Engineer"},
        },
        {
            "id": "U0000002",
            "name": "bob",
            "real_name": "Bob Example",
            "deleted": False,
            "is_bot": False,
            "profile": {"real_name": "Bob Example", "title": ""},
        },
        {
            "id": "U0000003",
            "name": "old",
            "real_name": "Gone",
            "deleted": True,
            "is_bot": False,
            "profile": {},
        },
        {
            "id": "UBOT00001",
            "name": "cobot",
            "real_name": "co bot",
            "deleted": False,
            "is_bot": True,
            "profile": {},
        },
        {
            "id": "U0000004",
            "name": "carol",
            "real_name": "Carol Example",
            "deleted": False,
            "is_bot": False,
            "profile": {"real_name": "Carol Example", "title": "Designer"},
        },
    ]
    return users


class FakeSlack(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.channels = _channels()
        self.history = _history()
        self.users = _users()
        self.posted: list[dict[str, Any]] = []

    def calls(self, method: str) -> list[Received]:
        return self.requests_to(f"/api/{method}")

    def route(self, req: Received) -> Reply:
        method = req.path.removeprefix("/api/")
        if req.headers.get("authorization") != f"Bearer {BOT_TOKEN}":
            return Reply(200, {"ok": False, "error": "invalid_auth"})
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return Reply(200, {"ok": False, "error": "unknown_method"})
        return handler(req.params())

    def _page(self, items: list[Any], params: dict[str, Any], key: str) -> Reply:
        offset = _offset(params.get("cursor"))
        if offset is None:
            return Reply(200, {"ok": False, "error": "invalid_cursor"})
        limit = int(params.get("limit") or 100)
        page = items[offset : offset + limit]
        more = offset + limit < len(items)
        body: dict[str, Any] = {
            "ok": True,
            key: page,
            "response_metadata": {"next_cursor": _cursor(offset + limit) if more else ""},
        }
        if key == "messages":
            body["has_more"] = more
        return Reply(200, body)

    def _channel(self, params: dict[str, Any]) -> dict[str, Any] | Reply:
        found = next((c for c in self.channels if c["id"] == params.get("channel")), None)
        if found is None:
            return Reply(200, {"ok": False, "error": "channel_not_found"})
        if not found["is_member"]:
            return Reply(200, {"ok": False, "error": "not_in_channel"})
        return found

    def _auth_test(self, params: dict[str, Any]) -> Reply:
        return Reply(
            200,
            {
                "ok": True,
                "url": "https://acme.slack.com/",
                "team": "Acme",
                "user": "cobot",
                "team_id": "T0000001",
                "user_id": "UBOT00001",
            },
        )

    def _conversations_list(self, params: dict[str, Any]) -> Reply:
        return self._page(self.channels, params, "channels")

    def _conversations_history(self, params: dict[str, Any]) -> Reply:
        channel = self._channel(params)
        if isinstance(channel, Reply):
            return channel
        return self._page(self.history, params, "messages")

    def _conversations_replies(self, params: dict[str, Any]) -> Reply:
        channel = self._channel(params)
        if isinstance(channel, Reply):
            return channel
        parent = next((m for m in self.history if m["ts"] == params.get("ts")), None)
        if parent is None:
            return Reply(200, {"ok": False, "error": "thread_not_found"})
        replies = [parent] + [
            {
                "type": "message",
                "user": "U0000002",
                "text": f"reply {i}",
                "ts": f"{parent['ts'][:-3]}{i:03d}",
                "thread_ts": parent["ts"],
            }
            for i in (1, 2)
        ]
        return self._page(replies, params, "messages")

    def _users_list(self, params: dict[str, Any]) -> Reply:
        return self._page(self.users, params, "members")

    def _chat_postMessage(self, params: dict[str, Any]) -> Reply:
        channel = self._channel(params)
        if isinstance(channel, Reply):
            return channel
        if not params.get("text"):
            return Reply(200, {"ok": False, "error": "no_text"})
        self.posted.append(dict(params))
        return Reply(
            200,
            {
                "ok": True,
                "channel": channel["id"],
                "ts": POSTED_TS,
                "message": {
                    "type": "message",
                    "text": params["text"],
                    "user": "UBOT00001",
                    "ts": POSTED_TS,
                },
            },
        )
