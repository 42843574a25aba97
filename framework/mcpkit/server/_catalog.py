"""A server's resources and prompts: collected from its apps, checked, bound to their plugins, and served.

``Server`` gives each app's resource and prompt classes, with the plugins that wrap the app, to
``catalog``; it refuses a class that is not decorated, two resources with one URI or one name, and two
prompts with one name, with errors naming both classes. ``handlers`` are the SDK server's handlers for
what there is: a server without resources offers no ``resources/*`` methods (and no capability).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..base import Clock, ConfigurationError
from ..completion import Completions
from ..core import Plugin, prompt_options, providers_for, resource_options
from ..prompts import BoundPrompt, Prompts, build_prompt
from ..resources import BoundResource, Resources, build_resource
from ..subscriptions import Services, Subscriptions

__all__ = ["AppFeatures", "Catalog", "catalog"]

#: Why two mounts of one app with resources cannot share a server (added to the refusal).
_KEPT_URIS = (
    " A mount keeps the URIs its app declares (its own code writes them, in results and notifications), so one app "
    "with resources is mounted once per server."
)


@dataclass(frozen=True, slots=True)
class AppFeatures:
    """One app's resource and prompt classes, where it was declared, the plugins around it, and the prefix of the
    mounts it sits in (``a_``; its resources and prompts are listed under ``a_name``, the URIs unchanged)."""

    app_id: str
    where: str
    resources: tuple[type[Any], ...]
    prompts: tuple[type[Any], ...]
    plugins: tuple[Plugin, ...]
    prefix: str = ""


@dataclass(frozen=True, slots=True)
class Catalog:
    resources: Resources
    prompts: Prompts
    completions: Completions

    def handlers(self, subscriptions: Subscriptions) -> dict[str, Any]:
        """The SDK ``Server``'s ``on_*`` handlers for what this catalog holds."""
        found: dict[str, Any] = {}
        if self.resources:
            found |= {
                "on_list_resources": self.resources.list_resources,
                "on_list_resource_templates": self.resources.list_templates,
                "on_read_resource": self.resources.read,
                "on_subscribe_resource": subscriptions.subscribe,
                "on_unsubscribe_resource": subscriptions.unsubscribe,
            }
        if self.prompts:
            found |= {"on_list_prompts": self.prompts.list_prompts, "on_get_prompt": self.prompts.get}
        if self.completions:
            found["on_completion"] = self.completions.complete
        return found


def catalog(
    apps: Sequence[AppFeatures],
    clock: Callable[[], Clock],
    caller: Callable[[Any], Any],
    services: Services | None = None,
) -> Catalog:
    resources: list[BoundResource] = []
    prompts: list[BoundPrompt] = []
    uris: dict[str, str] = {}
    mounted_uris: set[str] = set()
    resource_names: dict[str, str] = {}
    prompt_names: dict[str, str] = {}
    for app in apps:
        for cls in app.resources:
            options = resource_options(cls) if isinstance(cls, type) else None
            if options is None:
                raise ConfigurationError(
                    f"{cls!r} in {app.where} is not a resource: decorate it with @resource(uri=..., name=...)."
                )
            spec = build_resource(cls, options, app.app_id, app.prefix)
            label = f"{cls.__qualname__} in {app.where}"
            mounted = bool(app.prefix) or spec.uri in mounted_uris
            _claim(uris, spec.uri, label, "Two resources have the URI", _KEPT_URIS if mounted else "")
            if app.prefix:
                mounted_uris.add(spec.uri)
            _claim(resource_names, spec.name, label, "Two resources are named")
            what = f"resource {spec.name!r}"
            resources.append(BoundResource(spec, providers_for(spec.cls, app.plugins, what)))
        for cls in app.prompts:
            found = prompt_options(cls) if isinstance(cls, type) else None
            if found is None:
                raise ConfigurationError(f"{cls!r} in {app.where} is not a prompt: decorate it with @prompt(name=...).")
            prompt_spec = build_prompt(cls, found, app.app_id, app.prefix)
            _claim(prompt_names, prompt_spec.name, f"{cls.__qualname__} in {app.where}", "Two prompts are named")
            what = f"prompt {prompt_spec.name!r}"
            prompts.append(BoundPrompt(prompt_spec, providers_for(prompt_spec.cls, app.plugins, what)))
    served_resources = Resources(resources, clock, caller, services)
    served_prompts = Prompts(prompts, clock, caller, services)
    return Catalog(served_resources, served_prompts, Completions(served_resources, served_prompts, clock, caller))


def _claim(owners: dict[str, str], key: str, label: str, problem: str, hint: str = "") -> None:
    if key in owners:
        raise ConfigurationError(
            f"{problem} {key!r}: {owners[key]} and {label}; each must be unique in a server.{hint}"
        )
    owners[key] = label
