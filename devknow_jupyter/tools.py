"""The three Developer Knowledge tools: names, input and output schemas, annotations.

The schemas of the service's tools, which :mod:`.registry` holds with the rest of each tool (model, view,
retry rule); every server we run offers exactly the shapes Google's server does. Descriptions are our own words.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_NAMES_PER_CALL", "MAX_PAGE_SIZE", "PAGING", "SOURCE_FILTER", "TOOLS", "TOOL_NAMES"]

#: The service accepts at most this many names in one ``get_documents`` call.
MAX_NAMES_PER_CALL = 20
#: The most hits one page of the local index's search holds (as on the service's REST surface).
MAX_PAGE_SIZE = 100

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}

TOOLS: dict[str, dict[str, Any]] = {
    "search_documents": {
        "title": "Search developer documentation",
        "description": (
            "Finds passages of developer documentation relevant to a query. Each result is a chunk of a "
            "page; its `parent` is the page's document name, which get_documents accepts."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to look for, in plain words."}},
            "required": ["query"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "results": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "parent": {"type": "string", "description": "documents/<page URL without scheme>"},
                            "id": {"type": "string"},
                            "content": {"type": "string", "description": "The passage, in Markdown."},
                        },
                        "required": ["parent", "id", "content"],
                    },
                }
            },
            "required": ["results"],
        },
        "annotations": {"title": "Search developer documentation", **_READ_ONLY},
    },
    "get_documents": {
        "title": "Get developer documents",
        "description": (
            f"Returns whole pages as Markdown, for up to {MAX_NAMES_PER_CALL} document names, in request order."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "names": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": MAX_NAMES_PER_CALL,
                    "description": "Document names such as documents/developers.google.com/knowledge.",
                }
            },
            "required": ["names"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "documents": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "uri": {"type": "string"},
                            "content": {"type": "string"},
                            "description": {"type": "string"},
                            "title": {"type": "string"},
                        },
                        "required": ["name", "content"],
                    },
                }
            },
            "required": ["documents"],
        },
        "annotations": {"title": "Get developer documents", **_READ_ONLY},
    },
    "answer_query": {
        "title": "Answer a developer question",
        "description": (
            "Answers a question from the documentation, with the names of the documents it used. Its quota "
            "is small; when it is exhausted (HTTP 429), use search_documents instead."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "The question."}},
            "required": ["query"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "answerText": {"type": "string"},
                "references": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["answerText"],
        },
        "annotations": {"title": "Answer a developer question", **_READ_ONLY},
    },
}

TOOL_NAMES = tuple(TOOLS)

#: The local index's additions to ``search_documents``: an optional site filter applied inside the ranking
#: (clients send it when the schema has it) and one-line ``notices`` (a weak match) beside the results.
SOURCE_FILTER = {
    "type": "string",
    "description": "Only pages of this site, e.g. adk.dev or firebase.google.com/docs/auth (best hits of that site).",
}
#: The local index's paging and date filter (the REST surface's ``page_size``/``page_token``; ``since`` there is
#: an ``update_time`` filter): clients send them when the schema has them.
PAGING = {
    "page_size": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_PAGE_SIZE,
        "description": "Hits per page (default 10).",
    },
    "page_token": {"type": "string", "description": "nextPageToken of the previous page, for the next one."},
    "since": {
        "type": "string",
        "description": "Only pages updated since this RFC 3339 time or date (where the index knows a date).",
    },
}
