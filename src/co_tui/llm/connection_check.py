"""Before a provider is saved (`/setup`, `co-tui init`): ask it for its models, the cheapest
real call each provider answers, and choose the model to use. A failure is one line naming
what was wrong (a host that does not answer, a key refused, a model it does not serve)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_tui.llm.model_list import MODEL_SETTINGS, ModelListUnavailable, list_models

if TYPE_CHECKING:
    from co_tui.config.settings import Settings


async def checked_model(settings: Settings, provider: str, asked: str = "") -> str:
    """The model to use with `provider` as `settings` configure it: the one `asked` for,
    which the server must serve; else the configured default when it is served (Gemini's is
    always taken: it lists many); else the first served. Raises ModelListUnavailable."""
    served = await list_models(settings, provider)
    if asked:
        if asked not in served:
            listed = ", ".join(served[:5]) or "none"
            raise ModelListUnavailable(
                f"the server does not serve a model named {asked!r} (it serves: {listed})"
            )
        return asked
    default = str(getattr(settings, MODEL_SETTINGS[provider]))
    if default and (provider == "gemini" or default in served):
        return default
    if not served:
        raise ModelListUnavailable("the server serves no model")
    return served[0]
