"""The embedded offline backend: Markdown folders indexed into SQLite FTS5, searched with BM25.

- :mod:`.frontmatter`: YAML front matter of a Markdown file (name, uri, title, description).
- :mod:`.chunking`: a page cut along its headings into passages that carry their heading path.
- :mod:`.query`: user text turned into a safe FTS5 query.
- :mod:`.index`: :class:`~.index.LocalIndex`, the SQLite index (incremental, transactional reindex).
- :mod:`.ranking`: BM25 column weights, common-term pruning, pages ranked by their passages together.
- :mod:`.answer`: extractive answers from the best passages.
- :mod:`.backend`: :class:`~.backend.LocalBackend`, the three tools over an index (``DevKnowClient("local")``).
- :mod:`.store`: :class:`~.store.DocumentStore`, documents fetched from the live service, kept for offline use.
- :mod:`.paths`: where the user's cache lives.

Nothing here imports the network or the renderer.
"""

from __future__ import annotations
