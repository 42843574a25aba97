"""Proof under fire: real processes, outages, hostile callers; each test records the figures it measured."""
