"""``check_pinned``: a model file is the one mcpkit was measured with, by its SHA-256, before it is loaded; and
``SemanticUnavailableError``, what every local model raises when it cannot be used."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["SemanticUnavailableError", "check_pinned"]


class SemanticUnavailableError(RuntimeError):
    """The semantic extra is not installed, or its model files are not the ones pinned here."""


def check_pinned(path: Path, expected: str, model: str, install: str) -> None:
    """Raise ``SemanticUnavailableError`` unless ``path`` reads and hashes to ``expected``; ``install`` says how to
    get the right file."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        raise SemanticUnavailableError(
            f"The {model} model file {path} cannot be read ({exc.strerror}); reinstall it: {install}."
        ) from None
    if digest.hexdigest() != expected:
        raise SemanticUnavailableError(
            f"The {model} model file {path} has SHA-256 {digest.hexdigest()}, not the pinned {expected}: it is not "
            f"the model mcpkit was tested with. Reinstall it ({install}) or pass your own Embedder."
        )
