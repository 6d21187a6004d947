"""Background jobs: imports and benchmarks with their progress (`cluster.jobs`)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from schedconsole.api import serializers as S
from schedconsole.api.base import PAGE_PARAMETERS, ConsoleAPIView, audit, page
from schedconsole.cluster import jobs
from schedconsole.cluster.models import Job


def started(request: Request, job: Job) -> Response:
    """202 with the job and where to follow it."""
    body = {**jobs.job_json(job), "url": f"/api/jobs/{job.pk}/", "page": f"/jobs/{job.pk}/"}
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": f"/api/jobs/{job.pk}/"})


class JobList(ConsoleAPIView):
    """GET the jobs, newest first (`?kind=import|bench`)."""

    @extend_schema(
        operation_id="jobs_list",
        parameters=[OpenApiParameter("kind", str, description="import or bench"), *PAGE_PARAMETERS],
        responses=S.paged(S.JobSerializer, "PaginatedJobList"),
    )
    def get(self, request: Request) -> Response:
        """A page of jobs."""
        found = Job.objects.all()
        kind = request.query_params.get("kind")
        if kind:
            found = found.filter(kind=kind)
        return page(request, [jobs.job_json(j) for j in found[:500]], self)


class JobDetail(ConsoleAPIView):
    """GET one job: `state` (queued, running, done, failed), `phase`, `done` of `total`, `percent`, `result`, `error`."""

    @extend_schema(responses=S.JobSerializer)
    def get(self, request: Request, pk: int) -> Response:
        """The job or 404."""
        return Response(jobs.job_json(get_object_or_404(Job, pk=pk)))


class JobCancel(ConsoleAPIView):
    """POST stops a running replay job: its queued parts are dropped, running ones stop at their
    next check (a few hundred events); 409 for a job that cannot be cancelled."""

    @extend_schema(request=None, responses={200: S.JobSerializer, 409: S.JobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        """Cancel it."""
        job = get_object_or_404(Job, pk=pk)
        if job.kind != "replay" or job.state in ("done", "failed", "cancelled"):
            return Response(jobs.job_json(job), status=status.HTTP_409_CONFLICT)
        from schedconsole.replay.services import cancel

        cancel(job)
        audit(request, "job.cancel", f"job {job.pk}")
        job.refresh_from_db()
        return Response(jobs.job_json(job))


class Bench(ConsoleAPIView):
    """POST `{"workload", "nodes"?, "initPods"?, "pods"?}` starts `python -m scheduler bench` on a
    generated workload, or `{"workload": "cluster-copy"}` on a scratch copy of the simulated
    cluster (never the live one); 202 with the job to follow."""

    @extend_schema(request=S.BenchBodySerializer, responses={202: S.StartedJobSerializer})
    def post(self, request: Request) -> Response:
        """Start the benchmark."""
        try:
            params = jobs.bench_params(request.data)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            raise ValidationError({field: [message]}) from exc
        job = jobs.start("bench", params, getattr(request.user, "username", "") or "")
        audit(request, "bench.start", params["workload"], after=params)
        return started(request, job)
