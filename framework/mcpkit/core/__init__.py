"""What a tool, resource or prompt is and sees: the inert decorators (``@tool``, ``@app``, ...), ``Context``
and ``ToolContext``, the ``Caller``, the ``Plugin`` interface, and the store a test puts plugins on."""

from ._call_state import CallState, TaskProgress
from ._caller import Caller, caller_of
from ._context import BecomesTask, Context, ToolContext
from ._decorators import (
    PromptOptions,
    ResourceOptions,
    ToolOptions,
    Ui,
    UiResource,
    app,
    app_options,
    prompt,
    prompt_options,
    resource,
    resource_options,
    tool,
    tool_options,
)
from ._plugin import DEFAULT_TURN_TIMEOUT, Plugin, PluginSetup, check_hooks, providers_for
from ._under_test import StoreUnderTest, current_test, store_under_test, under_test

__all__ = [
    "DEFAULT_TURN_TIMEOUT",
    "BecomesTask",
    "CallState",
    "Caller",
    "Context",
    "Plugin",
    "PluginSetup",
    "PromptOptions",
    "ResourceOptions",
    "StoreUnderTest",
    "TaskProgress",
    "ToolContext",
    "ToolOptions",
    "Ui",
    "UiResource",
    "app",
    "app_options",
    "caller_of",
    "check_hooks",
    "current_test",
    "prompt",
    "prompt_options",
    "providers_for",
    "resource",
    "resource_options",
    "store_under_test",
    "tool",
    "tool_options",
    "under_test",
]
