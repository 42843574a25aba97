"""``RememberPlugin``'s options are written once (``RememberOptions``): both ways to build the plugin take exactly
its fields, pass each one on, and refuse a wrong one with the same error."""

from __future__ import annotations

from dataclasses import fields
from typing import Unpack, get_type_hints

import pytest

from mcpkit import ConfigurationError
from mcpkit_remember import RememberPlugin
from mcpkit_remember._options import RememberKeywords, RememberOptions
from remember.support import SECRET
from remember.test_semantic import Concepts

#: Every option, none at its default.
EVERY_OPTION = RememberKeywords(
    default_ttl=60.0,
    secret=[SECRET],
    max_value_bytes=1000,
    max_values=5,
    max_bytes=100_000,
    session_ttl=30.0,
    tools={"enabled": True},
    redis_prefix="desk:",
    search=True,
    embedder=Concepts(),
    search_keys=False,
)


def test_the_keywords_of_both_entry_points_are_the_fields_of_the_options() -> None:
    assert get_type_hints(RememberKeywords) == get_type_hints(RememberOptions)
    assert get_type_hints(RememberPlugin.__init__)["options"] == Unpack[RememberKeywords]
    assert get_type_hints(RememberPlugin.init)["options"] == Unpack[RememberKeywords]


def test_every_option_reaches_the_plugin_whichever_way_it_is_built() -> None:
    defaults = RememberOptions()
    assert sorted(EVERY_OPTION) == sorted(field.name for field in fields(RememberOptions))
    assert [name for name, value in EVERY_OPTION.items() if getattr(defaults, name) == value] == []

    built = RememberPlugin(None, **EVERY_OPTION)
    initialised = RememberPlugin.init(**EVERY_OPTION)

    assert built.options == initialised.options == RememberOptions(**EVERY_OPTION)
    assert (initialised.max_value_bytes, initialised.search, initialised.search_keys) == (1000, True, False)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("max_value_bytes", 0, "max_value_bytes is a positive whole number of bytes, not 0."),
        ("max_values", True, "max_values is a positive whole number, or None for no limit; not True."),
        ("session_ttl", -1, "session_ttl is a number of seconds above 0 and at most"),
        ("search", "yes", "search is True (index every value, for self.remember.search) or False, not 'yes'."),
    ],
)
def test_a_wrong_option_is_refused_the_same_way_by_both(option: str, value: object, message: str) -> None:
    refusals = []
    for build in (RememberPlugin, RememberPlugin.init):
        with pytest.raises(ConfigurationError) as refused:
            build(**{option: value})
        refusals.append(str(refused.value))

    assert refusals[0] == refusals[1]
    assert refusals[0].startswith(message)
