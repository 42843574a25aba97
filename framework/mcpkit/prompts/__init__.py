"""Prompts: ``@prompt`` classes, ``prompts/list``, ``prompts/get`` and ``PromptContext``."""

from ._prompts import BoundPrompt, PromptContext, Prompts, build_prompt

__all__ = [
    "BoundPrompt",
    "PromptContext",
    "Prompts",
    "build_prompt",
]
