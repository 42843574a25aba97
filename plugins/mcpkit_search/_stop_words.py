"""English stop words: function words too common to tell one memory from another."""

from __future__ import annotations

__all__ = ["ENGLISH_STOP_WORDS"]

_WORDS = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself nor of off on once only or other our ours ourselves out over own same she should so some
    such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t d ll m re ve
"""

#: Articles, pronouns, auxiliaries, prepositions and conjunctions, in their folded (lowercase, unaccented)
#: form. Negations ("not", "no") and words that carry a preference ("like", "prefer") are kept on purpose.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_WORDS.split())
