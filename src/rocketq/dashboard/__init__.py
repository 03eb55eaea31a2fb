"""rocketq's web dashboard (rocketmq-dashboard's pages): ``create_app(namesrv_addr)`` is an ASGI
app; ``rocketq dashboard`` serves it with uvicorn."""

from rocketq.dashboard.app import create_app

__all__ = ["create_app"]
