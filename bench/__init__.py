"""mcpkit's benchmark harness: servers side by side, a lean load client, micro-benchmarks, a report.

Run everything with ``python -m bench`` (``--quick`` for a short development run); see ``bench/README.md``.
"""
