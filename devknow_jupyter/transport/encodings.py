"""Undoing a reply's ``Content-Encoding`` layers piece by piece, so no layer can inflate past a bound at once.

httpx's decoders hand each layer's whole output to the next in one call: a 7 KB ``gzip, gzip`` body
inflates to 8 MB after the first layer and to 8 GB inside one ``decompress`` call of the second, before
any size limit or deadline is looked at. Here every layer is a generator that feeds its decompressor at
most :data:`INPUT_PIECE` bytes at a time and takes at most :data:`OUTPUT_PIECE` bytes out per call, so
the bytes held after every layer stay small, and the reader above (which counts the bytes against
``max_reply_bytes`` and checks the call's deadline after every piece) stops a bomb within one piece.

Only what httpx offers without extras is accepted (``gzip``, ``x-gzip``, ``deflate``, ``identity``), at
most :data:`MAX_LAYERS` layers; anything else is one ``ProtocolError`` (the client never asks for it).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

from ..errors import ProtocolError

__all__ = ["ACCEPT_ENCODING", "INPUT_PIECE", "MAX_LAYERS", "OUTPUT_PIECE", "decoded"]

#: What the client asks for: only encodings this module undoes in bounded pieces.
ACCEPT_ENCODING = "gzip, deflate"
#: The most input bytes handed to a decompressor in one call (its unread tail is copied on every call).
INPUT_PIECE = 16 * 1024
#: The most output bytes one decompressor call may produce.
OUTPUT_PIECE = 256 * 1024
#: More encoding layers than this is no honest server's reply.
MAX_LAYERS = 3

_GZIP = zlib.MAX_WBITS | 16
_ZLIB = zlib.MAX_WBITS
_RAW_DEFLATE = -zlib.MAX_WBITS


def decoded(pieces: Iterable[bytes], content_encoding: str | None) -> Iterable[bytes]:
    """``pieces`` (a body as sent) with every layer of ``content_encoding`` undone, in bounded pieces.

    The header lists layers in the order they were applied, so they are undone last first. Raises
    :class:`~devknow_jupyter.errors.ProtocolError` for an unknown encoding, too many layers, or data
    that is not what its encoding says.
    """
    if not content_encoding:
        return pieces
    layers = [name.strip().lower() for name in content_encoding.split(",")]
    layers = [name for name in layers if name and name != "identity"]
    if len(layers) > MAX_LAYERS:
        raise ProtocolError(f"The server's reply has {len(layers)} content encodings (at most {MAX_LAYERS} are read).")
    stream: Iterable[bytes] = pieces
    for name in reversed(layers):
        if name in ("gzip", "x-gzip"):
            stream = _inflate(stream, _GZIP, name)
        elif name == "deflate":
            stream = _inflate(stream, None, name)
        else:
            shown = name if len(name) <= 40 and name.isprintable() else name[:40].encode("ascii", "replace").decode()
            raise ProtocolError(f"The server's reply is in an encoding this client did not ask for ({shown!r}).")
    return stream


def _inflate(pieces: Iterable[bytes], wbits: int | None, name: str) -> Iterator[bytes]:
    """One gzip or deflate layer (``wbits`` None: deflate, zlib-wrapped or raw, as its first bytes say)."""
    decompressor = None
    head = b""  # deflate's first bytes, until there are two to tell its framing by
    try:
        for chunk in pieces:
            if decompressor is None and wbits is None:
                head, chunk = b"", head + chunk
                if len(chunk) < 2:
                    head = chunk
                    continue
            for start in range(0, len(chunk), INPUT_PIECE):
                data = chunk[start : start + INPUT_PIECE]
                if decompressor is None:
                    decompressor = zlib.decompressobj(_deflate_wbits(data) if wbits is None else wbits)
                if decompressor.eof:
                    break  # bytes after the end of the stream are not part of the reply
                while True:
                    out = decompressor.decompress(data, OUTPUT_PIECE)
                    if out:
                        yield out
                    data = decompressor.unconsumed_tail
                    # A full piece may leave output pending inside zlib even with no input left.
                    if not data and len(out) < OUTPUT_PIECE:
                        break
    except zlib.error:
        raise ProtocolError(f"The server's reply is not valid {name} data.") from None


def _deflate_wbits(head: bytes) -> int:
    """Servers send ``deflate`` both zlib-wrapped (as RFC 9110 says) and raw; a zlib header tells them apart."""
    if head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0:
        return _ZLIB
    return _RAW_DEFLATE
