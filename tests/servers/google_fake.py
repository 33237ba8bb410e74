"""Fake Google APIs (Drive v3, Gmail v1, Calendar v3) and an OAuth token endpoint.

Just the endpoints co-tui calls, with the JSON shapes Google returns. Bearer tokens are
checked: an unknown token gets Google's 401; POST /token exchanges a known refresh token
for a new access token.
"""

from __future__ import annotations

import base64
import itertools
import re
from datetime import datetime
from typing import Any

from co_tui.integrations.google_auth import SCOPES
from tests.servers.http_fake import FakeServer, Received, Reply

ACCESS_TOKEN = "good-token"
REFRESH_TOKEN = "good-refresh"


def google_error(status: int, message: str, reason: str, api_status: str) -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": message,
            "status": api_status,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
        }
    }


UNAUTHENTICATED = google_error(
    401, "Request had invalid authentication credentials.", "authError", "UNAUTHENTICATED"
)
API_DISABLED = google_error(
    403,
    "Gmail API has not been used in project 123 before or it is disabled.",
    "accessNotConfigured",
    "PERMISSION_DENIED",
)
RATE_LIMITED = google_error(429, "Rate Limit Exceeded", "rateLimitExceeded", "RESOURCE_EXHAUSTED")
BACKEND_ERROR = google_error(500, "Backend Error", "backendError", "INTERNAL")


def _drive_files() -> list[dict[str, Any]]:
    files = [
        {
            "id": "doc-1",
            "name": "Quarterly plan",
            "mimeType": "application/vnd.google-apps.document",
            "content": "Plan for Q3: ship the assistant.\nOwner: Alice.",
        },
        {
            "id": "sheet-1",
            "name": "Budget plan",
            "mimeType": "application/vnd.google-apps.spreadsheet",
            "content": "item,cost\nlaptops,3000\n",
        },
        {
            "id": "txt-1",
            "name": "notes.txt",
            "mimeType": "text/plain",
            "content": "plain notes about the plan",
        },
        {
            "id": "bin-1",
            "name": "photo.png",
            "mimeType": "image/png",
            "content": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
        },
        {"id": "big-1", "name": "big.log", "mimeType": "text/plain", "content": "x" * 1_500_000},
    ]
    files += [
        {
            "id": f"report-{i}",
            "name": f"Report {i:02d}",
            "mimeType": "application/pdf",
            "content": b"%PDF-1.4 report",
        }
        for i in range(1, 26)
    ]
    for n, f in enumerate(files):
        f["modifiedTime"] = f"2026-10-{(n % 28) + 1:02d}T09:00:00.000Z"
        f["webViewLink"] = f"https://docs.google.com/open?id={f['id']}"
        f["owners"] = [{"displayName": "Alice Example"}]
        data = f["content"]
        f["size"] = str(len(data if isinstance(data, bytes) else data.encode()))
    return files


def _messages() -> list[dict[str, Any]]:
    rows = [
        (
            "m1",
            "t1",
            "Alice <alice@example.com>",
            "Lunch on Friday?",
            "Are you free for lunch",
            ["INBOX", "UNREAD"],
        ),
        (
            "m2",
            "t2",
            "Bob <bob@example.com>",
            "Invoice 42",
            "Please find the invoice attached",
            ["INBOX"],
        ),
        (
            "m3",
            "t3",
            "Carol <carol@example.com>",
            "Offsite agenda",
            "Draft agenda for the offsite",
            ["INBOX"],
        ),
        ("m4", "t4", "Alice <alice@example.com>", "Re: plan", "Looks good to me", ["SENT"]),
    ]
    return [
        {
            "id": i,
            "threadId": t,
            "labelIds": labels,
            "snippet": snippet,
            "payload": {
                "headers": [
                    {"name": "From", "value": sender},
                    {"name": "To", "value": "me@example.com"},
                    {"name": "Subject", "value": subject},
                    {"name": "Date", "value": "Mon, 3 Nov 2026 09:00:00 +0000"},
                ]
            },
        }
        for i, t, sender, subject, snippet, labels in rows
    ]


def _events() -> list[dict[str, Any]]:
    return [
        {
            "id": "e1",
            "status": "confirmed",
            "summary": "Standup",
            "start": {"dateTime": "2026-11-03T09:00:00+00:00"},
            "end": {"dateTime": "2026-11-03T09:15:00+00:00"},
            "hangoutLink": "https://meet.google.com/abc-defg-hij",
            "htmlLink": "https://www.google.com/calendar/event?eid=e1",
            "attendees": [{"email": "me@example.com", "self": True}, {"email": "bob@example.com"}],
        },
        {
            "id": "e2",
            "status": "confirmed",
            "summary": "Design review",
            "location": "Room 4",
            "start": {"dateTime": "2026-11-03T14:00:00+00:00"},
            "end": {"dateTime": "2026-11-03T15:00:00+00:00"},
            "conferenceData": {
                "entryPoints": [
                    {"entryPointType": "video", "uri": "https://meet.google.com/xyz-uvwx-rst"}
                ]
            },
            "htmlLink": "https://www.google.com/calendar/event?eid=e2",
        },
        {
            "id": "e3",
            "status": "confirmed",
            "summary": "Holiday",
            "start": {"date": "2026-11-10"},
            "end": {"date": "2026-11-11"},
            "htmlLink": "https://www.google.com/calendar/event?eid=e3",
        },
        {
            "id": "e4",
            "status": "cancelled",
            "summary": "Cancelled sync",
            "start": {"dateTime": "2026-11-03T16:00:00+00:00"},
            "end": {"dateTime": "2026-11-03T16:30:00+00:00"},
        },
        {
            "id": "e5",
            "status": "confirmed",
            "summary": "Design retro",
            "start": {"dateTime": "2026-10-20T10:00:00+00:00"},
            "end": {"dateTime": "2026-10-20T11:00:00+00:00"},
            "htmlLink": "https://www.google.com/calendar/event?eid=e5",
        },
    ]


def _public(f: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in f.items() if k != "content"}


class FakeGoogle(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.valid_tokens = {ACCESS_TOKEN}
        self.files = _drive_files()
        self.messages = _messages()
        self.events = _events()
        self.drafts: list[dict[str, Any]] = []
        self._counter = itertools.count(1)

    # -- helpers --
    def _authorized(self, req: Received) -> bool:
        auth = req.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") in self.valid_tokens

    def draft_mime(self, index: int = -1) -> bytes:
        raw = self.drafts[index]["message"]["raw"]
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))

    # -- routing --
    def route(self, req: Received) -> Reply:
        if req.path == "/token" and req.method == "POST":
            return self._token(req)
        if not self._authorized(req):
            return Reply(401, UNAUTHENTICATED, {"WWW-Authenticate": 'Bearer realm="google"'})
        if req.path.startswith("/drive/v3/files"):
            return self._drive(req)
        if req.path.startswith("/gmail/v1/users/me/"):
            return self._gmail(req)
        if req.path == "/calendar/v3/calendars/primary/events":
            return self._calendar(req)
        return Reply(404, google_error(404, "Not Found", "notFound", "NOT_FOUND"))

    def _token(self, req: Received) -> Reply:
        form = req.form()
        if form.get("grant_type") == "refresh_token" and form.get("refresh_token") == REFRESH_TOKEN:
            token = f"refreshed-{next(self._counter)}"
            self.valid_tokens.add(token)
            return Reply(
                200,
                {
                    "access_token": token,
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": form.get("scope", ""),
                },
            )
        if form.get("grant_type") == "authorization_code" and form.get("code") == "good-code":
            token = f"issued-{next(self._counter)}"
            self.valid_tokens.add(token)
            return Reply(
                200,
                {
                    "access_token": token,
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "refresh_token": REFRESH_TOKEN,
                    "scope": " ".join(SCOPES),
                },
            )
        return Reply(
            400,
            {"error": "invalid_grant", "error_description": "Token has been expired or revoked."},
        )

    def _drive(self, req: Received) -> Reply:
        match = re.fullmatch(r"/drive/v3/files(?:/([^/]+))?(/export)?", req.path)
        if not match:
            return Reply(404, google_error(404, "Not Found", "notFound", "NOT_FOUND"))
        file_id, export = match.groups()
        if file_id is None:
            return self._drive_list(req)
        found = next((f for f in self.files if f["id"] == file_id), None)
        if found is None:
            return Reply(
                404, google_error(404, f"File not found: {file_id}.", "notFound", "NOT_FOUND")
            )
        content = found["content"]
        if export:
            if not found["mimeType"].startswith("application/vnd.google-apps."):
                return Reply(
                    403,
                    google_error(
                        403,
                        "Export only supports Docs Editors files.",
                        "fileNotExportable",
                        "PERMISSION_DENIED",
                    ),
                )
            return Reply(200, content, content_type=req.q("mimeType") or "text/plain")
        if req.q("alt") == "media":
            if found["mimeType"].startswith("application/vnd.google-apps."):
                return Reply(
                    403,
                    google_error(
                        403,
                        "Only files with binary content can be downloaded.",
                        "fileNotDownloadable",
                        "PERMISSION_DENIED",
                    ),
                )
            data = content if isinstance(content, bytes) else content.encode()
            rng = re.fullmatch(r"bytes=(\d+)-(\d+)", req.headers.get("range", ""))
            if rng:
                start, end = int(rng.group(1)), int(rng.group(2))
                return Reply(206, data[start : end + 1], content_type=found["mimeType"])
            return Reply(200, data, content_type=found["mimeType"])
        return Reply(200, _public(found))

    def _drive_list(self, req: Received) -> Reply:
        q = req.q("q", "") or ""
        terms = {t.lower() for t in re.findall(r"contains '((?:[^'\\]|\\.)*)'", q)}
        mime = re.search(r"mimeType = '([^']+)'", q)

        def matches(f: dict[str, Any]) -> bool:
            if mime and f["mimeType"] != mime.group(1):
                return False
            if not terms:
                return True
            text = f["content"] if isinstance(f["content"], str) else ""
            return any(t in f["name"].lower() or t in text.lower() for t in terms)

        hits = [_public(f) for f in self.files if matches(f)]
        size = int(req.q("pageSize", "100") or 100)
        start = int((req.q("pageToken") or "tok-0").removeprefix("tok-"))
        page = hits[start : start + size]
        body: dict[str, Any] = {"kind": "drive#fileList", "incompleteSearch": False, "files": page}
        if start + size < len(hits):
            body["nextPageToken"] = f"tok-{start + size}"
        return Reply(200, body)

    def _gmail(self, req: Received) -> Reply:
        rest = req.path.removeprefix("/gmail/v1/users/me/")
        if rest == "drafts" and req.method == "POST":
            draft_id = f"r-{next(self._counter)}"
            message = req.json()["message"]
            self.drafts.append({"id": draft_id, "message": message})
            return Reply(
                200,
                {
                    "id": draft_id,
                    "message": {"id": f"m-{draft_id}", "threadId": "t-new", "labelIds": ["DRAFT"]},
                },
            )
        if rest == "messages":
            query = (req.q("q") or "").lower()
            label = req.q("labelIds")
            hits = [
                m
                for m in self.messages
                if (not label or label in m["labelIds"])
                and (not query or self._gmail_match(m, query))
            ]
            size = int(req.q("maxResults", "100") or 100)
            start = int(req.q("pageToken") or "0")
            body: dict[str, Any] = {
                "messages": [
                    {"id": m["id"], "threadId": m["threadId"]} for m in hits[start : start + size]
                ],
                "resultSizeEstimate": len(hits),
            }
            if start + size < len(hits):
                body["nextPageToken"] = str(start + size)
            if not body["messages"]:
                body.pop("messages")
            return Reply(200, body)
        match = re.fullmatch(r"messages/([^/]+)", rest)
        if match:
            found = next((m for m in self.messages if m["id"] == match.group(1)), None)
            if found is None:
                return Reply(
                    404,
                    google_error(404, "Requested entity was not found.", "notFound", "NOT_FOUND"),
                )
            return Reply(200, found)
        return Reply(404, google_error(404, "Not Found", "notFound", "NOT_FOUND"))

    @staticmethod
    def _gmail_match(m: dict[str, Any], query: str) -> bool:
        headers = {h["name"].lower(): h["value"].lower() for h in m["payload"]["headers"]}
        for term in query.split():
            key, _, value = term.partition(":")
            if key in ("is", "in") and value:  # is:unread, in:inbox: Gmail's label terms
                if value.upper() not in m["labelIds"]:
                    return False
            elif value and key in ("from", "subject", "to"):
                if value not in headers.get(key, ""):
                    return False
            elif term not in (m["snippet"].lower() + " " + headers.get("subject", "")):
                return False
        return True

    def _calendar(self, req: Received) -> Reply:
        t_min = datetime.fromisoformat(req.q("timeMin", "") or "")
        t_max = datetime.fromisoformat(req.q("timeMax", "") or "")
        query = (req.q("q") or "").lower()

        def start_of(e: dict[str, Any]) -> datetime:
            s = e["start"]
            return datetime.fromisoformat(s.get("dateTime") or f"{s['date']}T00:00:00+00:00")

        hits = [
            e
            for e in self.events
            if t_min <= start_of(e) < t_max
            and (not query or query in (e.get("summary", "") + e.get("location", "")).lower())
        ]
        hits.sort(key=start_of)
        size = int(req.q("maxResults", "250") or 250)
        body: dict[str, Any] = {
            "kind": "calendar#events",
            "summary": "me@example.com",
            "timeZone": "UTC",
            "items": hits[:size],
        }
        if len(hits) > size:
            body["nextPageToken"] = "next"
        return Reply(200, body)
