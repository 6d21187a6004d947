"""The schema generator: the console API's routes and Koordinator's (`koord_schema`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.generators import SchemaGenerator


class ConsoleSchemaGenerator(SchemaGenerator):
    """drf-spectacular's generator over `koord_schema.urlpatterns` unless told other patterns.

    A module of its own: the settings name it, and drf-spectacular's views import it while the
    API's URLconf (which `koord_schema` includes) is still being imported.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("urlconf") is None and kwargs.get("patterns") is None:
            kwargs["urlconf"] = "schedconsole.api.koord_schema"
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]  # drf-spectacular's generator has no hints
