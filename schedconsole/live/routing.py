"""Websocket routes."""

from django.urls import path

from schedconsole.live.consumers import ScoresConsumer

websocket_urlpatterns = [path("ws/scores/", ScoresConsumer.as_asgi())]
