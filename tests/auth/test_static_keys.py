"""StaticKeys: a configured key signs in as a shared static caller; anything else is left to others."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from mcpkit.auth._static_keys import StaticKeys
from mcpkit.base._credentials import Authenticator, Identity

NOUR_KEY = "nour-key-0123456789abcdef"
SAM_KEY = "sam-key-fedcba9876543210"


@pytest.fixture
def keys() -> StaticKeys:
    return StaticKeys({"nour": NOUR_KEY, "sam": SAM_KEY})


def expected_user_id(key: str) -> str:
    return "static:" + hashlib.sha256(key.encode()).hexdigest()[:32]


def test_it_is_an_authenticator(keys: StaticKeys) -> None:
    assert isinstance(keys, Authenticator)


async def test_a_configured_key_signs_in_with_its_label(keys: StaticKeys) -> None:
    identity = await keys.authenticate(NOUR_KEY)

    assert identity == Identity(user_id=expected_user_id(NOUR_KEY), kind="static", label="nour", claims={})


async def test_the_user_id_of_a_label_is_the_one_its_key_signs_in_as(keys: StaticKeys) -> None:
    identity = await keys.authenticate(NOUR_KEY)

    assert identity is not None
    assert keys.user_id("nour") == identity.user_id == expected_user_id(NOUR_KEY)
    with pytest.raises(KeyError, match="no key labelled 'Nour'; known labels: 'nour', 'sam'"):
        keys.user_id("Nour")


async def test_sam_and_nour_are_different_callers(keys: StaticKeys) -> None:
    nour = await keys.authenticate(NOUR_KEY)
    sam = await keys.authenticate(SAM_KEY)

    assert nour is not None
    assert sam is not None
    assert (sam.label, sam.user_id) == ("sam", expected_user_id(SAM_KEY))
    assert sam.user_id != nour.user_id


async def test_everyone_holding_a_key_is_the_same_caller(keys: StaticKeys) -> None:
    first = await keys.authenticate(NOUR_KEY)
    again = await StaticKeys({"nour-laptop": NOUR_KEY}).authenticate(NOUR_KEY)

    assert first is not None
    assert again is not None
    assert first.user_id == again.user_id


async def test_the_user_id_never_contains_the_key(keys: StaticKeys) -> None:
    identity = await keys.authenticate(NOUR_KEY)

    assert identity is not None
    assert NOUR_KEY not in identity.user_id
    assert len(identity.user_id) == len("static:") + 32


@pytest.mark.parametrize(
    "token",
    [
        "",
        NOUR_KEY[:-1],
        NOUR_KEY + "x",
        NOUR_KEY[:-1] + "X",
        NOUR_KEY.upper(),
        " " + NOUR_KEY,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJub3VyIn0.c2ln",
        "\ud800 lone surrogate",
    ],
)
async def test_an_unknown_token_is_left_to_other_authenticators(keys: StaticKeys, token: str) -> None:
    assert await keys.authenticate(token) is None


def test_labels_are_listed_in_the_order_given(keys: StaticKeys) -> None:
    assert keys.labels == ("nour", "sam")


def test_a_fixture_can_look_up_a_labels_key(keys: StaticKeys) -> None:
    assert keys.key_for("sam") == SAM_KEY


def test_an_unknown_label_names_the_known_ones(keys: StaticKeys) -> None:
    with pytest.raises(KeyError, match=r"'alex'.*known labels: 'nour', 'sam'"):
        keys.key_for("alex")


def test_the_repr_never_shows_a_key(keys: StaticKeys) -> None:
    text = repr(keys)

    assert "nour" in text
    assert NOUR_KEY not in text
    assert SAM_KEY not in text
    assert NOUR_KEY not in str(keys)


async def test_changing_the_mapping_afterwards_changes_nothing() -> None:
    config = {"nour": NOUR_KEY}
    keys = StaticKeys(config)
    config["nour"] = SAM_KEY
    config["sam"] = SAM_KEY

    assert keys.labels == ("nour",)
    assert await keys.authenticate(SAM_KEY) is None
    assert await keys.authenticate(NOUR_KEY) is not None


@pytest.mark.parametrize("config", [{}, [("nour", NOUR_KEY)], None])
def test_it_needs_a_non_empty_mapping(config: Any) -> None:
    with pytest.raises(ValueError, match="non-empty mapping of label to key"):
        StaticKeys(config)


@pytest.mark.parametrize("label", ["", "   ", 7, None])
def test_a_label_must_be_a_non_empty_string(label: Any) -> None:
    with pytest.raises(ValueError, match="every label must be a non-empty string"):
        StaticKeys({label: NOUR_KEY})


@pytest.mark.parametrize("key", [12345678, b"bytes-key-123", None])
def test_a_key_must_be_a_string(key: Any) -> None:
    with pytest.raises(ValueError, match="the key for 'nour' must be a string"):
        StaticKeys({"nour": key})


def test_a_short_key_is_refused_naming_its_label() -> None:
    with pytest.raises(ValueError, match=r"key for 'sam' is 7 characters; use at least 8 .*token_urlsafe"):
        StaticKeys({"nour": NOUR_KEY, "sam": "1234567"})


def test_an_eight_character_key_is_enough() -> None:
    assert StaticKeys({"nour": "12345678"}).labels == ("nour",)


def test_a_key_with_whitespace_is_refused() -> None:
    with pytest.raises(ValueError, match="key for 'nour' contains whitespace"):
        StaticKeys({"nour": "abcd efgh ijkl"})


def test_two_labels_sharing_a_key_are_named_together() -> None:
    with pytest.raises(ValueError, match="labels 'nour' and 'sam' have the same key"):
        StaticKeys({"nour": NOUR_KEY, "alex": SAM_KEY, "sam": NOUR_KEY})
