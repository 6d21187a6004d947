"""The engine's Koordinator extensions in one object (Koordinator's `FrameworkExtenderFactory`).

An `Extender` belongs to one Scheduler. It wraps the plugin registry (`registry`), hands each
profile its ExtendedHandle, mounts plugin services and keeps plugin controllers, holds the
debug flags, the leadership switch, the engine lock REST handlers run under, and the publisher
of attempt records. The Scheduler binds it once its profiles are built (`bind`), starts it
after loading the cluster (`run`) and publishes every attempt through it (`publish`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from scheduler.framework.images import build_image_index
from scheduler.framework.interface import Handle, PluginFactory
from scheduler.frameworkext.controllers import ControllerRegistry, Leadership
from scheduler.frameworkext.debug import DebugFlags, flag_handler, log_filter_failures
from scheduler.frameworkext.debug import log as debug_log
from scheduler.frameworkext.handle import ExtendedHandle
from scheduler.frameworkext.hooks import hook_phases
from scheduler.frameworkext.proxy import Option, plugin_factory_proxy
from scheduler.frameworkext.publisher import Publisher
from scheduler.frameworkext.services import (
    ANY_METHOD,
    SERVICES_BASE,
    Request,
    Response,
    ServiceTable,
    error_message,
    node_info_json,
)

if TYPE_CHECKING:
    from scheduler.records import AttemptRecord

INITIALIZING = "The component is initializing and temporarily unavailable"


class Extender:
    """Koordinator's framework extensions for one engine."""

    def __init__(
        self,
        *,
        debug_top_n: int = 0,
        debug_filter_failure: bool = False,
        leader: bool = True,
        controller_plugins: Iterable[str] = ("*",),
        hooks: Iterable[object] = (),
    ) -> None:
        self.lock = threading.RLock()
        self.flags = DebugFlags(debug_top_n, debug_filter_failure)
        self.leadership = Leadership(leader)
        self.services = ServiceTable(is_leader=self.leadership.leading, lock=self.lock)
        self.controllers = ControllerRegistry(controller_plugins)
        self.records: Publisher[AttemptRecord] = Publisher()
        self.scheduler: Any = None
        self.running = False
        self._hooks = list(hooks)
        for hook in self._hooks:
            if not hook_phases(hook):
                raise TypeError(f"{hook!r} implements no phase hook (pre_filter_hook, filter_hook or score_hook)")
        self._handles: dict[str, ExtendedHandle] = {}
        self._install_builtin_routes()
        self.leadership.subscribe(self._on_leadership)

    # ----- building the profiles ------------------------------------------------------------------
    def registry(self, base: Mapping[str, PluginFactory], *options: Option) -> dict[str, PluginFactory]:
        """`base` with every factory proxied, then the options applied (`with_plugin`, ...)."""
        out = {name: plugin_factory_proxy(self, factory) for name, factory in base.items()}
        for option in options:
            option(self, out)
        return out

    def extended_handle(self, handle: Handle) -> ExtendedHandle:
        """The ExtendedHandle of the handle's profile (one per profile, made on first use)."""
        if isinstance(handle, ExtendedHandle):
            return handle
        current = self._handles.get(handle.profile_name)
        if current is None or current.base is not handle:
            current = ExtendedHandle(handle, self)
            for hook in self._hooks:
                current.register_hook(hook)
            self._handles[handle.profile_name] = current
        return current

    def handle_of(self, profile: str) -> ExtendedHandle | None:
        """The ExtendedHandle of a profile, if one was made."""
        return self._handles.get(profile)

    def update_plugins(self, plugin: object, handle: ExtendedHandle) -> None:
        """After a plugin is built: mount its services, keep its controllers, chain its hooks."""
        self.services.register_plugin_service(plugin, handle.profile_name)
        self.controllers.register(plugin, handle.profile_name)
        if hook_phases(plugin):
            handle.register_hook(plugin)

    # ----- the engine ---------------------------------------------------------------------------------
    def bind(self, scheduler: Any) -> None:
        """Attach to a Scheduler whose profiles are built: the runtime reaches hooks and flags."""
        self.scheduler = scheduler
        metrics = getattr(scheduler, "metrics", None)
        if metrics is not None:
            # Controllers that fail to start or stop are logged and counted; the engine goes on.
            self.controllers.on_error = metrics.background_error
        for fwk in scheduler.profiles.values():
            fwk.extension = self.extended_handle(fwk.handle)
        # The first NextPod plugin of any profile is asked before the queue; later ones are skipped
        # ("NextPodPlugin already registered", framework_extender_factory.go).
        for fwk in scheduler.profiles.values():
            for name, plugin in fwk.plugins.items():
                next_pod = getattr(plugin, "next_pod", None)
                if callable(next_pod) and scheduler.queue.next_pod is None:
                    scheduler.queue.next_pod = (name, next_pod)

    def run(self) -> None:
        """The engine is serving: start the controllers if this instance leads."""
        with self.lock:
            self.running = True
            if self.leadership.is_leader:
                self.controllers.start()

    def stop(self) -> None:
        """The engine is shutting down: stop the controllers."""
        with self.lock:
            self.running = False
            self.controllers.stop()

    def _on_leadership(self, leader: bool) -> None:
        if leader and self.running:
            self.controllers.start()
        elif not leader:
            self.controllers.stop()

    def publish(self, record: AttemptRecord) -> None:
        """One attempt finished: note the debug switches on it, log failures if asked, fan it out."""
        if self.flags.filter_failure:
            record.debug_filter_failure = True
            if debug_log.isEnabledFor(logging.INFO):
                log_filter_failures(record.pod, record.filter_failures())
        if self.records.subscribers:
            self.records.publish(record)

    # ----- REST ---------------------------------------------------------------------------------------
    def dispatch(self, method: str, path: str, body: bytes = b"", query: Mapping[str, str] | None = None) -> Response:
        """Answer one REST call (what the console's bridge calls)."""
        return self.services.dispatch(method, path, body, query)

    def _install_builtin_routes(self) -> None:
        base = self.services.group(SERVICES_BASE)
        base.get("/__services__", self._list_services)
        base.get("/nodes/:nodeName", self._query_node)
        # Unlisted like kube's /debug/flags handlers, and not behind the leader gate.
        self.services.add(ANY_METHOD, "/debug/flags/s", flag_handler(self.flags.set_top_n), listed=False)
        self.services.add(ANY_METHOD, "/debug/flags/f", flag_handler(self.flags.set_filter_failure), listed=False)
        self.services.add(ANY_METHOD, "/debug/flags/v", flag_handler(self.flags.set_verbosity), listed=False)

    def _list_services(self, request: Request) -> tuple[int, Any]:
        return 200, self.services.listing()

    def _query_node(self, request: Request) -> tuple[int, Any]:
        if self.scheduler is None:
            return error_message(503, INITIALIZING)
        name = request.params["nodeName"]
        snapshot = self.scheduler.snapshot
        info = snapshot.get(name)
        if info is None:
            return error_message(404, f"cannot find node {name}")
        return 200, node_info_json(info, _image_nodes(snapshot))


def _image_nodes(snapshot: Any) -> dict[str, tuple[int, int]]:
    """Image name -> (size, nodes holding it), cached until nodes change."""

    def build() -> dict[str, tuple[int, int]]:
        index = build_image_index(snapshot)
        return {name: (s.size, s.num_nodes) for name, s in index.summaries.items()}

    cached: dict[str, tuple[int, int]] = snapshot.cached(("frameworkext", "image-nodes"), build)
    return cached


__all__ = ["INITIALIZING", "Extender"]
