"""Optional semantic ranking: a static embedding model whose weights ship inside a PyPI wheel.

``pip install 'devknow-jupyter[semantic]'`` installs ``wordllama``, whose wheel holds a 256-dimension
token-embedding table (``l2_supercat_256.safetensors``, 16 MB) and its tokenizer. A text's vector is the
weighted sum of its tokens' vectors, scaled to unit length: no model runs, nothing is downloaded. The two files
are read straight from the installed package with ``safetensors`` and ``tokenizers``: wordllama's own
loader is not imported (it configures logging on import, and in 0.4.0.post1 it looks for the files in
the wrong folder when offline, then tries the network).

The weights are SIF's (smooth inverse frequency, Arora et al. 2017): a token seen with probability ``p`` in
the index's own pages weighs ``a / (a + p)``, so the glue of a question ("how do I", "is there a way to") and
of every page ("the", "you", "function") barely moves a vector while the words that name things carry it.
The token counts come from the pages being embedded (:func:`sif_weights`; the index stores them beside the
vectors, see :class:`~.vectors.PageVectors`), so the weights fit whatever documentation is indexed.
Chosen by leave-one-set-out cross-validation over the bench's 688 questions (``bench/README.md``):
SIF weights lifted the fused MRR@5 from 0.782 to 0.796 held out (how-to 0.479 -> 0.509, paraphrase 0.711 ->
0.737); idf weights, dropping the question's stopword tokens, other lengths of text embedded, removing the
vectors' common component, a separate headings vector and other normalisations of the fused scores were all
within 0.005 of it, or below (``bench/README.md``).

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

__all__ = [
    "LEGACY_MODEL_NAME",
    "MODEL_NAME",
    "SIF_A",
    "StaticEmbedder",
    "WeightedEmbedder",
    "default_embedder",
    "enabled",
    "model_files",
    "sif_weights",
]

#: The name stored with each page vector: vectors of another model (or pooling) are never mixed in.
MODEL_NAME = "wordllama-l2_supercat_256-sif"
#: Mean-pooled vectors of indexes made before the SIF weights; used only where new ones can't be stored.
LEGACY_MODEL_NAME = "wordllama-l2_supercat_256"
#: SIF's smoothing: a token weighs ``SIF_A / (SIF_A + p)``. 1e-3 (Arora et al.'s default) won across folds
#: over 1e-4, 3e-4 and 3e-3.
SIF_A = 1e-3
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


def sif_weights(counts: np.ndarray, a: float = SIF_A) -> np.ndarray:
    """Each token's SIF weight ``a / (a + p)`` from its counts over the indexed pages (all ones with no counts)."""
    total = float(counts.sum())
    if total <= 0:
        return np.ones(len(counts), dtype=np.float32)
    return (a / (a + counts / total)).astype(np.float32)


class StaticEmbedder:
    """Weighted sums of static token embeddings, unit length. Thread-safe (read-only after loading)."""

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

    def _token_ids(self, texts: list[str]) -> list[np.ndarray]:
        last = len(self.table) - 1
        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False) if texts else []
        return [np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, last) for encoding in encodings]

    def token_counts(self, texts: list[str]) -> np.ndarray:
        """How often each token of the vocabulary occurs in ``texts``, shape ``(vocabulary,)``: the statistics
        :func:`sif_weights` turns into weights (sum the counts of several batches)."""
        counts = np.zeros(len(self.table), dtype=np.float64)
        for ids in self._token_ids(texts):
            counts += np.bincount(ids, minlength=len(self.table))
        return counts

    def embed(self, texts: list[str], weights: np.ndarray | None = None) -> np.ndarray:
        """One unit vector per text (zeros for a text without tokens), shape ``(len(texts), dimensions)``.

        ``weights`` (one per token of the vocabulary, :func:`sif_weights`) weigh each token's vector; without
        them every token counts alike (the mean).
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, ids in enumerate(self._token_ids(texts)):
            if len(ids):
                rows = self.table[ids].astype(np.float32)
                vector = rows.mean(axis=0) if weights is None else weights[ids] @ rows
                norm = float(np.linalg.norm(vector))
                out[row] = vector / norm if norm > 0 else vector
        return out


class WeightedEmbedder:
    """A :class:`StaticEmbedder` with one index's token weights bound: what embeds that index's queries.

    ``weights`` None: the plain mean (the vectors of :data:`LEGACY_MODEL_NAME`).
    """

    def __init__(self, model: StaticEmbedder, weights: np.ndarray | None, name: str = MODEL_NAME) -> None:
        self.model = model
        self.weights = weights
        self.name = name
        self.dimensions = model.dimensions

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit vector per text, weighted as the index's page vectors are."""
        return self.model.embed(texts, self.weights)


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
