"""Controllers bound to their services once, when an app is built."""

from __future__ import annotations

from typing import Any, TypeVar

from litestar import Controller

C = TypeVar("C", bound=Controller)


def bound_controller(controller: type[C], **services: Any) -> type[C]:
    """``controller`` with its services as class attributes, for one app.

    The controller's handlers read ``self.<service>``: constructor injection, decided once
    when the app is built, rather than Litestar's dependency resolution on every request
    for a value that never changes (its cost: bench/README.md).
    """
    return type(
        controller.__name__, (controller,), {"__module__": controller.__module__, **services}
    )
