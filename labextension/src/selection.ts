/** The text a "… developer docs for selection" command works on: the selection, else the word at the cursor. */
import { CodeEditor } from '@jupyterlab/codeeditor';

const WORD = /[\w.$-]/;

/** The selected text of `editor`; with `word`, the word under its cursor when nothing is selected. */
export function editorText(editor: CodeEditor.IEditor, word = true): string {
  const source = editor.model.sharedModel.getSource();
  const selection = editor.getSelection();
  const start = editor.getOffsetAt(selection.start);
  const end = editor.getOffsetAt(selection.end);
  if (start !== end) {
    return source.slice(Math.min(start, end), Math.max(start, end)).trim();
  }
  if (!word) {
    return '';
  }
  const at = editor.getOffsetAt(editor.getCursorPosition());
  let from = at;
  let to = at;
  while (from > 0 && WORD.test(source[from - 1])) {
    from--;
  }
  while (to < source.length && WORD.test(source[to])) {
    to++;
  }
  return source.slice(from, to).replace(/^[.-]+|[.-]+$/g, '');
}

/** Text selected anywhere else on the page (a rendered output, the docs panel itself). */
export function pageSelection(): string {
  return (window.getSelection()?.toString() ?? '').trim();
}
