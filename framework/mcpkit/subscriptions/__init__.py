"""Telling clients that something changed: resource subscriptions (``resources/subscribe``,
``subscriptions/listen``) and list changes (``Server.enable``/``disable``), and the per-session services that
carry them."""

from ._list_changes import Kind, ListChangingServer, Switchable, switch, switched
from ._services import Services
from ._subscriptions import SubscriptionLimits, Subscriptions

__all__ = [
    "Kind",
    "ListChangingServer",
    "Services",
    "SubscriptionLimits",
    "Subscriptions",
    "Switchable",
    "switch",
    "switched",
]
