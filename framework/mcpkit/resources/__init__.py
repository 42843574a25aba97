"""Resources: static resources and URI templates (``@resource``), ``resources/list``, ``resources/read`` and
``ResourceContext``."""

from ._resources import BoundResource, ResourceContext, ResourceNotFoundError, Resources, build_resource

__all__ = [
    "BoundResource",
    "ResourceContext",
    "ResourceNotFoundError",
    "Resources",
    "build_resource",
]
