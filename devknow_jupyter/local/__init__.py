"""The embedded offline backend: Markdown folders indexed into SQLite, pages ranked by field-weighted BM25.

- :mod:`.frontmatter`: YAML front matter of a Markdown file (name, uri, title, description).
- :mod:`.chunking`: a page cut along its headings into passages that carry their heading path.
- :mod:`.tokens`: identifier-aware tokens (``prefer_const_constructors`` whole and split).
- :mod:`.query`: user text (and pasted error messages) turned into ranking tokens and a safe FTS5 query.
- :mod:`.ranker`: the ranker: whole pages scored by field-weighted BM25 in numpy.
- :mod:`.semantic`: optional dense scores from a static embedding model (the ``semantic`` extra).
- :mod:`.search`: :class:`~.search.PageSearch`, ranker + filters (site, origin) + the weak-match notice.
- :mod:`.index`: :class:`~.index.LocalIndex`, the facade (search, get, answer) over the parts below.
- :mod:`.schema`, :mod:`.pages`: the SQLite file's layout; :class:`~.pages.PageStore`, its transactions and writes.
- :mod:`.snapshot`, :mod:`.vectors`: the ranker built from the stored term counts, kept while nothing changed.
- :mod:`.indexing`, :mod:`.documents`, :mod:`.report`: :class:`~.indexing.Indexer`, incremental batched runs.
- :mod:`.answer`: extractive answers from the best passages.
- :mod:`.backend`: :class:`~.backend.LocalBackend`, the three tools over an index (``DevKnowClient("local")``).
- :mod:`.store`: :class:`~.store.DocumentStore`, documents fetched from the live service, kept for offline use.
- :mod:`.paths`: where the user's cache lives.

Nothing here imports the network or the renderer.
"""

from __future__ import annotations
