from co_tui.llm.providers import ProviderError, ResolvedModel, resolve_model

__all__ = ["ProviderError", "ResolvedModel", "resolve_model"]
