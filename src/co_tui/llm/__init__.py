from co_tui.shims.openai_import import skip_openai_aiohttp_transport

skip_openai_aiohttp_transport()  # before anything below imports openai

from co_tui.llm.providers import ProviderError, ResolvedModel, resolve_model  # noqa: E402

__all__ = ["ProviderError", "ResolvedModel", "resolve_model"]
