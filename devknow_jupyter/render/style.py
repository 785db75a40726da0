"""The one stylesheet of devknow_jupyter's outputs, scoped to ``.devknow`` class names.

Colours come from JupyterLab's CSS variables (``--jp-…``), so results follow the light or dark theme.
Each variable has a fallback: first VS Code's own variable where one exists, then a value that reads on
both light and dark backgrounds (``inherit``, ``currentColor`` or a translucent grey), so outputs also
look right in VS Code, Colab, nbviewer and exported HTML. Pygments token classes (``.devknow-hl``) map
onto JupyterLab's editor colours the same way.

The stylesheet is added as one ``<style>`` block *after* sanitizing (service HTML never carries a
``<style>``); :func:`style_block` is that block, and tests compare against it exactly.
"""

from __future__ import annotations

__all__ = ["CSS", "HIGHLIGHT_CLASS", "ROOT_CLASS", "style_block"]

#: Class on the outermost element of every output.
ROOT_CLASS = "devknow"
#: Class of the element wrapping highlighted code (what codehilite's ``css_class`` is set to).
HIGHLIGHT_CLASS = "devknow-hl"

_FG = "var(--jp-content-font-color1, var(--vscode-foreground, inherit))"
_MUTED = "var(--jp-content-font-color2, var(--vscode-descriptionForeground, inherit))"
_BORDER = "var(--jp-border-color2, rgba(128, 128, 128, 0.35))"
_CODE_BG = "var(--jp-layout-color2, var(--vscode-textCodeBlock-background, rgba(128, 128, 128, 0.12)))"
_LINK = "var(--jp-content-link-color, var(--vscode-textLink-foreground, #2f6fde))"
_CODE_FONT = "var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace)"


def _token_rules() -> str:
    # Pygments short class → (JupyterLab editor variable, fallback that reads on light and dark).
    groups = [
        ("k kc kd kn kp kr", "--jp-mirror-editor-keyword-color", "#a05bd6"),
        ("kt nc nn", "--jp-mirror-editor-def-color", "#2f8fc4"),
        ("s sa sb sc sd s1 s2 se sh si sx dl", "--jp-mirror-editor-string-color", "#3a9a4a"),
        ("sr ss", "--jp-mirror-editor-string-2-color", "#c2741b"),
        ("c c1 cm ch cs cp cpf", "--jp-mirror-editor-comment-color", "#7f8c8d"),
        ("m mb mf mh mi mo il", "--jp-mirror-editor-number-color", "#2a9d8f"),
        ("o ow", "--jp-mirror-editor-operator-color", "#a05bd6"),
        ("nb bp", "--jp-mirror-editor-builtin-color", "#2f8fc4"),
        ("nf fm", "--jp-mirror-editor-def-color", "#2f8fc4"),
        ("na", "--jp-mirror-editor-attribute-color", "#c2741b"),
        ("nt", "--jp-mirror-editor-tag-color", "#3a9a4a"),
        ("nv vc vg vi vm", "--jp-mirror-editor-variable-2-color", "#c2741b"),
        ("nd", "--jp-mirror-editor-meta-color", "#a05bd6"),
        ("gh gu", "--jp-mirror-editor-header-color", "#2f8fc4"),
        ("gi", "--jp-mirror-editor-string-color", "#3a9a4a"),
        ("gd err", "--jp-mirror-editor-error-color", "#d0393e"),
    ]
    rules = []
    for classes, variable, fallback in groups:
        selector = ", ".join(f".{HIGHLIGHT_CLASS} .{name}" for name in classes.split())
        rules.append(f"{selector} {{ color: var({variable}, {fallback}); }}")
    rules.append(f".{HIGHLIGHT_CLASS} .c, .{HIGHLIGHT_CLASS} .c1, .{HIGHLIGHT_CLASS} .cm {{ font-style: italic; }}")
    rules.append(f".{HIGHLIGHT_CLASS} .gs {{ font-weight: bold; }} .{HIGHLIGHT_CLASS} .ge {{ font-style: italic; }}")
    return "\n".join(rules)


CSS = f"""
.devknow {{ color: {_FG}; font-family: var(--jp-content-font-family, system-ui, -apple-system, "Segoe UI",
  Roboto, sans-serif); font-size: var(--jp-content-font-size1, 14px); line-height: 1.5; white-space: normal;
  overflow-wrap: break-word; max-width: 100%; }}
.devknow a {{ color: {_LINK}; text-decoration: none; }}
.devknow a:hover {{ text-decoration: underline; }}
.devknow-header {{ color: {_MUTED}; font-size: 0.9em; margin: 0 0 0.4em 0; }}
.devknow-header b {{ color: {_FG}; }}
.devknow-notice {{ font-size: 0.9em; margin: 0.2em 0; padding: 0.2em 0.6em; border-left: 3px solid
  var(--jp-warn-color1, #e0a030); }}
.devknow-hit {{ padding: 0.5em 0; border-bottom: 1px solid {_BORDER}; }}
.devknow-hit-title {{ font-size: 1.08em; font-weight: 600; }}
.devknow-tell {{ color: {_MUTED}; font-family: {_CODE_FONT}; font-size: 0.8em; font-weight: normal; }}
.devknow-meta {{ color: {_MUTED}; font-family: {_CODE_FONT}; font-size: 0.8em; }}
.devknow-chunk {{ margin-top: 0.3em; }}
.devknow-clamped {{ max-height: 12em; overflow: hidden;
  -webkit-mask-image: linear-gradient(to bottom, #000 calc(100% - 3em), rgba(0, 0, 0, 0.15));
  mask-image: linear-gradient(to bottom, #000 calc(100% - 3em), rgba(0, 0, 0, 0.15)); }}
.devknow-clamped .devknow-more {{ display: none; }}
.devknow-nobr {{ white-space: nowrap; }}
.devknow-doc-title {{ font-size: 1.3em; font-weight: 600; margin: 0.2em 0; }}
.devknow-description {{ color: {_MUTED}; margin: 0.1em 0 0.4em 0; }}
.devknow-body h1 {{ font-size: 1.5em; }} .devknow-body h2 {{ font-size: 1.3em; }}
.devknow-body h3 {{ font-size: 1.15em; }} .devknow-body h4, .devknow-body h5, .devknow-body h6 {{ font-size: 1em; }}
.devknow-body h1, .devknow-body h2, .devknow-body h3, .devknow-body h4, .devknow-body h5, .devknow-body h6 {{
  font-weight: 600; line-height: 1.3; margin: 1em 0 0.4em 0; }}
.devknow-chunk.devknow-body h1, .devknow-chunk.devknow-body h2, .devknow-chunk.devknow-body h3,
.devknow-chunk.devknow-body h4, .devknow-chunk.devknow-body h5, .devknow-chunk.devknow-body h6 {{ font-size: 1em;
  margin: 0.6em 0 0.2em 0; }}
.devknow-body p, .devknow-body ul, .devknow-body ol, .devknow-body table, .devknow-body blockquote,
.devknow-body pre {{ margin: 0 0 0.7em 0; }}
.devknow-body ul, .devknow-body ol {{ padding-left: 1.6em; }}
.devknow-body code {{ font-family: {_CODE_FONT}; font-size: 0.9em; background: {_CODE_BG}; padding: 0.05em 0.3em;
  border-radius: 3px; }}
.devknow-body pre {{ background: {_CODE_BG}; padding: 0.6em 0.8em; border-radius: 4px; overflow-x: auto;
  line-height: 1.4; white-space: pre; }}
.devknow-body pre code {{ background: none; padding: 0; font-size: 0.88em; }}
.devknow-body table {{ border-collapse: collapse; display: block; overflow-x: auto; }}
.devknow-body th, .devknow-body td {{ border: 1px solid {_BORDER}; padding: 0.25em 0.6em; text-align: left; }}
.devknow-body th[align="right"], .devknow-body td[align="right"] {{ text-align: right; }}
.devknow-body th[align="center"], .devknow-body td[align="center"] {{ text-align: center; }}
.devknow-body th {{ background: {_CODE_BG}; font-weight: 600; }}
.devknow-body blockquote {{ border-left: 3px solid {_BORDER}; padding-left: 0.8em; color: {_MUTED}; }}
.devknow-body img {{ max-width: 100%; height: auto; }}
.devknow-body hr {{ border: none; border-top: 1px solid {_BORDER}; }}
.devknow-toc {{ border: 1px solid {_BORDER}; border-radius: 4px; padding: 0.3em 0.8em; margin: 0.4em 0 0.8em 0;
  font-size: 0.92em; }}
.devknow-toc summary {{ cursor: pointer; color: {_MUTED}; }}
.devknow-toc ul {{ list-style: none; padding-left: 1em; margin: 0.2em 0; }}
.devknow-note {{ color: {_MUTED}; font-size: 0.9em; font-style: italic; border-top: 1px dashed {_BORDER};
  padding-top: 0.3em; margin-top: 0.5em; }}
.devknow-label {{ display: inline-block; font-size: 0.78em; padding: 0 0.5em; border: 1px solid {_BORDER};
  border-radius: 8px; color: {_MUTED}; margin-left: 0.4em; vertical-align: middle; }}
.devknow-refs {{ margin: 0.6em 0 0.2em 0; font-weight: 600; }}
.devknow-ref {{ margin: 0.1em 0; }}
.devknow-msg {{ padding: 0.3em 0.7em; border-left: 4px solid var(--jp-info-color1, #2f8fc4);
  white-space: pre-wrap; }}
.devknow-msg-warning {{ border-left-color: var(--jp-warn-color1, #e0a030); }}
.devknow-msg-error {{ border-left-color: var(--jp-error-color1, #d0393e); }}
.devknow-placeholder {{ color: {_MUTED}; font-style: italic; }}
.devknow-spinner {{ display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.5em; vertical-align: -0.1em;
  border: 2px solid currentColor; border-right-color: transparent; border-radius: 50%;
  animation: devknow-spin 0.8s linear infinite; }}
@keyframes devknow-spin {{ to {{ transform: rotate(360deg); }} }}
.devknow-error {{ color: var(--jp-error-color1, #d0393e); font-size: 0.92em; padding: 0.2em 0; }}
.{HIGHLIGHT_CLASS} {{ margin: 0 0 0.7em 0; }}
{_token_rules()}
""".strip()


def style_block() -> str:
    """The ``<style>`` element carrying :data:`CSS` (added once per output, after sanitizing)."""
    return f"<style>\n{CSS}\n</style>"
