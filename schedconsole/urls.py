"""Routes: pages, the console API, Koordinator's routes, health and metrics."""

from django.contrib import admin
from django.contrib.auth.views import LogoutView
from django.urls import include, path, re_path

from schedconsole.accounts.views import RateLimitedLoginView
from schedconsole.api import koord
from schedconsole.pages import views as pages

urlpatterns = [
    path("", pages.live, name="live"),
    path("attempts/<int:pk>/", pages.attempt, name="attempt"),
    path("accounts/login/", RateLimitedLoginView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", include("schedconsole.api.urls")),
    path("k8s/", include("schedconsole.k8sapi.urls")),
    re_path(r"^apis/v1/(?P<path>.*)$", koord.koordinator_route),
    re_path(r"^debug/flags/(?P<path>[sf])$", koord.koordinator_route),
    path("metrics", koord.metrics),
    path("healthz", koord.healthz),
    path("readyz", koord.readyz),
]
