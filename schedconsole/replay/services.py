"""Replays: the request checked, the sweep cut into parts (a candidate's segment each), the parts
handed to task workers (production: Celery on Redis) or a local process pool (embedded), their
outcomes merged per candidate as they arrive, progress and cancel through the replay's job.

A part's task takes the part's id; the worker builds the part's spec from the database (for the
change log, the rows up to the window's end) and stores the outcome itself: the broker carries
ids and digests, not traces or outcomes.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Mapping
from concurrent.futures import Future, as_completed
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction

from schedconsole.cluster.models import Binding, ClusterObject, Job
from schedconsole.engine.bridge import BadInput, default_config_document
from schedconsole.engine.bridge import replay as bridge_replay
from schedconsole.engine.operations import ReplayPartRun
from schedconsole.history.models import Attempt, ObjectChange
from schedconsole.profiles.models import ProfileVersion
from schedconsole.replay.models import Replay, ReplayCandidate, ReplayPart

log = logging.getLogger(__name__)
LIMITS = {"segments": (1, 64), "samples": (2, 500), "seed": (0, 2**31 - 1), "nodes": (1, 100000), "pods": (1, 1000000)}
MAX_CANDIDATES = 16
DIFF_LIMIT = 100


def _int(data: Mapping[str, Any], key: str, default: int | None) -> int | None:
    value = data.get(key, default)
    if value is None:
        return None
    low, high = LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadInput(key, f"invalid value {value!r}; expected a whole number from {low} to {high}")
    return value


def _moment(value: Any, field: str) -> float:
    """Seconds: a number (trace seconds, or epoch seconds for the change log) or an RFC 3339 time."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not -1e11 < value < 1e11:  # beyond year 5000: no datetime holds it
            raise BadInput(field, f"invalid value {value!r}; expected seconds within years 0001 to 5000")
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    raise BadInput(field, f"invalid value {value!r}; expected seconds or an RFC 3339 time such as 2026-11-26T00:00:00Z")


def _candidates(data: Mapping[str, Any]) -> list[tuple[str, int | None, dict[str, Any]]]:
    """(label, version or None, document) for each candidate: profile versions, drafts, a grid."""
    out: list[tuple[str, int | None, dict[str, Any]]] = []
    raw = data.get("candidates") or []
    if not isinstance(raw, list):
        raise BadInput("candidates", "expected a list of {version} or {document, label?}")
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise BadInput(f"candidates[{i}]", "expected {version} or {document, label?}")
        if "version" in item:
            if isinstance(item["version"], bool) or not isinstance(item["version"], int):
                raise BadInput(f"candidates[{i}].version", f"invalid value {item['version']!r}; expected a version number")
            found = ProfileVersion.objects.filter(version=item["version"]).first()
            if found is None:
                raise BadInput(f"candidates[{i}].version", f"no profile version {item['version']!r}")
            out.append((str(item.get("label") or f"v{found.version}"), found.version, found.document))
            continue
        document = item.get("document")
        if document == "default":
            document = default_config_document()
        bridge_replay.check_candidate(document, f"candidates[{i}].document")
        assert isinstance(document, dict)  # checked: a configuration is an object
        out.append((str(item.get("label") or f"draft {i + 1}"), None, document))
    grid = data.get("grid")
    if grid is not None:
        if not isinstance(grid, dict) or not isinstance(grid.get("values"), dict):
            raise BadInput("grid", "expected {base: version or document, values: {<Plugin>.<field>: [values]}}")
        base = grid.get("base") or default_config_document()
        if not isinstance(base, int | dict) or isinstance(base, bool):
            raise BadInput("grid.base", f"invalid value {base!r}; expected a version number or a configuration document")
        if isinstance(base, int):
            found = ProfileVersion.objects.filter(version=base).first()
            if found is None:
                raise BadInput("grid.base", f"no profile version {base!r}")
            base = found.document
        out.extend((label, None, doc) for label, doc in bridge_replay.grid_candidates(base, grid["values"]))
    if not out:
        raise BadInput("candidates", "give at least one candidate (a profile version, a document, or a grid)")
    if len(out) > MAX_CANDIDATES:
        raise BadInput("candidates", f"{len(out)} candidates; at most {MAX_CANDIDATES}")
    return out


def check(data: Any) -> tuple[dict[str, Any], list[tuple[str, int | None, dict[str, Any]]]]:
    """The replay's params (checked, defaults filled) and its candidates; BadInput names the field."""
    if not isinstance(data, dict):
        raise BadInput("body", "expected an object")
    source = data.get("source", "history")
    if source not in ("history", "openb"):
        raise BadInput("source", f"invalid value {source!r}; expected history (the console's change log) or openb")
    params: dict[str, Any] = {"source": source}
    for key, default in (("segments", 1), ("samples", 48), ("seed", 1)):
        params[key] = _int(data, key, default)
    window = data.get("window") or {}
    if not isinstance(window, dict):
        raise BadInput("window", "expected {start, end}")
    if source == "openb":
        # Production: the replay workers read the trace (the web process need not hold it); a
        # worker without it fails its parts with the folder named.
        if settings.EMBEDDED and not (Path(settings.REPLAY_OPENB_DATA) / "openb_pod_list_default.csv").is_file():
            raise BadInput("source", f"no openb trace in {settings.REPLAY_OPENB_DATA} (SCHEDCONSOLE_REPLAY_OPENB_DATA)")
        params["nodes"], params["pods"] = _int(data, "nodes", None), _int(data, "pods", None)
        if "start" in window:
            params["start"] = _moment(window["start"], "window.start")
        if "end" in window:
            params["end"] = _moment(window["end"], "window.end")
    else:
        end = _moment(window["end"], "window.end") if "end" in window else datetime.now(tz=UTC).timestamp()
        start = _moment(window["start"], "window.start") if "start" in window else end - 24 * 3600
        params["start"], params["end"] = start, end
    if "start" in params and "end" in params and params["end"] <= params["start"]:
        raise BadInput("window.end", "must be after window.start")
    return params, _candidates(data)


def create(data: Any, user: str) -> Replay:
    """Check, store and start a replay; its job follows the parts."""
    params, candidates = check(data)
    with transaction.atomic():
        total = len(candidates) * params["segments"]
        job = Job.objects.create(kind="replay", params=params, user=user, total=total, phase="queued")
        replay = Replay.objects.create(params=params, user=user, job=job)
        Job.objects.filter(pk=job.pk).update(params={**params, "replay": replay.pk})
        for index, (label, version, document) in enumerate(candidates):
            candidate = ReplayCandidate.objects.create(
                replay=replay, index=index, label=label, version=version, document=document
            )
            ReplayPart.objects.bulk_create(ReplayPart(candidate=candidate, segment=s) for s in range(params["segments"]))
        if params["source"] == "history":
            replay.recorded = recorded_placements(params["start"], params["end"])
            replay.save(update_fields=["recorded"])
    part_ids = list(
        ReplayPart.objects.filter(candidate__replay=replay).order_by("candidate__index", "segment").values_list("pk", flat=True)
    )
    if settings.EMBEDDED:
        cancel_file(replay.pk).unlink(missing_ok=True)  # a file left by an earlier database's replay of that id
        threading.Thread(target=_run_embedded, args=(replay.pk, part_ids), name=f"replay-{replay.pk}", daemon=True).start()
    else:
        from schedconsole.replay.tasks import run_part

        for pk in part_ids:
            run_part.apply_async(args=(pk,))
    return replay


def recorded_placements(start: float, end: float) -> dict[str, str]:
    """Where the recorded run bound each pod created within the window ("" when it did not)."""
    lo, hi = datetime.fromtimestamp(start, tz=UTC), datetime.fromtimestamp(end, tz=UTC)
    created = ObjectChange.objects.filter(kind="Pod", action="add", at__gte=lo, at__lte=hi).values_list("namespace", "name")
    out = {f"{ns}/{name}": "" for ns, name in created}
    for pod, node in Binding.objects.filter(at__gte=lo, at__lte=hi).order_by("id").values_list("pod", "node"):
        if pod in out and not out[pod]:
            out[pod] = node
    return out


def part_spec(part: ReplayPart) -> dict[str, Any]:
    """What the part's scratch engine replays, as plain JSON."""
    candidate = part.candidate
    params = candidate.replay.params
    spec: dict[str, Any] = {
        "source": params["source"],
        "segments": params["segments"],
        "segment": part.segment,
        "seed": params["seed"],
        "samples": params["samples"],
        "document": candidate.document,
        "label": candidate.label,
    }
    if params["source"] == "openb":
        spec.update(data=settings.REPLAY_OPENB_DATA, nodes=params.get("nodes"), pods=params.get("pods"))
        spec.update({k: params[k] for k in ("start", "end") if k in params})
        return spec
    end = datetime.fromtimestamp(params["end"], tz=UTC)
    changes = []
    # Objects deleted before the window starts leave no trace in its starting state: their rows
    # stay in the database (a day of a busy console is mostly such pods).
    start = datetime.fromtimestamp(params["start"], tz=UTC)
    gone = ObjectChange.objects.filter(kind="Pod", action="delete", at__lt=start).exclude(uid="")
    rows = ObjectChange.objects.filter(at__lte=end).exclude(kind="Pod", uid__in=gone.values("uid"))
    for row in rows.order_by("id").iterator():
        changes.append(
            {
                "at": row.at.timestamp(),
                "action": row.action,
                "kind": row.kind,
                "namespace": row.namespace,
                "name": row.name,
                "node": row.node,
                "document": row.document,
            }
        )
    base = list(ClusterObject.objects.filter(deleted=False).exclude(kind__in=("Pod", "Node")).values_list("document", flat=True))
    spec.update(changes=changes, base=base, start=params["start"], end=params["end"])
    return spec


def cancel_file(replay_id: int) -> Path:
    """Embedded: the file whose existence tells the pool's parts to stop."""
    return Path(tempfile.gettempdir()) / f"schedconsole-replay-{replay_id}.cancel"


def is_cancelled(part_id: int) -> bool:
    """Whether the part's job was cancelled."""
    return (
        Job.objects.filter(replay__candidates__parts__pk=part_id, state="cancelled").exists()
        or ReplayPart.objects.filter(pk=part_id, state="cancelled").exists()
    )


def _run_embedded(replay_id: int, part_ids: list[int]) -> None:
    """Embedded: every part on the local process pool; outcomes stored as they arrive."""
    futures: dict[Future[dict[str, Any]], int] = {}
    try:
        flag = cancel_file(replay_id)
        for pk in part_ids:
            part = ReplayPart.objects.select_related("candidate__replay").get(pk=pk)
            if part.state != "queued":
                continue  # cancelled before it was handed over
            spec = {**part_spec(part), "cancelFile": str(flag)}
            futures[bridge_replay.local_pool.submit(spec, settings.REPLAY_WORKERS)] = pk
            ReplayPart.objects.filter(pk=pk).update(state="running")
        _progress(replay_id)
        for future in as_completed(futures):
            pk = futures[future]
            try:
                answer = future.result()
            except bridge_replay.Cancelled:
                finish(pk, None, "cancelled")
                continue
            except Exception as exc:  # the page shows why a part failed
                finish(pk, None, f"{type(exc).__name__}: {exc}")
                continue
            finish(pk, answer)
    except (Replay.DoesNotExist, ReplayPart.DoesNotExist):
        log.warning("replay %s was deleted while it ran", replay_id)
        for future in futures:
            future.cancel()
    finally:
        close_old_connections()


def execute(part_id: int, worker: str) -> str:
    """A task worker's part: build its spec, replay it here, store the outcome; the digest so far."""
    part = ReplayPart.objects.select_related("candidate__replay").filter(pk=part_id).first()
    if part is None or part.state != "queued" or is_cancelled(part_id):
        return ""
    ReplayPart.objects.filter(pk=part_id).update(state="running", worker=worker)
    _progress(part.candidate.replay_id)
    checked = [0.0]

    def cancelled() -> bool:
        import time

        now = time.monotonic()
        if now - checked[0] < 1.0:
            return False
        checked[0] = now
        return is_cancelled(part_id)

    try:
        answer = ReplayPartRun(part_spec(part)).execute(cancelled)
    except bridge_replay.Cancelled:
        finish(part_id, None, "cancelled")
        return ""
    except Exception as exc:
        finish(part_id, None, f"{type(exc).__name__}: {exc}")
        return ""
    answer["worker"] = worker
    return finish(part_id, answer)


def finish(part_id: int, answer: Mapping[str, Any] | None, error: str = "") -> str:
    """Store a part's outcome (or why it has none); merge its candidate when its last part is in;
    the candidate's digest then ("" before)."""
    with transaction.atomic():
        part = ReplayPart.objects.select_related("candidate").get(pk=part_id)
        replay = Replay.objects.select_for_update().get(pk=part.candidate.replay_id)
        if answer is not None:
            part.state, part.outcome, part.seconds = "done", answer["outcome"], float(answer.get("seconds", 0.0))
            part.worker = str(answer.get("worker") or f"pid {answer.get('pid')}")
        else:
            part.state, part.error = ("cancelled" if error == "cancelled" else "failed"), error
        part.save()
        candidate = part.candidate
        parts = list(candidate.parts.order_by("segment"))
        digest = ""
        if all(p.state == "done" for p in parts):
            result = bridge_replay.merged([p.outcome or {} for p in parts])
            candidate.state, candidate.summary, candidate.digest, candidate.outcome = (
                "done",
                result["summary"],
                result["digest"],
                result["outcome"],
            )
            candidate.save()
            ReplayPart.objects.filter(candidate=candidate).update(outcome=None)  # kept once, merged
            digest = candidate.digest
        elif any(p.state in ("failed", "cancelled") for p in parts):
            candidate.state = "failed" if any(p.state == "failed" for p in parts) else "cancelled"
            candidate.save(update_fields=["state"])
        _progress(replay.pk)
    return digest


def _progress(replay_id: int) -> None:
    """The replay's state and its job's bar from its parts."""
    replay = Replay.objects.get(pk=replay_id)
    states = list(ReplayPart.objects.filter(candidate__replay=replay).values_list("state", flat=True))
    done = sum(1 for s in states if s == "done")
    finished = sum(1 for s in states if s in ("done", "failed", "cancelled"))
    complete = ReplayCandidate.objects.filter(replay=replay, state="done").count()
    total_candidates = ReplayCandidate.objects.filter(replay=replay).count()
    if finished < len(states):
        state = "running" if any(s != "queued" for s in states) else "queued"
    elif "failed" in states:
        state = "failed"
    elif "cancelled" in states:
        state = "cancelled"
    else:
        state = "done"
    # Conditional updates: a cancel that lands between this read and write must win.
    Replay.objects.filter(pk=replay_id).exclude(state="cancelled").update(state=state)
    if replay.job_id is not None:
        phase = f"{complete} of {total_candidates} candidates merged"
        errors = list(ReplayPart.objects.filter(candidate__replay=replay, state="failed").values_list("error", flat=True)[:1])
        fields: dict[str, Any] = {"done": done, "total": len(states), "phase": phase}
        if errors:
            fields["error"] = errors[0]
        if state == "done":
            fields["result"] = {
                "replay": replay_id,
                "digests": dict(ReplayCandidate.objects.filter(replay=replay).values_list("label", "digest")),
            }
        jobs = Job.objects.filter(pk=replay.job_id)
        if not jobs.exclude(state="cancelled").update(**fields, state=state):
            jobs.update(done=done, total=len(states))  # cancelled: the bar moves, the state and phase stay


def cancel(job: Job) -> None:
    """Stop a replay's job: queued parts are dropped, running ones stop at their next check."""
    Job.objects.filter(pk=job.pk).update(state="cancelled", phase="cancelled")
    replay = Replay.objects.filter(job=job).first()
    if replay is None:
        return
    Replay.objects.filter(pk=replay.pk).update(state="cancelled")
    ReplayPart.objects.filter(candidate__replay=replay, state="queued").update(state="cancelled")
    if settings.EMBEDDED:
        cancel_file(replay.pk).touch()
    ReplayCandidate.objects.filter(replay=replay).exclude(state="done").update(state="cancelled")


def attempt_links(pods: list[str]) -> dict[str, int]:
    """The last recorded attempt of each pod (its decision record: /attempts/<id>/)."""
    out: dict[str, int] = {}
    for pod, pk in Attempt.objects.filter(pod__in=pods).order_by("id").values_list("pod", "id"):
        out[pod] = pk
    return out
