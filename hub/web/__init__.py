"""The floor dashboard's web side: pages, a JSON API and a Server-Sent Events stream, as a
FastAPI application served by uvicorn in a thread of the hub's process.

Why these: FastAPI types and validates each request body and parameter (a wrong one is a 400
with the reason, never a dropped connection) and writes the OpenAPI document from the same
code (``docs/openapi.json``, served at ``/api/openapi.json``); uvicorn is the ASGI server both
recommend, maintained, and small enough for a Pi.

    app        the application: the routers below, the errors' answers, the OpenAPI document
    deps       what routes depend on: the hub's parts, the session's staff member, the floor
    errors     every refusal as JSON, each domain error mapped to its status once
    pages      the login page, the dashboard, the room clock's TV page, their files
    session    logging in and out, who the session is
    floor      the floor's state and stream, alerts, the floor log, hand histories, dealers
    clock      the venue clock, hand-for-hand's release, the room clock for a TV
    stats      statistics and the hands as CSV (read-only reports)
    roster     the tournament's roster at the desk
    balance    balancing and breaking tables
    tables     a table's floor commands, a bust-out's undo
    players    the players' screen (its own link), the floor's announcements, seat cards
    streams    the event streams, bounded per viewer, session, account and in all
    guard      around the app: security headers, the body cap, strict JSON, other sites' POSTs
    server     uvicorn on its thread: a deadline for a whole request, connections capped

Every page and call but the login, the TV's and the players' screen's needs a staff session;
each call checks the role's permission (hub/auth.py). What touches the floor's state goes
through the floor's worker (hub/service.py, ``on_floor``); the reports read the storage
directly (hub/reports.py).
"""
