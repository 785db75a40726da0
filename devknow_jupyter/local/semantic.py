"""Optional semantic ranking: a static embedding model whose weights ship inside a PyPI wheel.

``pip install 'devknow-jupyter[semantic]'`` installs ``wordllama``, whose wheel holds a 256-dimension
token-embedding table (``l2_supercat_256.safetensors``, 16 MB) and its tokenizer. A text's vector is the
mean of its tokens' vectors, scaled to unit length: no model runs, nothing is downloaded. The two files
are read straight from the installed package with ``safetensors`` and ``tokenizers``: wordllama's own
loader is not imported (it configures logging on import, and in 0.4.0.post1 it looks for the files in
the wrong folder when offline, then tries the network).

Dense scores alone rank far below BM25 on developer documentation; fused with the lexical score
(:class:`~.search.PageSearch`) they help questions asked in other words than the page's.
Set ``DEVKNOW_SEMANTIC=0`` to switch the fusion off while the extra is installed.
"""

from __future__ import annotations

import os
import threading
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np

__all__ = ["MODEL_NAME", "StaticEmbedder", "default_embedder", "enabled", "model_files"]

#: The name stored with each page vector: vectors of another model are never mixed in.
MODEL_NAME = "wordllama-l2_supercat_256"
_WEIGHTS = "wordllama/weights/l2_supercat_256.safetensors"
_TOKENIZER = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"
#: A page's text is cut to this many characters before embedding (title and description come first).
PAGE_CHARS = 6000

_lock = threading.Lock()
_loaded: list[StaticEmbedder | None] = []


def model_files() -> tuple[Path, Path] | None:
    """The installed weights and tokenizer files, or None when the extra is not installed."""
    try:
        dist = distribution("wordllama")
    except PackageNotFoundError:
        return None
    weights, tokenizer = Path(str(dist.locate_file(_WEIGHTS))), Path(str(dist.locate_file(_TOKENIZER)))
    return (weights, tokenizer) if weights.is_file() and tokenizer.is_file() else None


def enabled() -> bool:
    """Whether semantic fusion is on: the extra is installed and ``$DEVKNOW_SEMANTIC`` is not ``0``."""
    return os.environ.get("DEVKNOW_SEMANTIC", "1").strip() not in ("0", "false", "no", "off") and bool(model_files())


class StaticEmbedder:
    """Mean-pooled static token embeddings, unit length. Thread-safe (read-only after loading)."""

    name = MODEL_NAME

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.table = load_file(str(weights))["embedding.weight"]  # (vocabulary, 256) float16, 16 MB
        self.dimensions = int(self.table.shape[1])
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    @staticmethod
    def page_text(title: str, description: str, content: str) -> str:
        """The text of a page that is embedded: title, description, then the start of the body."""
        return f"{title}\n{description}\n{content[:PAGE_CHARS]}"

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit vector per text (zeros for a text without tokens), shape ``(len(texts), dimensions)``."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        last = len(self.table) - 1
        for row, encoding in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, last)
            if len(ids):
                vector = self.table[ids].astype(np.float32).mean(axis=0)
                norm = float(np.linalg.norm(vector))
                out[row] = vector / norm if norm > 0 else vector
        return out


def default_embedder() -> StaticEmbedder | None:
    """The wheel's model, loaded once per process; None when the extra is not installed or unreadable."""
    with _lock:
        if not _loaded:
            files = model_files()
            model = None
            if files is not None:
                try:
                    model = StaticEmbedder(*files)
                except (ImportError, OSError, KeyError, ValueError, RuntimeError):
                    model = None  # a broken install: rank lexically
            _loaded.append(model)
        return _loaded[0]
