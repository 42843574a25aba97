"""Tests of mcpkit_search: the analyser, BM25 and fusion, at unit level."""
