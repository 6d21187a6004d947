"""Routes: pages, the console API, Koordinator's routes, health and metrics."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.views import LogoutView
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from schedconsole.accounts.views import RateLimitedLoginView
from schedconsole.api import koord
from schedconsole.pages import cluster_views, config_views, job_views, koord_views, replay_views
from schedconsole.pages import views as pages

urlpatterns = [
    path("", pages.live, name="live"),
    path("attempts/<int:pk>/", pages.attempt, name="attempt"),
    path("overview/", pages.overview, name="overview"),
    path("pods/", pages.pods, name="pods"),
    path("pods/<str:namespace>/<str:name>/", pages.pod, name="pod"),
    path("nodes/", pages.nodes, name="nodes"),
    path("nodes/<str:name>/", pages.node, name="node"),
    path("gangs/", koord_views.gangs, name="gangs"),
    path("preemption/", koord_views.preemption, name="preemption"),
    path("plugin-api/", koord_views.plugin_api, name="plugin-api"),
    path("profiles/", config_views.profiles, name="profiles"),
    path("profiles/diff/", config_views.profile_diff, name="profile-diff"),
    path("profiles/apply/", config_views.profile_apply, name="profile-apply"),
    path("profiles/<int:version>/activate/", config_views.profile_activate, name="profile-activate"),
    path("thresholds/", config_views.thresholds, name="thresholds"),
    path("audit/", config_views.audit, name="audit"),
    path("jobs/", job_views.jobs_page, name="jobs"),
    path("jobs/<int:pk>/", job_views.job_page, name="job"),
    path("replay/", replay_views.replays_page, name="replays"),
    path("replay/<int:pk>/", replay_views.replay_page, name="replay"),
    path("cluster/", cluster_views.cluster, name="cluster"),
    path("cluster/sync/", cluster_views.sync, name="cluster-sync"),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", include("schedconsole.api.urls")),
    path("k8s/", include("schedconsole.k8sapi.urls")),
    re_path(r"^apis/v1/(?P<path>.*)$", koord.koordinator_route),
    re_path(r"^debug/flags/(?P<path>[sfv])$", koord.koordinator_route),
    path("metrics", koord.metrics),
    path("healthz", koord.healthz),
    # Pages link the icon themselves; this answers browsers asking on pages that do not (the admin's).
    # The plain name, not the manifest's (looked up at import, a missing entry would break every route).
    path("favicon.ico", RedirectView.as_view(url=f"{settings.STATIC_URL}favicon.svg", permanent=True)),
    path("readyz", koord.readyz),
]

handler404 = "schedconsole.errors.not_found"
handler500 = "schedconsole.errors.server_error"
