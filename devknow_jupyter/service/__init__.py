"""The team service: ``devknow serve`` for a whole team.

One server holds the key and the documentation: it forwards the three tools to a live MCP endpoint
(:mod:`.upstream`), answers from its packs when that endpoint can't be reached, knows its users by token
(:mod:`.users`), counts each user's calls against quotas that hold across worker processes and replicas
(:mod:`.quotas`), and reports what it does (:mod:`.metrics`, :mod:`.access_log`). :mod:`.gate` puts the
users, quotas, metrics and log in front of the MCP app as one ASGI middleware.

Needs the ``server`` extra; imported only by ``devknow serve``.
"""
