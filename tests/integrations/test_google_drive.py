"""search_drive and read_drive_file against the local Drive server."""

from __future__ import annotations

import pytest
from pydantic_ai import ModelRetry, RunContext

from co_tui.context.deps import CoDeps
from co_tui.tools.google_drive import READ_LIMIT_BYTES, read_drive_file, search_drive
from tests.helpers import model_view
from tests.servers.google_fake import FakeGoogle


async def test_search_drive_lists_files_with_links(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    result = model_view(await search_drive(ctx, "plan"))
    assert result["count"] == 3 and result["page"] == 1 and result["has_more"] is False
    assert "Quarterly plan" in result["display"]
    assert "https://docs.google.com/open?id=doc-1" in result["display"]
    assert "id: doc-1" in result["display"]
    (req,) = google_server.requests_to("/drive/v3/files", "GET")
    assert "fullText contains 'plan'" in (req.q("q") or "")
    assert req.headers["authorization"] == "Bearer good-token"


async def test_search_drive_pages_with_tokens_kept_per_query(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    first = model_view(await search_drive(ctx, "Report"))
    assert first["has_more"] is True and first["count"] == 10
    assert "page=2" in first["display"]
    assert ctx.deps.drive_page_tokens["Report"] == ["tok-10"]
    second = model_view(await search_drive(ctx, "Report", page=2))
    third = model_view(await search_drive(ctx, "Report", page=3))
    assert second["count"] == 10 and third["count"] == 5 and third["has_more"] is False
    assert "11. Report 11" in second["display"] and "25. Report 25" in third["display"]
    tokens = [r.q("pageToken") for r in google_server.requests_to("/drive/v3/files")]
    assert tokens == [None, "tok-10", "tok-20"]
    # Going back to page 2 reuses the stored token.
    again = model_view(await search_drive(ctx, "Report", page=2))
    assert again["display"] == second["display"]


async def test_search_drive_page_out_of_order_is_a_retry(ctx: RunContext[CoDeps]) -> None:
    with pytest.raises(ModelRetry, match="fetch page 1"):
        await search_drive(ctx, "Report", page=3)


async def test_search_drive_nothing_matches(ctx: RunContext[CoDeps]) -> None:
    result = model_view(await search_drive(ctx, "zebra"))
    assert result["count"] == 0 and "No Drive files" in result["display"]


async def test_drive_query_syntax_passes_through(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    result = model_view(await search_drive(ctx, "mimeType = 'text/plain'"))
    assert result["count"] == 2
    assert google_server.received[-1].q("q") == "mimeType = 'text/plain'"


async def test_read_google_doc_is_exported_as_text(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    text = model_view(await read_drive_file(ctx, "doc-1"))
    assert isinstance(text, str)
    assert text.startswith("Quarterly plan\nhttps://docs.google.com/open?id=doc-1")
    assert "Plan for Q3: ship the assistant." in text
    (export,) = google_server.requests_to("/drive/v3/files/doc-1/export")
    assert export.q("mimeType") == "text/plain"


async def test_read_sheet_as_csv_and_plain_file(ctx: RunContext[CoDeps]) -> None:
    assert "laptops,3000" in str(model_view(await read_drive_file(ctx, "sheet-1")))
    assert "plain notes about the plan" in str(model_view(await read_drive_file(ctx, "txt-1")))


async def test_read_binary_file_says_so(ctx: RunContext[CoDeps]) -> None:
    text = str(model_view(await read_drive_file(ctx, "bin-1")))
    assert "binary file (image/png)" in text and "https://docs.google.com/open?id=bin-1" in text


async def test_read_large_file_is_capped(
    ctx: RunContext[CoDeps], google_server: FakeGoogle
) -> None:
    text = str(model_view(await read_drive_file(ctx, "big-1")))
    assert "[truncated" in text
    assert text.count("x") == READ_LIMIT_BYTES
    (media,) = [
        r for r in google_server.requests_to("/drive/v3/files/big-1") if r.q("alt") == "media"
    ]
    assert media.headers["range"] == f"bytes=0-{READ_LIMIT_BYTES - 1}"


async def test_read_unknown_file_is_misuse(ctx: RunContext[CoDeps]) -> None:
    with pytest.raises(ModelRetry, match="not found"):
        await read_drive_file(ctx, "nope-1")


async def test_read_url_instead_of_id_is_misuse(ctx: RunContext[CoDeps]) -> None:
    with pytest.raises(ModelRetry, match="file_id"):
        await read_drive_file(ctx, "https://docs.google.com/open?id=doc-1")
