"""Tests of the remember stores: one contract suite for all, plus what is particular to each."""
