"""The dashboard's FastAPI application: the routers of each concern, the domain errors'
answers, and the OpenAPI document (``docs/openapi.json`` is it, written by
``python -m hub.web``)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from contract.commands import COMMANDS, HubClockCommand, fields_schema
from hub.web import (
    balance,
    broadcast,
    chips,
    clock,
    errors,
    floor,
    pages,
    payouts,
    players,
    roster,
    session,
    stats,
    tables,
)
from hub.web.deps import COOKIE, WebContext
from hub.web.errors import StrictJSONResponse
from hub.web.streams import StreamRegistry

# The bodies the contract parses (a floor command's fields): their schema is the contract's
# (contract/asyncapi.json), less the transaction the hub adds.
CONTRACT_BODIES = {
    "/api/clock": fields_schema(HubClockCommand),
    "/api/tables/{table}/cmd/{name}": {
        "anyOf": [{"title": name, **fields_schema(kind)} for name, kind in COMMANDS.items()],
        "description": "the fields of the command named in the path (without a transaction: "
                       "the hub adds one)"},
}


def create_app(context: WebContext | None) -> FastAPI:
    """The application over the hub's parts (None: for its OpenAPI document only)."""
    app = FastAPI(title="Floor dashboard API", version="1.0.0",
                  description="The venue hub's JSON API for the floor dashboard and scripts. "
                              "Log in with POST /login (form fields user, password): the "
                              "session cookie pkr_session is sent with every call.",
                  openapi_url="/api/openapi.json", docs_url=None, redoc_url=None,
                  default_response_class=StrictJSONResponse)
    app.state.context = context
    app.state.streams = StreamRegistry()
    app.state.feed_streams = {}  # the broadcast feed's open streams, by account
    errors.install(app)
    for router in (pages.router, session.router, floor.router, clock.router, stats.router,
                   roster.router, payouts.router, balance.router, tables.router,
                   players.router, broadcast.router, chips.router):
        app.include_router(router)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of the API as served: FastAPI's own, with the cookie that
    authenticates every call, the contract's schemas for the bodies it parses, and without the
    422 answers FastAPI adds by default (a wrong request is a 400 here, with a reason)."""
    from fastapi.openapi.utils import get_openapi

    spec = get_openapi(title=app.title, version=app.version, description=app.description,
                       routes=app.routes)
    spec["components"].setdefault("securitySchemes", {})["session"] = {
        "type": "apiKey", "in": "cookie", "name": COOKIE,
        "description": "the session cookie POST /login sets"}
    spec["security"] = [{"session": []}]
    for where, path in spec["paths"].items():
        for operation in path.values():
            operation.get("responses", {}).pop("422", None)
            if where in CONTRACT_BODIES:
                operation["requestBody"]["content"]["application/json"]["schema"] = \
                    CONTRACT_BODIES[where]
    for unused in ("HTTPValidationError", "ValidationError"):
        spec["components"]["schemas"].pop(unused, None)
    return spec
