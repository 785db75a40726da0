"""Deterministic synthetic developer documentation: Markdown with headings, prose, code, tables and links.

Nothing here is copied from real documentation; the words are a small vocabulary of our own, mixed
by a seeded random generator so every run benchmarks the same text.
"""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["generate_docs", "generate_markdown", "query_words"]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_NOUNS = _words(
    "bucket key project service account quota region instance cluster function trigger table dataset "
    "topic subscription token role policy index query request response endpoint client library console "
    "deployment container image secret version label zone network firewall route certificate domain "
    "database collection document field rule emulator snapshot backup job pipeline model prompt"
)
_VERBS = _words(
    "create delete list update enable disable restrict rotate grant revoke deploy configure monitor "
    "export import copy move attach detach scale retry cache read write stream publish"
)
_ADJECTIVES = _words(
    "regional global private public managed default custom temporary durable encrypted signed "
    "scheduled optional required legacy preview stable"
)
_LANGS = ("python", "bash", "json", "javascript", "go", "yaml")


def query_words() -> list[str]:
    """Words that occur in the generated documents (for building queries that find something)."""
    return list(_NOUNS + _VERBS)


def _sentence(rng: random.Random) -> str:
    words = []
    for _ in range(rng.randint(8, 18)):
        pick = rng.random()
        if pick < 0.45:
            word = rng.choice(_NOUNS)
        elif pick < 0.7:
            word = rng.choice(_VERBS)
        elif pick < 0.85:
            word = rng.choice(_ADJECTIVES)
        else:
            word = rng.choice(("the", "a", "to", "of", "for", "with", "in", "when", "and", "your"))
        decoration = rng.random()
        if decoration < 0.04:
            word = f"`{word}`"
        elif decoration < 0.06:
            word = f"**{word}**"
        elif decoration < 0.08:
            word = f"[{word}](https://docs.example.dev/{rng.choice(_NOUNS)}/{rng.choice(_VERBS)})"
        words.append(word)
    words[0] = words[0].capitalize()
    return " ".join(words) + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))


def _code(rng: random.Random) -> str:
    lang = rng.choice(_LANGS)
    lines = []
    for i in range(rng.randint(4, 16)):
        noun, verb = rng.choice(_NOUNS), rng.choice(_VERBS)
        if lang == "python":
            lines.append(f"{noun}_{i} = client.{verb}_{noun}(name=\"{noun}-{i}\", retries={i % 4})")
        elif lang == "bash":
            lines.append(f"gcloud {noun}s {verb} {noun}-{i} --region=europe-west{i % 4} --quiet")
        elif lang == "json":
            lines.append(f'  "{noun}_{i}": {{"{verb}": {i}, "enabled": {str(i % 2 == 0).lower()}}},')
        elif lang == "javascript":
            lines.append(f"const {noun}{i} = await client.{verb}({{ name: '{noun}-{i}' }});")
        elif lang == "go":
            lines.append(f"{noun}{i}, err := client.{verb.capitalize()}(ctx, \"{noun}-{i}\")")
        else:
            lines.append(f"{noun}_{i}:\n  {verb}: {i}")
    return f"```{lang}\n" + "\n".join(lines) + "\n```"


def _table(rng: random.Random) -> str:
    columns = rng.randint(3, 5)
    header = [rng.choice(_NOUNS).capitalize() for _ in range(columns)]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * columns]
    for _ in range(rng.randint(3, 10)):
        cells = [f"`{rng.choice(_NOUNS)}`" if c == 0 else " ".join(rng.sample(_NOUNS, 3)) for c in range(columns)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _list(rng: random.Random) -> str:
    ordered = rng.random() < 0.5
    return "\n".join(
        (f"{i + 1}. " if ordered else "- ") + _sentence(rng) for i in range(rng.randint(3, 7))
    )


def generate_markdown(size: int, seed: int = 0, title: str | None = None) -> str:
    """A Markdown page of about ``size`` characters (at least), mixing the usual documentation blocks."""
    rng = random.Random(seed)
    title = title or f"{rng.choice(_VERBS).capitalize()} a {rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)}"
    blocks = [f"# {title}", _paragraph(rng)]
    length = sum(len(block) + 2 for block in blocks)
    while length < size:
        pick = rng.random()
        if pick < 0.12:
            block = f"## {rng.choice(_VERBS).capitalize()} the {rng.choice(_NOUNS)}"
        elif pick < 0.18:
            block = f"### {rng.choice(_ADJECTIVES).capitalize()} {rng.choice(_NOUNS)}s"
        elif pick < 0.55:
            block = _paragraph(rng)
        elif pick < 0.72:
            block = _code(rng)
        elif pick < 0.82:
            block = _table(rng)
        elif pick < 0.94:
            block = _list(rng)
        else:
            block = "> **Note:** " + _sentence(rng)
        blocks.append(block)
        length += len(block) + 2
    return "\n\n".join(blocks) + "\n"


def generate_docs(folder: Path, count: int, size: int = 6_000, seed: int = 0) -> list[str]:
    """Write ``count`` pages with front matter (the SDK test server's format) into ``folder``; their names."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(count):
        rng = random.Random(seed * 100_003 + i)
        slug = f"{rng.choice(_NOUNS)}s/{rng.choice(_VERBS)}-{i}"
        name = f"documents/bench.example.dev/{slug}"
        title = f"{rng.choice(_VERBS).capitalize()} {rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)}s ({i})"
        body = generate_markdown(size, seed=seed * 100_003 + i, title=title)
        front = (
            f"---\nname: {name}\nuri: https://bench.example.dev/{slug}\ntitle: \"{title}\"\n"
            f"description: \"Generated page {i} for benchmarks.\"\n---\n"
        )
        (folder / f"doc-{i:05d}.md").write_text(front + body, encoding="utf-8")
        names.append(name)
    return names
