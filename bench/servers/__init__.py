"""One module per benchmark server; each exposes ``build(options) -> ASGI app`` with the same tool shape.

The tool is ``increment`` (no arguments): add one to the caller's counter and return
``{"count": n}``. The help-desk server instead serves the demo's own tools.
"""
