"""The one door between the console and the engine.

This package is the only code under `schedconsole/` that imports `scheduler` (a test checks);
everything the console needs from the engine is here, taking and returning plain JSON values:

- `engine`: the hosted engine (`Engine`): built over the database's objects or a live cluster,
  stepped by the host's thread, reconfigured, edited, asked through Koordinator's routes and `/k8s`;
- `documents`: uploads parsed and loaded, configurations checked, the documents of live objects;
- `records`: attempts as the history stores them and as the live view sends them;
- `reads`: lists and dashboard pages read from the engine's state, paged;
- `advice`: what-if, comparisons and threshold previews;
- `why`: why a pending pod waits, and the checked changes that would let it fit;
- `preemptions`: each preemption's timeline, fed by the engine's records and API calls;
- `edits`: pods and nodes replaced with edited documents, a node deleted, the cluster reset;
- `annotations`: each attempt's result written on its pod, as kube-scheduler-simulator writes it;
- `answers`: the shapes (TypedDicts) of everything the console reads back;
- `common`: the refusals (`BadInput`, `NotFound`) and page bounds they all share.

The console's operations on the engine (`schedconsole.engine.operations`) call these on the
engine thread.
"""

from schedconsole.engine.bridge.common import LIST_LIMIT_MAX, PAGE_LIMIT_MAX, BadInput, NotFound
from schedconsole.engine.bridge.documents import (
    check_config,
    default_config_document,
    k8s_resources,
    k8s_route,
    live_documents,
    load_objects,
    parse_body,
    parse_documents,
    pod_manifest,
    with_defaults,
)
from schedconsole.engine.bridge.engine import Change, Engine, Hooks, build_check
from schedconsole.engine.bridge.records import LiveRecord, Record, live_message, live_record, record_key, record_row, score_table
from scheduler.bench.run import shape_error as bench_shape_error

__all__ = [
    "LIST_LIMIT_MAX",
    "PAGE_LIMIT_MAX",
    "BadInput",
    "Change",
    "Engine",
    "Hooks",
    "LiveRecord",
    "NotFound",
    "Record",
    "bench_shape_error",
    "build_check",
    "check_config",
    "default_config_document",
    "k8s_resources",
    "k8s_route",
    "live_documents",
    "live_message",
    "live_record",
    "load_objects",
    "parse_body",
    "parse_documents",
    "pod_manifest",
    "record_key",
    "record_row",
    "score_table",
    "with_defaults",
]
