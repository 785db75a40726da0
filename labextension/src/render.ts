/**
 * Putting the server's rendered HTML on screen: JupyterLab's sanitizer on top of the server's, in-page
 * anchors that scroll inside the view (not the lab's URL), page links that open in the panel, and a
 * Copy / "Insert into notebook" bar on every code block.
 */
import { Clipboard } from '@jupyterlab/apputils';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

/** What the rendered content may do: open another page, insert code, and whether inserting works now. */
export interface IRenderActions {
  sanitizer: IRenderMime.ISanitizer;
  openDocument(nameOrUrl: string): void;
  insertCode(code: string): void;
  canInsert(): boolean;
}

/** Tooltip of the Insert button while no notebook is open. */
export const NO_NOTEBOOK = 'Open a notebook to insert this code into it';
const INSERT_TITLE = 'Insert as a new code cell below the active cell of the current notebook';

/** `html` sanitized into a new element (class `devknow`, the server stylesheet's root). */
export function sanitized(html: string, sanitizer: IRenderMime.ISanitizer, tag = 'div'): HTMLElement {
  const host = document.createElement(tag);
  host.innerHTML = sanitizer.sanitize(html);
  return host;
}

/** Make `root`'s in-page anchors scroll within `root`, and links marked `pageLinks` open in the panel. */
export function wireLinks(root: HTMLElement, actions: IRenderActions, pageLinks: string): void {
  root.addEventListener('click', event => {
    const link = (event.target as HTMLElement).closest('a');
    if (!link || !root.contains(link)) {
      return;
    }
    const href = link.getAttribute('href') ?? '';
    if (href.startsWith('#')) {
      event.preventDefault(); // JupyterLab's router owns the page URL; scroll inside our view instead
      findAnchor(root, decodeURIComponent(href.slice(1)))?.scrollIntoView({ block: 'start' });
      return;
    }
    if (pageLinks && link.closest(pageLinks) && /^https?:\/\//.test(href)) {
      event.preventDefault();
      actions.openDocument(href);
    }
  });
}

/**
 * The element `#id` points at inside `root`. JupyterLab's sanitizer moves `id` to `data-jupyter-id`
 * (so that page content cannot clobber globals), hence both are looked up.
 */
export function findAnchor(root: HTMLElement, id: string): Element | null {
  const quoted = CSS.escape(id);
  return root.querySelector(`[id="${quoted}"], [data-jupyter-id="${quoted}"]`);
}

/**
 * Fill a long page's placeholders (`section.devknow-pending`, in the order of `pending`: the sanitizer keeps
 * no data attributes) as they come within a few screens of view: `fetch(index)` gives a section's HTML,
 * sanitized here; `filled` is called with each new section. A placeholder whose fetch fails keeps its
 * source text. Returns what stops watching.
 */
export function fillSections(
  root: HTMLElement,
  pending: number[],
  sanitizer: IRenderMime.ISanitizer,
  fetch: (index: number) => Promise<string>,
  filled: (section: HTMLElement) => void
): () => void {
  const holders = Array.from(root.querySelectorAll<HTMLElement>('section.devknow-pending'));
  if (!holders.length || typeof IntersectionObserver === 'undefined') {
    return () => undefined;
  }
  const observer = new IntersectionObserver(
    entries => {
      for (const entry of entries) {
        const holder = entry.target as HTMLElement;
        const index = pending[holders.indexOf(holder)];
        if (!entry.isIntersecting || index === undefined) {
          continue;
        }
        observer.unobserve(holder);
        fetch(index).then(
          html => {
            const section = sanitized(html, sanitizer, 'section');
            section.className = 'devknow-section';
            holder.replaceWith(section);
            filled(section);
          },
          () => undefined // the placeholder's source stays, readable
        );
      }
    },
    { rootMargin: '2000px 0px' }
  );
  holders.forEach(holder => observer.observe(holder));
  return () => observer.disconnect();
}

/** Add Copy and "Insert into notebook" buttons above every `<pre>` block in `root`. */
export function addCodeActions(root: HTMLElement, actions: IRenderActions): HTMLButtonElement[] {
  const inserts: HTMLButtonElement[] = [];
  for (const pre of Array.from(root.querySelectorAll('pre'))) {
    const code = (pre.textContent ?? '').replace(/\n$/, '');
    const cell = cellSource(code, shellKind(pre));
    const bar = document.createElement('div');
    bar.className = 'jp-DevKnow-codebar';
    const copy = button('Copy', 'Copy this code to the clipboard', 'jp-DevKnow-copy');
    copy.addEventListener('click', () => {
      Clipboard.copyToSystem(code);
      copy.textContent = 'Copied';
      window.setTimeout(() => (copy.textContent = 'Copy'), 1500);
    });
    const insert = button('Insert into notebook', INSERT_TITLE, 'jp-DevKnow-insert');
    insert.addEventListener('click', () => {
      if (actions.canInsert()) {
        actions.insertCode(cell);
      }
    });
    inserts.push(insert);
    bar.append(copy, insert);
    pre.before(bar);
  }
  updateInsertButtons(inserts, actions.canInsert());
  return inserts;
}

/** Whether a code block holds shell commands (`devknow-shell`) or a `$`-prompted session (`devknow-console`). */
function shellKind(pre: Element): 'shell' | 'console' | null {
  const block = pre.closest('.devknow-shell, .devknow-console');
  if (!block) {
    return null;
  }
  return block.classList.contains('devknow-console') ? 'console' : 'shell';
}

/**
 * The notebook cell for a code block: Python as it is; shell commands made to run, one command as
 * `!command`, more as a `%%bash` cell. A console session keeps its `$ ` command lines (prompt dropped) and
 * leaves out the output shown between them.
 */
export function cellSource(code: string, kind: 'shell' | 'console' | null): string {
  if (!kind) {
    return code;
  }
  let lines = code.split('\n');
  if (kind === 'console') {
    const commands: string[] = [];
    let continued = false;
    for (const line of lines) {
      const prompted = /^\s*\$ /.exec(line);
      if (prompted || continued) {
        const command = prompted ? line.slice(prompted[0].length) : line;
        commands.push(command);
        continued = /\\$/.test(command); // a command going on on the next line
      }
    }
    lines = commands.length ? commands : lines;
  }
  lines = lines.filter(line => line.trim() !== '');
  if (lines.length === 1 && !/\\$/.test(lines[0])) {
    return `!${lines[0].trim()}`;
  }
  return ['%%bash', ...lines].join('\n');
}

/** Enable the Insert buttons when a notebook is there to receive the code; say why when not. */
export function updateInsertButtons(buttons: HTMLButtonElement[], enabled: boolean): void {
  for (const insert of buttons) {
    insert.disabled = !enabled;
    insert.title = enabled ? INSERT_TITLE : NO_NOTEBOOK;
  }
}

/** A small toolbar-style button. */
export function button(label: string, title: string, className: string): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.className = `jp-DevKnow-button ${className}`;
  element.textContent = label;
  element.title = title;
  return element;
}
