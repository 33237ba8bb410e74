from co_tui.orchestrator.frontend import (
    ApprovalDecision,
    ApprovalRecord,
    ApprovalRequest,
    FrontendProtocol,
    NullFrontend,
    StatusInfo,
    ToolCallInfo,
    ToolResultInfo,
    UsageInfo,
)
from co_tui.orchestrator.turn import TurnResult, run_turn

__all__ = [
    "ApprovalDecision",
    "ApprovalRecord",
    "ApprovalRequest",
    "FrontendProtocol",
    "NullFrontend",
    "StatusInfo",
    "ToolCallInfo",
    "ToolResultInfo",
    "TurnResult",
    "UsageInfo",
    "run_turn",
]
