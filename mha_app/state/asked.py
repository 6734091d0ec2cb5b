"""Which question a page asks: a prediction question is one question per example, layer, head and query token (and
key token, for a question about one cell), so an answer counts for that one and for no other."""

from __future__ import annotations

from dataclasses import dataclass

from mha_app.state.settings import Settings, Spec

ONE_CELL = ("cell_weight",)  # the kinds of question about one attention weight: their key token is part of them


@dataclass(frozen=True)
class Asked:
    """A question's identity: its kind (mha_core.teaching.questions.KINDS) about this example (the normalised spec),
    layer, head and query token (1-based), and key token (None where the question is not about one cell)."""

    kind: str
    spec: Spec
    layer: int
    head: int
    query: int
    key: int | None = None


def asked(kind: str, settings: Settings, keys: int) -> Asked:
    """The question `kind` as these settings ask it; keys: the example's number of key tokens (the key the page
    shows is the view's, or the last one where the view's is past it)."""
    view = settings.view
    key = min(view.key, keys) if kind in ONE_CELL else None
    return Asked(kind, settings.spec, view.layer, view.head, view.query, key)
