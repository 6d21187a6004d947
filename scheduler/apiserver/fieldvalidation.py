"""kube-apiserver's `fieldValidation` on create, update and patch, in its words (v1.35, compared
with the real binary in ../shared/k8s).

Bodies of built-in kinds are decoded against their fields (`scheduler.api.fieldschema`):

- a number its Go field cannot hold is refused whatever the mode: 400 `... cannot be handled as a
  Pod: json: cannot unmarshal ...` on create and update, 422 on the `patch` field on a patch;
- unknown fields: `Strict` refuses them (400 `strict decoding error: unknown field "spec.foo"` on
  create and update; on a patch, 422 naming the patch, unknown fields sorted as the patched
  object's keys are), `Warn` (the default) drops them and answers with one warning each (the
  `Warning: 299 - "unknown field \\"spec.foo\\""` headers kubectl prints), `Ignore` drops them;
- any other mode is a 422 on the request's options (`PatchOptions.meta.k8s.io "" is invalid`).
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

from scheduler.api import fieldschema
from scheduler.apiserver.patches import STRATEGIC
from scheduler.apiserver.resources import Resource, StatusError

MODES = ("Ignore", "Strict", "Warn")
OPTIONS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}


def mode_of(query: dict[str, Any], verb: str) -> str:
    """The request's `fieldValidation` (Warn when not given), or the 422 for an unsupported one."""
    mode = str(query.get("fieldValidation") or "Warn")
    if mode in MODES:
        return mode
    detail = f'Unsupported value: "{mode}": supported values: "", ' + ", ".join(f'"{m}"' for m in MODES)
    options = OPTIONS.get(verb, "CreateOptions")
    cause = {"reason": "FieldValueNotSupported", "message": detail, "field": "fieldValidation"}
    raise StatusError(
        422,
        "Invalid",
        f'{options}.meta.k8s.io "" is invalid: fieldValidation: {detail}',
        {"group": "meta.k8s.io", "kind": options, "causes": [cause]},
    )


def decode(res: Resource, doc: dict[str, Any], mode: str) -> list[str]:
    """Check a create or update body as kube-apiserver decodes it; unknown fields are dropped
    from `doc` unless refused. Returns the warnings (Warn only)."""
    problems = fieldschema.check(res.kind, doc, prune=mode != "Strict")
    prefix = f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}'
    undecodable = [p.message for p in problems if not p.unknown]
    if undecodable:
        raise StatusError(400, "BadRequest", f"{prefix}: {undecodable[0]}")
    unknown = [p.message for p in problems if p.unknown]
    if unknown and mode == "Strict":
        raise StatusError(400, "BadRequest", f"{prefix}: strict decoding error: {', '.join(unknown)}")
    return unknown if mode == "Warn" else []


def decode_patched(res: Resource, doc: dict[str, Any], mode: str, content_type: str, patch: Any) -> list[str]:
    """Check an object after a patch as kube-apiserver decodes it; unknown fields are dropped from
    `doc` unless refused. Returns the warnings (Warn only)."""
    if not fieldschema.knows(res.kind):
        return []
    # kube-apiserver decodes the patched object from a map: its fields in sorted order.
    problems = fieldschema.check(res.kind, _sorted(doc))
    undecodable = [p.message for p in problems if not p.unknown]
    unknown = [p.message for p in problems if p.unknown]
    if undecodable or (unknown and mode == "Strict"):
        # A strategic merge patch is shown as Go prints the patch; the others as the patched object.
        shown = go_sprint(patch) if content_type.startswith(STRATEGIC) else json.dumps(_sorted(doc), separators=(",", ":"))
        why = undecodable[0] if undecodable else "strict decoding error: " + ", ".join(unknown)
        detail = f"Invalid value: {json.dumps(shown, ensure_ascii=False)}: {why}"
        cause = {"reason": "FieldValueInvalid", "message": detail, "field": "patch"}
        raise StatusError(422, "Invalid", f' "" is invalid: patch: {detail}', {"causes": [cause]})
    if unknown:
        fieldschema.check(res.kind, doc, prune=True)
    return unknown if mode == "Warn" else []


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return copy.copy(value)


INT64 = (-(2**63), 2**63 - 1)


def go_sprint(value: Any) -> str:
    """A decoded JSON value as Go's `%v` prints it (`map[spec:map[foo:1]]`): maps with sorted keys,
    whole numbers that fit int64 as integers (as apimachinery decodes them), others as `%g`."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and INT64[0] <= value <= INT64[1]:
        return str(value)
    if isinstance(value, int | float):
        return go_float(float(value))
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(value[k])}" for k in sorted(value)) + "]"
    return str(value)


def go_float(value: float) -> str:
    """Go's `%v` of a float64: the shortest digits, in exponent form below 1e-4 and from 1e+06."""
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - len(text)
    point = len(text) + exponent  # where the decimal point falls in `text`
    neg = "-" if sign else ""
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{neg}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if point <= 0:
        return f"{neg}0.{'0' * -point}{text}"
    if point >= len(text):
        return neg + text + "0" * (point - len(text))
    return f"{neg}{text[:point]}.{text[point:]}"
