"""Chapter 29: claw as a library, shaped like Anthropic's Claude Agent SDK.

>>> async for message in query("What does notes.txt say?", ClawAgentOptions(max_turns=5)):
...     print(message)

``query`` runs one prompt; ``ClawSDKClient`` keeps a conversation. The messages
(``types``), the in-process tools (``tools``) and the options, hooks and permission answers
(``client``) carry the Claude Agent SDK's names where they mean the same thing.
"""

from .client import (
    CanUseTool,
    ClawAgentOptions,
    ClawSDKClient,
    HookCallback,
    HookMatcher,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
    query,
)
from .tools import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server, tool
from .types import (
    AssistantMessage,
    BadOption,
    ContentBlock,
    Message,
    ResultMessage,
    SdkError,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UsageMessage,
    UserMessage,
    message_from_record,
    record_of,
)

__all__ = [
    "AssistantMessage", "BadOption", "CanUseTool", "ClawAgentOptions", "ClawSDKClient",
    "ContentBlock", "HookCallback", "HookMatcher", "McpSdkServerConfig", "Message",
    "PermissionResult", "PermissionResultAllow", "PermissionResultDeny", "ResultMessage",
    "SdkError", "SdkMcpTool", "StreamEvent", "SystemMessage", "TextBlock",
    "ToolPermissionContext", "ToolResultBlock", "ToolUseBlock", "UsageMessage", "UserMessage",
    "create_sdk_mcp_server", "message_from_record", "query", "record_of", "tool",
]  # fmt: skip
