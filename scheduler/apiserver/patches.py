"""The three patch formats of the Kubernetes API: JSON merge (RFC 7386), JSON patch (RFC 6902)
and strategic merge (k8s.io/apimachinery `pkg/util/strategicpatch`) for the fields that carry
patch strategies in the kinds this API serves."""

from __future__ import annotations

import copy
from typing import Any

JSON_MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

# Lists merged element by element, keyed by this field (the `patchMergeKey` of the Go types);
# any other list is replaced whole, as upstream does for lists without a strategy.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumes": "name",
    "imagePullSecrets": "name",
    "conditions": "type",
    "ownerReferences": "uid",
    "taints": "key",
    "schedulingGates": "name",
    "resourceClaims": "name",
    "topologySpreadConstraints": "topologyKey",
    "addresses": "type",
    "hostAliases": "ip",
}
# Lists of scalars merged as sets (`patchStrategy:"merge"` on []string).
MERGE_SETS = frozenset({"finalizers"})


class PatchError(ValueError):
    """A patch that cannot be applied (the API server's 422 or 400)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def strategic_merge_patch(target: Any, patch: Any, field: str = "") -> Any:
    """Strategic merge: like a merge patch, but lists with a merge key merge by that key,
    `$patch: delete|replace`, `$deleteFromPrimitiveList/<f>`, `$setElementOrder/<f>` and
    `$retainKeys` are honoured."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    out = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            drop = set(value or [])
            out[name] = [v for v in out.get(name) or [] if v not in drop]
            continue
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list):
            out[key] = _merge_list(out.get(key), value, key)
        elif isinstance(value, dict):
            merged = strategic_merge_patch(out.get(key), value, key)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
        else:
            out[key] = value
    for key, value in patch.items():
        if key.startswith("$setElementOrder/"):
            _order(out, key.split("/", 1)[1], value)
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _merge_list(target: Any, patch: list[Any], field: str) -> list[Any]:
    current = list(target) if isinstance(target, list) else []
    if field in MERGE_SETS:
        return current + [v for v in patch if v not in current]
    key = MERGE_KEYS.get(field)
    if key is None or not all(isinstance(v, dict) for v in patch):
        return [copy.deepcopy(v) for v in patch if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    if any(isinstance(v, dict) and v.get("$patch") == "replace" for v in patch):
        return [{k: x for k, x in v.items() if k != "$patch"} for v in patch if v.get("$patch") != "replace"]
    for item in patch:
        ident = item.get(key)
        index = next((i for i, old in enumerate(current) if isinstance(old, dict) and old.get(key) == ident), None)
        if item.get("$patch") == "delete":
            if index is not None:
                current.pop(index)
            continue
        if index is None:
            current.append(strategic_merge_patch({}, item, field))
        else:
            current[index] = strategic_merge_patch(current[index], item, field)
    return current


def _order(out: dict[str, Any], field: str, order: Any) -> None:
    items = out.get(field)
    key = MERGE_KEYS.get(field)
    if not isinstance(items, list) or not isinstance(order, list):
        return

    def ident(v: Any) -> Any:
        return v.get(key) if key is not None and isinstance(v, dict) else v

    wanted = [ident(o) for o in order]
    rank = {w: i for i, w in enumerate(wanted) if isinstance(w, (str, int))}
    out[field] = sorted(items, key=lambda v: rank.get(ident(v), len(rank)) if isinstance(ident(v), (str, int)) else len(rank))


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: add, remove, replace, move, copy, test on JSON pointers."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch is a list of operations")
    doc = copy.deepcopy(target)
    for n, op in enumerate(operations):
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"operation {n}: needs 'op' and 'path'")
        kind, path = op["op"], _pointer(op["path"])
        if kind == "add":
            doc = _put(doc, path, copy.deepcopy(op.get("value")), insert=True)
        elif kind == "remove":
            doc = _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)
            doc = _put(doc, path, copy.deepcopy(op.get("value")), insert=False)
        elif kind in ("move", "copy"):
            source = _pointer(str(op.get("from", "")))
            value = copy.deepcopy(_get(doc, source))
            if kind == "move":
                doc = _remove(doc, source)
            doc = _put(doc, path, value, insert=True)
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError(f"operation {n}: test failed at {op['path']}")
        else:
            raise PatchError(f"operation {n}: unknown op {kind!r}")
    return doc


def _pointer(text: str) -> list[str]:
    if text == "":
        return []
    if not text.startswith("/"):
        raise PatchError(f"invalid JSON pointer {text!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in text[1:].split("/")]


def _get(doc: Any, path: list[str]) -> Any:
    node = doc
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise PatchError(f"path /{'/'.join(path)} does not exist")
    return node


def _put(doc: Any, path: list[str], value: Any, insert: bool) -> Any:
    if not path:
        return value
    parent = _get(doc, path[:-1])
    last = path[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            if insert:
                parent.insert(int(last), value)
            else:
                parent[int(last)] = value
        else:
            raise PatchError(f"index {last} out of range")
    else:
        raise PatchError(f"path /{'/'.join(path)} does not exist")
    return doc


def _remove(doc: Any, path: list[str]) -> Any:
    if not path:
        raise PatchError("cannot remove the whole document")
    parent = _get(doc, path[:-1])
    last = path[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        parent.pop(int(last))
    else:
        raise PatchError(f"path /{'/'.join(path)} does not exist")
    return doc


def apply_patch(target: dict[str, Any], content_type: str, patch: Any) -> dict[str, Any]:
    """Apply a patch of the given content type to a document."""
    base = content_type.split(";")[0].strip()
    if base == JSON_MERGE:
        out = merge_patch(target, patch)
    elif base == STRATEGIC:
        out = strategic_merge_patch(target, patch)
    elif base == JSON_PATCH:
        out = json_patch(target, patch)
    else:
        raise PatchError(f"unsupported patch type {content_type!r}; supported: {JSON_MERGE}, {STRATEGIC}, {JSON_PATCH}")
    if not isinstance(out, dict):
        raise PatchError("the patched document is not an object")
    return out
