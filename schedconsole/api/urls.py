"""The console API under /api/ (docs/console.md, "Routes")."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from schedconsole.api import attempts, audit, cluster, debug_flags, jobs, nodes, pods, profiles, queue, replays, whatif

urlpatterns = [
    path("nodes/", nodes.NodeList.as_view(), name="api-nodes"),
    path("nodes/<str:name>/", nodes.NodeDetail.as_view(), name="api-node"),
    path("pods/", pods.PodList.as_view(), name="api-pods"),
    path("pods/<str:namespace>/<str:name>/", pods.PodDetail.as_view(), name="api-pod"),
    path("pods/<str:namespace>/<str:name>/attempts/", attempts.PodAttempts.as_view(), name="api-pod-attempts"),
    path("attempts/<int:pk>/", attempts.AttemptDetail.as_view(), name="api-attempt"),
    path("import/", pods.Import.as_view(), name="api-import"),
    path("queue/", queue.Queue.as_view(), name="api-queue"),
    path("jobs/", jobs.JobList.as_view(), name="api-jobs"),
    path("jobs/<int:pk>/", jobs.JobDetail.as_view(), name="api-job"),
    path("jobs/<int:pk>/cancel/", jobs.JobCancel.as_view(), name="api-job-cancel"),
    path("bench/", jobs.Bench.as_view(), name="api-bench"),
    path("replays/", replays.ReplayList.as_view(), name="api-replays"),
    path("replays/<int:pk>/", replays.ReplayDetail.as_view(), name="api-replay"),
    path("profiles/", profiles.ProfileList.as_view(), name="api-profiles"),
    path("profiles/validate/", profiles.ProfileValidate.as_view(), name="api-profiles-validate"),
    path("profiles/<int:version>/", profiles.ProfileDetail.as_view(), name="api-profile"),
    path("profiles/<int:version>/activate/", profiles.ProfileActivate.as_view(), name="api-profile-activate"),
    path("plugin-args/", profiles.PluginArgs.as_view(), name="api-plugin-args"),
    path("plugin-args/<str:plugin>/", profiles.PluginArgsDetail.as_view(), name="api-plugin-args-detail"),
    path("whatif/", whatif.WhatIf.as_view(), name="api-whatif"),
    path("compare/", whatif.Compare.as_view(), name="api-compare"),
    path("whatif/diff/", whatif.WhatIfDiff.as_view(), name="api-whatif-diff"),
    path("compare/summary/", whatif.CompareSummary.as_view(), name="api-compare-summary"),
    path("debug-flags/", debug_flags.DebugFlags.as_view(), name="api-debug-flags"),
    path("plugin-timing/", debug_flags.PluginTiming.as_view(), name="api-plugin-timing"),
    path("audit/", audit.AuditList.as_view(), name="api-audit"),
    path("cluster/", cluster.ClusterStatus.as_view(), name="api-cluster"),
    path("export/", cluster.Export.as_view(), name="api-export"),
    path("cluster/reset/", cluster.Reset.as_view(), name="api-cluster-reset"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
