"""The one compiled part of mcpkit, optional: ``mcpkit_search._counting_c`` (docs/architecture.md, "Compiled").

Everything else is in pyproject.toml. Without a C compiler the extension is skipped (``optional``) and
``mcpkit_search._counting`` runs its Python twin, with the same results.
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = cythonize(
    [Extension("mcpkit_search._counting_c", ["plugins/mcpkit_search/_counting_c.pyx"])],
    compiler_directives={"language_level": "3"},
)
for extension in extensions:
    extension.optional = True  # (cythonize makes new Extension objects, without this flag)

setup(ext_modules=extensions)
