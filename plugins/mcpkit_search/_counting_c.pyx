# cython: language_level=3, boundscheck=False, wraparound=False
"""``count_ascii`` compiled: the same counts as ``_counting._count_ascii``, in one pass over the text."""


def count_ascii(words, str text):
    """Each term ``words[token]`` gives for the ASCII words of ``text``, with how often it comes, and the total.

    A word is a run of ASCII letters and digits, as ``_counting.ascii_tokens`` cuts them; ``words[word]`` is a
    tuple of terms (its ``__missing__`` makes one when need be).
    """
    cdef dict counts = {}
    cdef Py_ssize_t total = 0, start = -1, at = 0
    cdef Py_UCS4 char
    for char in text:
        if (48 <= char <= 57) or (65 <= char <= 90) or (97 <= char <= 122):
            if start < 0:
                start = at
        elif start >= 0:
            total += _count(counts, words[text[start:at]])
            start = -1
        at += 1
    if start >= 0:
        total += _count(counts, words[text[start:]])
    return counts, total


cdef inline Py_ssize_t _count(dict counts, tuple terms):
    """Count each of ``terms`` once more in ``counts``; how many they were."""
    cdef Py_ssize_t before
    for term in terms:
        before = len(counts)
        seen = counts.setdefault(term, 1)  # a term met first (most are): one dict operation
        if len(counts) == before:
            counts[term] = seen + 1
    return len(terms)
