"""Google Drive: search files (paged) and read one file as text."""

from __future__ import annotations

import re
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolReturn

from co_tui.context.deps import CoDeps
from co_tui.protocol.tool_display import ToolDisplay
from co_tui.tools.errors import ToolFailure, handle_tool_error
from co_tui.tools.google_api import google_call
from co_tui.tools.tool_return import tool_return

SERVICE = "Google Drive"
PAGE_SIZE = 10
READ_LIMIT_BYTES = 1_000_000  # larger files are truncated: the model's context is the limit
FILE_FIELDS = "id, name, mimeType, modifiedTime, webViewLink, size, owners(displayName)"

# Google-native files cannot be downloaded; they are exported in a text format.
EXPORT_TYPES = {
    "application/vnd.google-apps.document": "text/plain",
    "application/vnd.google-apps.spreadsheet": "text/csv",
    "application/vnd.google-apps.presentation": "text/plain",
    "application/vnd.google-apps.script": "application/vnd.google-apps.script+json",
}
_QUERY_SYNTAX = re.compile(
    r"\b(contains|mimeType|modifiedTime|createdTime|trashed|starred|parents|owners|"
    r"sharedWithMe|fullText|name)\b\s*(=|!=|<|>|contains|in\b)|\bin\s+(parents|owners)\b"
)


def drive_query(query: str) -> str:
    """Plain words search names and contents; Drive query syntax passes through."""
    if _QUERY_SYNTAX.search(query):
        return query
    escaped = query.replace("\\", "\\\\").replace("'", "\\'")
    return f"(name contains '{escaped}' or fullText contains '{escaped}') and trashed = false"


def _format_file(index: int, f: dict[str, Any]) -> str:
    kind = str(f.get("mimeType", "")).rsplit("/", 1)[-1].removeprefix("vnd.google-apps.")
    modified = str(f.get("modifiedTime", ""))[:10]
    owners = ", ".join(o.get("displayName", "") for o in f.get("owners", []) if o)
    meta = " · ".join(x for x in (kind, f"modified {modified}" if modified else "", owners) if x)
    link = f.get("webViewLink") or f"https://drive.google.com/open?id={f.get('id')}"
    return f"{index}. {f.get('name', '(untitled)')} ({meta})\n   {link}\n   id: {f.get('id')}"


async def search_drive(ctx: RunContext[CoDeps], query: str, page: int = 1) -> ToolReturn:
    """Search Google Drive files by name and content. Returns files with links and ids.

    Args:
        query: Words to look for, or a Drive query (e.g. "mimeType = 'application/pdf'").
        page: Result page, starting at 1. Ask for page N+1 only after page N said has_more.
    """
    if not query.strip():
        raise ModelRetry("The query is empty: pass words to search for.")
    if page < 1:
        raise ModelRetry("page starts at 1.")
    tokens = ctx.deps.drive_page_tokens.setdefault(query, [])
    if page > 1 and len(tokens) < page - 1:
        raise ModelRetry(
            f"Page {page} is not available yet: fetch page {len(tokens) + 1} of this query first "
            "(pages are read in order)."
        )
    token = tokens[page - 2] if page > 1 else None
    q = drive_query(query)

    def request(service: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "q": q,
            "pageSize": PAGE_SIZE,
            "fields": f"nextPageToken, files({FILE_FIELDS})",
            "orderBy": "modifiedTime desc" if "fullText" not in q else None,
            "supportsAllDrives": True,
            "includeItemsFromAllDrives": True,
        }
        if token:
            params["pageToken"] = token
        return service.files().list(**{k: v for k, v in params.items() if v is not None}).execute()

    try:
        result = await google_call(ctx, SERVICE, "drive", "v3", request)
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    files = result.get("files", [])
    next_token = result.get("nextPageToken")
    if next_token:
        del tokens[page - 1 :]
        tokens.append(next_token)
    if not files:
        return tool_return(
            ToolDisplay(f"No Drive files match {query!r} (page {page})."),
            count=0,
            page=page,
            has_more=False,
        )
    start = (page - 1) * PAGE_SIZE + 1
    lines = [f"Drive files matching {query!r} (page {page}):"]
    lines += [_format_file(start + i, f) for i, f in enumerate(files)]
    if next_token:
        lines.append(f"More results: search_drive(query, page={page + 1}).")
    return tool_return(
        ToolDisplay("\n".join(lines)), count=len(files), page=page, has_more=bool(next_token)
    )


def _decode(data: bytes | str) -> str | None:
    if isinstance(data, str):
        return data
    if b"\x00" in data[:4096]:
        return None
    return data.decode("utf-8", errors="replace")


async def read_drive_file(ctx: RunContext[CoDeps], file_id: str) -> ToolReturn:
    """Read a Drive file's text (Google Docs as plain text, Sheets as CSV).

    Args:
        file_id: The file id, as returned by search_drive.
    """
    file_id = file_id.strip()
    if not file_id or "/" in file_id:
        raise ModelRetry("file_id must be a Drive file id from search_drive (not a URL or name).")

    def request(service: Any) -> tuple[dict[str, Any], bytes | str, bool]:
        files = service.files()
        meta = files.get(
            fileId=file_id, fields="id, name, mimeType, size, webViewLink", supportsAllDrives=True
        ).execute()
        mime = str(meta.get("mimeType", ""))
        if mime in EXPORT_TYPES:
            data = files.export(fileId=file_id, mimeType=EXPORT_TYPES[mime]).execute()
            return meta, data, len(data) > READ_LIMIT_BYTES
        if mime.startswith("application/vnd.google-apps."):
            return meta, b"", False
        media = files.get_media(fileId=file_id, supportsAllDrives=True)
        media.headers["range"] = f"bytes=0-{READ_LIMIT_BYTES - 1}"
        data = media.execute()
        size = int(meta.get("size") or len(data))
        return meta, data, size > READ_LIMIT_BYTES

    try:
        meta, data, truncated = await google_call(ctx, SERVICE, "drive", "v3", request)
    except ToolFailure as failure:
        return handle_tool_error(failure, SERVICE)
    name = meta.get("name", file_id)
    link = meta.get("webViewLink") or f"https://drive.google.com/open?id={file_id}"
    header = f"{name}\n{link}\n"
    mime = str(meta.get("mimeType", ""))
    if mime.startswith("application/vnd.google-apps.") and mime not in EXPORT_TYPES:
        kind = mime.rsplit(".", 1)[-1]
        return ToolReturn(
            return_value=f"{header}\nThis is a {kind}, which has no text form. Open the link."
        )
    text = _decode(data[:READ_LIMIT_BYTES])
    if text is None:
        kind = mime or "unknown type"
        return ToolReturn(
            return_value=f"{header}\nThis is a binary file ({kind}). Open the link to view it."
        )
    note = f"\n\n[truncated: showing the first {READ_LIMIT_BYTES:,} bytes]" if truncated else ""
    return ToolReturn(return_value=f"{header}\n{text}{note}")


# Registered by build_agent (tools/catalog.py); whether a call asks: policy/tool_specs.py.
TOOLS: list[Any] = [search_drive, read_drive_file]
