"""Jobs: start an import or a benchmark, follow its progress bar, read its result."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from schedconsole.cluster import jobs
from schedconsole.cluster.models import Job
from schedconsole.pages.views import PAGE_SIZE, int_param, page, pager_context

BENCH_FIGURES = (
    ("pods_per_second", "pods per second"),
    ("seconds", "seconds (first pod taken to last measured pod bound)"),
    ("scheduled", "measured pods bound"),
    ("pods", "measured pods"),
    ("meant_pending", "measured pods the workload means never to bind"),
    ("other_schedulers", "pending pods of schedulers no profile runs (left out)"),
    ("nodes", "nodes"),
    ("pods_per_cpu_second", "pods per CPU-second"),
    ("cpu_seconds", "CPU seconds"),
    ("peak_rss_mb", "peak RSS (MB)"),
    ("churn_scheduled", "churn pods bound"),
    ("stop", "how the run ended"),
)


def jobs_page(request: HttpRequest) -> HttpResponse:
    """The forms to start an import or a benchmark, and the jobs newest first with their progress."""
    offset = int_param(request, "offset")
    found = Job.objects.all()
    rows = [jobs.job_json(j) for j in found[offset : offset + PAGE_SIZE]]
    context = {"jobs": rows, "pager": pager_context(request, found.count(), offset, PAGE_SIZE), "workloads": jobs.BENCH_WORKLOADS}
    return page(request, "pages/jobs.html", context)


def job_page(request: HttpRequest, pk: int) -> HttpResponse:
    """One job: its progress bar while it runs, then its figures (a benchmark) or what it created (an import)."""
    job = jobs.job_json(get_object_or_404(Job, pk=pk))
    result = job["result"] or {}
    figures = [(label, result[key]) for key, label in BENCH_FIGURES if key in result] if job["kind"] == "bench" else []
    created = sorted((result.get("created") or {}).items()) if job["kind"] == "import" else []
    return page(
        request, "pages/job.html", {"job": job, "figures": figures, "created": created, "warnings": result.get("warnings") or []}
    )
