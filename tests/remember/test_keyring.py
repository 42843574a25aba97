"""The keyring: values sealed per address, owners hashed per secret, rotation without loss."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mcpkit_storage.sealing._keyring import VERSION, Keyring, Opened, UndecryptableError

OLD = "old-secret-0123456789abcdef"
NEW = "new-secret-fedcba9876543210"
NOUR = '["u","static:ab12"]'
SAM = '["u","static:cd34"]'


@pytest.fixture
def keyring() -> Keyring:
    return Keyring([NEW])


def test_a_sealed_value_opens_at_its_own_address(keyring: Keyring) -> None:
    owner = keyring.owner_for(NOUR)
    sealed = keyring.seal(owner, "user", "theme", b'"dark"')
    assert keyring.open(owner, "user", "theme", sealed) == Opened(b'"dark"', secret=0, version=VERSION)


def test_the_sealed_bytes_hold_neither_the_plaintext_nor_the_address(keyring: Keyring) -> None:
    owner = keyring.owner_for(NOUR)
    sealed = keyring.seal(owner, "user", "favourite-colour", b"ultramarine")
    for needle in (b"ultramarine", b"favourite-colour", owner.encode(), b"static:ab12"):
        assert needle not in sealed


def test_sealed_layout_is_version_key_id_nonce_then_ciphertext(keyring: Keyring) -> None:
    sealed = keyring.seal("o", "user", "k", b"x" * 100)
    assert sealed[0] == VERSION == 2
    assert sealed[1:5].hex() == keyring.primary_key_id
    assert len(sealed) == 1 + 4 + 12 + 100 + 16


def test_each_seal_uses_a_fresh_nonce(keyring: Keyring) -> None:
    first = keyring.seal("o", "user", "k", b"same")
    second = keyring.seal("o", "user", "k", b"same")
    assert first != second
    assert first[5:17] != second[5:17]


@pytest.mark.parametrize(
    ("owner", "bucket", "key"),
    [
        ("sam-owner", "user", "theme"),  # copied into another caller's slot
        ("nour-owner", "session", "theme"),  # another bucket
        ("nour-owner", "tool.notes", "theme"),  # another tool's bucket
        ("nour-owner", "user", "colour"),  # another key
        ("nour-owne", "ruser", "theme"),  # same characters, shifted boundary
        ("nour-owner", "usert", "heme"),
    ],
)
def test_a_value_moved_to_another_address_does_not_open(keyring: Keyring, owner: str, bucket: str, key: str) -> None:
    sealed = keyring.seal("nour-owner", "user", "theme", b'"dark"')
    with pytest.raises(UndecryptableError, match=r"authentication failed \(value moved or corrupted\?\)"):
        keyring.open(owner, bucket, key, sealed)


@pytest.mark.parametrize("position", [0, 1, 4, 5, 16, 17, 30, -1])
def test_a_tampered_byte_is_refused(keyring: Keyring, position: int) -> None:
    sealed = bytearray(keyring.seal("o", "user", "k", b"x" * 20))
    sealed[position] ^= 0x01
    with pytest.raises(UndecryptableError):
        keyring.open("o", "user", "k", bytes(sealed))


@pytest.mark.parametrize("length", [0, 1, 5, 17, 32, 1 + 4 + 12 + 20 + 15])
def test_a_truncated_value_is_refused(keyring: Keyring, length: int) -> None:
    sealed = keyring.seal("o", "user", "k", b"x" * 20)
    with pytest.raises(UndecryptableError) as caught:
        keyring.open("o", "user", "k", sealed[:length])
    assert caught.value.reason in {"malformed", "authentication"}


def test_an_unknown_version_is_called_malformed(keyring: Keyring) -> None:
    sealed = keyring.seal("o", "user", "k", b"x")
    with pytest.raises(UndecryptableError, match="malformed ciphertext") as caught:
        keyring.open("o", "user", "k", b"\x03" + sealed[1:])
    assert caught.value.reason == "malformed"


def test_a_value_sealed_under_another_secret_says_the_secret_changed() -> None:
    sealed = Keyring([OLD]).seal("o", "user", "k", b"x")
    with pytest.raises(UndecryptableError, match=r"unknown key id \(secret changed\?\)") as caught:
        Keyring([NEW]).open("o", "user", "k", sealed)
    assert caught.value.reason == "unknown_key"
    assert OLD not in str(caught.value)
    assert NEW not in str(caught.value)


def test_after_rotation_an_old_value_opens_at_its_old_owner_and_is_stale() -> None:
    before = Keyring([OLD])
    old_owner = before.owner_for(NOUR)
    sealed = before.seal(old_owner, "user", "theme", b'"dark"')

    rotated = Keyring([NEW, OLD])
    owners = rotated.owners_for(NOUR)
    assert owners == (rotated.owner_for(NOUR), old_owner)
    assert rotated.open(owners[1], "user", "theme", sealed) == Opened(b'"dark"', secret=1, version=VERSION)


def test_after_rotation_new_values_use_the_primary_and_are_not_stale() -> None:
    rotated = Keyring([NEW, OLD])
    owner = rotated.owner_for(NOUR)
    sealed = rotated.seal(owner, "user", "theme", b'"dark"')
    assert sealed[1:5].hex() == rotated.primary_key_id == Keyring([NEW]).primary_key_id
    assert rotated.open(owner, "user", "theme", sealed).stale is False
    assert Keyring([NEW]).open(owner, "user", "theme", sealed).plaintext == b'"dark"'


def test_an_old_value_does_not_open_at_the_new_owner() -> None:
    before = Keyring([OLD])
    sealed = before.seal(before.owner_for(NOUR), "user", "theme", b'"dark"')
    rotated = Keyring([NEW, OLD])
    with pytest.raises(UndecryptableError, match="authentication failed"):
        rotated.open(rotated.owner_for(NOUR), "user", "theme", sealed)


def test_keys_with_lone_surrogates_round_trip(keyring: Keyring) -> None:
    sealed = keyring.seal("o", "user", "\ud800", b"x")
    assert keyring.open("o", "user", "\ud800", sealed).plaintext == b"x"
    with pytest.raises(UndecryptableError):
        keyring.open("o", "user", "\udc00", sealed)


def test_owner_is_32_hex_chars_and_deterministic_per_secret() -> None:
    owner = Keyring([NEW]).owner_for(NOUR)
    assert re.fullmatch(r"[0-9a-f]{32}", owner)
    assert Keyring([NEW]).owner_for(NOUR) == owner
    assert Keyring([NEW, OLD]).owner_for(NOUR) == owner
    assert Keyring([OLD]).owner_for(NOUR) != owner


def test_owner_differs_per_identity_and_does_not_show_it(keyring: Keyring) -> None:
    assert keyring.owner_for(NOUR) != keyring.owner_for(SAM)
    assert "ab12" not in keyring.owner_for(NOUR)


def test_identities_differing_only_by_colon_placement_get_different_owners(keyring: Keyring) -> None:
    identities = ['["u","a:b:c"]', '["u","a:bc"]', '["u","ab:c"]', '["u:a","b:c"]', '["u","a::bc"]']
    assert len({keyring.owner_for(identity) for identity in identities}) == len(identities)


def test_bytes_and_text_secrets_are_the_same_secret() -> None:
    assert Keyring([NEW.encode()]).owner_for(NOUR) == Keyring([NEW]).owner_for(NOUR)


def test_key_ids_are_short_hex_and_do_not_reveal_the_secret() -> None:
    keyring = Keyring([NEW, OLD])
    assert keyring.key_ids == (keyring.primary_key_id, Keyring([OLD]).primary_key_id)
    assert all(re.fullmatch(r"[0-9a-f]{8}", key_id) for key_id in keyring.key_ids)
    assert keyring.key_ids[0] != keyring.key_ids[1]


def test_repr_shows_counts_and_key_ids_never_secrets() -> None:
    keyring = Keyring([NEW, OLD])
    text = repr(keyring)
    assert NEW not in text
    assert OLD not in text
    assert "secrets=2" in text
    assert keyring.primary_key_id in text


@pytest.mark.parametrize(
    ("secrets", "message"),
    [
        ([], "at least one secret"),
        ([""], "secret #1 is empty"),
        ([NEW, b""], "secret #2 is empty"),
        ([NEW, OLD, NEW], "secret #3 repeats secret #1"),
        ([NEW, NEW.encode()], "secret #2 repeats secret #1"),
    ],
)
def test_bad_secret_lists_are_refused_without_echoing_them(secrets: list[str | bytes], message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        Keyring(secrets)
    assert NEW not in str(caught.value)


def test_a_bare_string_is_not_mistaken_for_a_list_of_secrets() -> None:
    with pytest.raises(TypeError, match=r"Keyring\(\[secret\]\)"):
        Keyring(NEW)


def test_env_value_lists_secrets_primary_first_with_spaces_stripped() -> None:
    keyring = Keyring.from_env_value(f" {NEW} ,{OLD}\t")
    assert keyring.key_ids == Keyring([NEW, OLD]).key_ids


def test_env_value_with_one_secret() -> None:
    assert Keyring.from_env_value(NEW).key_ids == Keyring([NEW]).key_ids


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_an_empty_env_value_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="REMEMBER_SECRET is empty"):
        Keyring.from_env_value(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{NEW},,{OLD}", "item #2 of 3 is empty"),
        (f"{NEW},", "item #2 of 2 is empty"),
        (f",{NEW}", "item #1 of 2 is empty"),
        (f"{NEW}, ,{OLD}", "item #2 of 3 is empty"),
    ],
)
def test_an_empty_env_item_is_refused_by_position(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        Keyring.from_env_value(text)
    assert NEW not in str(caught.value)


def test_a_repeated_env_item_is_refused() -> None:
    with pytest.raises(ValueError, match="secret #2 repeats secret #1"):
        Keyring.from_env_value(f"{NEW}, {NEW}")


def test_ephemeral_keyrings_have_their_own_random_secret() -> None:
    first, second = Keyring.ephemeral(), Keyring.ephemeral()
    assert first.key_ids != second.key_ids
    sealed = first.seal("o", "global", "k", b"x")
    assert first.open("o", "global", "k", sealed).plaintext == b"x"
    with pytest.raises(UndecryptableError):
        second.open("o", "global", "k", sealed)


def test_caches_stay_within_their_bound() -> None:
    keyring = Keyring([NEW, OLD], cache_size=64)
    for n in range(200):
        owner = keyring.owner_for(f'["s","session-{n}"]')
        keyring.open(owner, "session", "k", keyring.seal(owner, "session", "k", b"x"))
    assert keyring._owners.cache_info().currsize == 64
    assert keyring._aeads.cache_info().currsize == 64
    # Evicted entries are derived again, identically.
    owner = Keyring([NEW]).owner_for('["s","session-0"]')
    assert keyring.owner_for('["s","session-0"]') == owner


def test_default_caches_are_bounded_at_4096() -> None:
    keyring = Keyring([NEW])
    for n in range(4096 + 50):
        keyring.seal(keyring.owner_for(str(n)), "global", "k", b"")
    assert keyring._owners.cache_info().currsize == 4096
    assert keyring._aeads.cache_info().currsize == 4096


def test_a_zero_cache_size_is_refused() -> None:
    with pytest.raises(ValueError, match="cache_size"):
        Keyring([NEW], cache_size=0)


_ROTATED = Keyring([NEW, OLD])
_OLD_ONLY = Keyring([OLD])


@given(owner=st.text(), bucket=st.text(), key=st.text(max_size=256), plaintext=st.binary())
def test_any_address_and_value_round_trip(owner: str, bucket: str, key: str, plaintext: bytes) -> None:
    sealed = _ROTATED.seal(owner, bucket, key, plaintext)
    assert _ROTATED.open(owner, bucket, key, sealed) == Opened(plaintext, secret=0, version=VERSION)
    old_sealed = _OLD_ONLY.seal(owner, bucket, key, plaintext)
    assert _ROTATED.open(owner, bucket, key, old_sealed) == Opened(plaintext, secret=1, version=VERSION)


@given(
    address=st.tuples(st.text(max_size=8), st.text(max_size=8), st.text(max_size=8)),
    other=st.tuples(st.text(max_size=8), st.text(max_size=8), st.text(max_size=8)),
)
def test_any_other_address_refuses_the_value(address: tuple[str, str, str], other: tuple[str, str, str]) -> None:
    assume(address != other)
    sealed = _ROTATED.seal(*address, b"secret value")
    with pytest.raises(UndecryptableError):
        _ROTATED.open(*other, sealed)


def test_a_key_lives_at_hashed_addresses_one_per_secret_that_show_no_name() -> None:
    rotated = Keyring([NEW, OLD])
    here, there = rotated.locate(NOUR, "tool.search_tickets", "draft:T-1")
    assert here.owner == rotated.owner_for(NOUR)
    assert there.owner == Keyring([OLD]).owner_for(NOUR)
    assert (here, there) == (
        Keyring([NEW]).locate(NOUR, "tool.search_tickets", "draft:T-1")[0],
        *Keyring([OLD]).locate(NOUR, "tool.search_tickets", "draft:T-1"),
    )
    for address in (here, there):
        assert re.fullmatch("[0-9a-f]{32}", address.bucket)
        assert re.fullmatch("[0-9a-f]{32}", address.key)
    assert rotated.locate_bucket(NOUR, "tool.search_tickets") == (
        (here.owner, here.bucket),
        (there.owner, there.bucket),
    )


def test_equal_keys_of_two_owners_or_two_buckets_get_unrelated_addresses(keyring: Keyring) -> None:
    nours = keyring.locate(NOUR, "user", "signature")[0]
    sams = keyring.locate(SAM, "user", "signature")[0]
    sessions = keyring.locate(NOUR, "session", "signature")[0]
    assert len({nours.key, sams.key, sessions.key}) == 3
    assert nours.bucket != sams.bucket
    # Length-prefixed: shifting a character between bucket and key gives another address.
    assert keyring.locate(NOUR, "user", "sx")[0] != keyring.locate(NOUR, "users", "x")[0]
