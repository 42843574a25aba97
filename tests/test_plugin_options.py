"""The remember and history plugins' options are written once (``RememberOptions``, ``HistoryOptions``): both ways
to build each plugin take exactly those fields, pass each one on, and refuse a wrong one with the same error."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, NamedTuple, Unpack, get_type_hints

import pytest

from mcpkit import ConfigurationError
from mcpkit_history import HistoryPlugin
from mcpkit_history._options import HistoryKeywords, HistoryOptions
from mcpkit_remember import RememberPlugin
from mcpkit_remember._options import RememberKeywords, RememberOptions
from remember.support import SECRET
from remember.test_semantic import Concepts


class Options(NamedTuple):
    plugin: Any
    keywords: Any
    options: Any
    every: dict[str, Any]  # every option, none at its default
    wrong: list[tuple[str, object, str]]  # an option, a wrong value, how the refusal starts


REMEMBER = Options(
    RememberPlugin,
    RememberKeywords,
    RememberOptions,
    {
        "default_ttl": 60.0,
        "secret": [SECRET],
        "max_value_bytes": 1000,
        "max_values": 5,
        "max_bytes": 100_000,
        "session_ttl": 30.0,
        "tools": {"enabled": True},
        "redis_prefix": "desk:",
        "search": True,
        "embedder": Concepts(),
        "search_keys": False,
        "history": 5,
    },
    [
        ("max_value_bytes", 0, "max_value_bytes is a whole number of bytes, at least 1; not 0."),
        ("max_values", True, "max_values is a whole number, at least 1 (or None for no limit); not True."),
        ("session_ttl", -1, "session_ttl is a number of seconds above 0 and at most"),
        ("search", "yes", "search is True or False, not 'yes'."),
        ("history", -1, "history is a whole number from 0 to 100; not -1."),
    ],
)
HISTORY = Options(
    HistoryPlugin,
    HistoryKeywords,
    HistoryOptions,
    {
        "secret": SECRET,
        "scope": "session",
        "max_message_bytes": 1000,
        "max_messages": 10,
        "max_total_messages": 100,
        "max_total_bytes": 1_000_000,
        "tools": True,
        "tool_prefix": "desk_",
        "redis_prefix": "desk:",
        "session_ttl": 30.0,
        "max_load_bytes": 2000,
        "max_search_bytes": 3000,
    },
    [
        ("scope", "tool", "scope is 'user' (a signed-in caller's conversations, across sessions and clients) or"),
        ("max_messages", 0, "max_messages is a whole number, at least 1; not 0."),
        ("tool_prefix", "desk-", "tool_prefix is letters, digits and '_' (like 'desk_'), not 'desk-'."),
        ("session_ttl", 0, "session_ttl is a positive number of seconds or None for no limit, not 0."),
    ],
)
PLUGINS = pytest.mark.parametrize("case", [REMEMBER, HISTORY], ids=["remember", "history"])


@PLUGINS
def test_the_keywords_of_both_entry_points_are_the_fields_of_the_options(case: Options) -> None:
    assert get_type_hints(case.keywords) == get_type_hints(case.options)
    assert get_type_hints(case.plugin.__init__)["options"] == Unpack[case.keywords]
    assert get_type_hints(case.plugin.init)["options"] == Unpack[case.keywords]


@PLUGINS
def test_every_option_reaches_the_plugin_whichever_way_it_is_built(case: Options) -> None:
    defaults = case.options()
    assert sorted(case.every) == sorted(field.name for field in fields(case.options))
    assert [name for name, value in case.every.items() if getattr(defaults, name) == value] == []

    built = case.plugin(None, **case.every)
    initialised = case.plugin.init(**case.every)

    assert built._options == initialised._options == case.options(**case.every)


@PLUGINS
def test_a_wrong_option_is_refused_the_same_way_by_both(case: Options) -> None:
    for option, value, message in case.wrong:
        refusals = []
        for build in (case.plugin, case.plugin.init):
            with pytest.raises(ConfigurationError) as refused:
                build(**{option: value})
            refusals.append(str(refused.value))

        assert refusals[0] == refusals[1]
        assert refusals[0].startswith(message)
