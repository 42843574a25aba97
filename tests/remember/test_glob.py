"""The glob matcher of ``list(pattern=)``: what ``fnmatch.fnmatchcase`` answers, without compiling anything."""

from __future__ import annotations

import fnmatch
import re

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from mcpkit_remember._glob import MAX_CLASSES, MAX_PATTERN_LENGTH, Glob

#: Characters that make patterns interesting: the metacharacters, '-' and '^' inside classes, and a wide one.
PATTERN_CHARS = st.sampled_from([*"ab*?[]!-^\\:", "é", "\U0001f642"])
KEY_CHARS = st.sampled_from([*"ab-^\\:[]!*?", "é", "\U0001f642", "z"])


@settings(max_examples=3000, deadline=None)
@given(st.text(PATTERN_CHARS, max_size=12), st.text(KEY_CHARS, max_size=10))
@example("[a-]", "-")
@example("[!]]", "a")
@example("[z-a]", "m")
@example("[!z-a]", "m")
@example("[a-c-e]", "-")
@example("[--a]", "-")
@example("[", "[")
@example("[]", "[]")
@example("*a*a*a*b", "aaaaaaaaaaaaaaaa")
def test_every_pattern_matches_as_fnmatchcase_does(pattern: str, key: str) -> None:
    assume(not any(low > high for low, high in _RANGE_THEN_BANG.findall(pattern)))
    assert Glob(pattern).match(key) == fnmatch.fnmatchcase(key, pattern)


#: A class opening with a reversed range, then "!": CPython's fnmatch drops the range and then reads the "!"
#: as a negation of nothing, so ``[?-:!]`` matches every character. Glob keeps the range empty and "!" a member.
_RANGE_THEN_BANG = re.compile(r"\[([^!\]])-([^\]])!")


def test_a_reversed_range_then_a_bang_matches_the_bang_alone_not_every_character() -> None:
    assert fnmatch.fnmatchcase("a", "[?-:!]")  # the quirk Glob does not copy
    assert [key for key in "a:?!" if Glob("[?-:!]").match(key)] == ["!"]


def test_keys_that_the_memory_tools_list_match_as_documented() -> None:
    draft = Glob("draft:*")
    assert [k for k in ["draft:T-1", "draft:", "Draft:T-1", "drafts:T-1"] if draft.match(k)] == ["draft:T-1", "draft:"]
    assert Glob("office:[a-l]*").match("office:lagos")
    assert not Glob("office:[!a-l]*").match("office:lagos")
    assert Glob("T-?").match("T-7")
    assert not Glob("T-?").match("T-17")


def test_a_wide_pattern_is_matched_without_compiling_a_regular_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a caller's pattern reached the regular expression compiler")

    monkeypatch.setattr(re, "compile", refuse)
    wide = "[\u0100-\U0010ffff]" * MAX_CLASSES
    glob = Glob(wide)
    assert not glob.match("banner")
    assert glob.match("\u0100" * MAX_CLASSES)


def test_a_pattern_with_more_classes_than_the_limit_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_CLASSES} \\[...\\] classes; this one has {MAX_CLASSES + 1}"):
        Glob("[a-z]" * (MAX_CLASSES + 1))


def test_a_pattern_longer_than_the_limit_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_PATTERN_LENGTH} characters"):
        Glob("*" * (MAX_PATTERN_LENGTH + 1))
