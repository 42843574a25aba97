"""``python -m mcpkit``: the same as the ``mcpkit`` command (handy where scripts are not on PATH)."""

import sys

from ._cli import main

sys.exit(main())
