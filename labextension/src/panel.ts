/**
 * The "Developer docs" sidebar: search with a site filter, hits with ↑/↓/Enter, pages with their contents
 * list, an Ask box (hits instead once the answer quota is used up), back/forward history, a spinner and
 * one-line errors. It needs no kernel: every request goes to the Jupyter server's devknow API.
 */
import { Widget } from '@lumino/widgets';

import * as api from './api';
import {
  addCodeActions,
  button,
  fillSections,
  findAnchor,
  IRenderActions,
  sanitized,
  updateInsertButtons,
  wireLinks
} from './render';

/** One place in the history: a hit list, a page or an answer, with the reply it showed. */
type View =
  | { kind: 'hits'; reply: api.ISearchReply; selected: number }
  | { kind: 'page'; doc: api.IDocument }
  | { kind: 'answer'; reply: api.IAnswerReply };

/** Panel options: the render actions (sanitizer, insert) and how to open a page in a tab. */
export interface IDocsPanelOptions extends IRenderActions {
  openInTab(doc: api.IDocument): void;
}

let panelCount = 0;

/** The sidebar widget. */
export class DocsPanel extends Widget {
  /** Hits per search (setting `hits`). */
  hits = 10;

  constructor(private readonly options: IDocsPanelOptions) {
    super();
    this.id = `jp-devknow-docs-${panelCount++}`;
    this.addClass('jp-DevKnow');
    this.title.caption = 'Developer docs';

    const nav = element('div', 'jp-DevKnow-nav');
    this._back = button('‹ Back', 'Back', 'jp-DevKnow-back');
    this._forward = button('Forward ›', 'Forward', 'jp-DevKnow-forward');
    this._tab = button('Open in tab', 'Open this page in the main area', 'jp-DevKnow-tab');
    this._back.addEventListener('click', () => this.back());
    this._forward.addEventListener('click', () => this.forward());
    this._tab.addEventListener('click', () => this.openCurrentInTab());
    nav.append(this._back, this._forward, this._tab);

    const searchForm = element('form', 'jp-DevKnow-searchForm') as HTMLFormElement;
    this._query = input('search', 'jp-DevKnow-query', 'Search developer docs');
    this._source = input('text', 'jp-DevKnow-source', 'All sites');
    this._source.title = 'Only pages from this site (empty: all sites)';
    const sites = element('datalist', '') as HTMLDataListElement;
    sites.id = `${this.id}-sites`; // filled from the server's status: the sites of the index that answers
    this._sites = sites;
    this._source.setAttribute('list', sites.id);
    const searchButton = button('Search', 'Search the documentation', 'jp-DevKnow-searchButton');
    searchButton.type = 'submit';
    searchForm.append(this._query, this._source, sites, searchButton);
    searchForm.addEventListener('submit', event => {
      event.preventDefault();
      void this.search(this._query.value);
    });
    this._query.addEventListener('keydown', event => {
      if (event.key === 'ArrowDown' && this._list) {
        event.preventDefault();
        this._list.focus();
        this.select(Math.max(0, this.selectedIndex));
      }
    });

    const askForm = element('form', 'jp-DevKnow-askForm') as HTMLFormElement;
    this._question = input('text', 'jp-DevKnow-question', 'Ask a question');
    const askButton = button('Ask', 'Get an answer grounded in the documentation', 'jp-DevKnow-askButton');
    askButton.type = 'submit';
    askForm.append(this._question, askButton);
    askForm.addEventListener('submit', event => {
      event.preventDefault();
      void this.ask(this._question.value);
    });

    this._spinner = element('div', 'jp-DevKnow-spinner');
    this._spinner.setAttribute('role', 'progressbar');
    this._spinner.setAttribute('aria-label', 'Loading');
    this._error = element('div', 'jp-DevKnow-error');
    this._error.setAttribute('role', 'alert');
    this._view = element('div', 'jp-DevKnow-view devknow');
    this._status = element('div', 'jp-DevKnow-status');
    this._style = document.createElement('style');
    this.node.append(this._style, nav, searchForm, askForm, this._spinner, this._error, this._view, this._status);
    this._updateNav();
  }

  /** The site filter's value (setting `source` gives its default). */
  get source(): string {
    return this._source.value.trim();
  }
  set source(value: string) {
    this._source.value = value;
  }

  /** The page shown now, if any (what "Open in tab" opens). */
  get currentDocument(): api.IDocument | null {
    const view = this._history[this._position];
    return view?.kind === 'page' ? view.doc : null;
  }

  /** Index of the selected hit in the hit list shown, or -1. */
  get selectedIndex(): number {
    const view = this._history[this._position];
    return view?.kind === 'hits' ? view.selected : -1;
  }

  /** Put the cursor in the search box. */
  focusSearch(): void {
    this._query.focus();
    this._query.select();
  }

  /** Search for `query` and show the hits; with `error`, `query` is an error's output (the server makes the
   *  query from it, which the search box then shows). */
  async search(query: string, error = false): Promise<void> {
    query = query.trim();
    this._query.value = error ? '' : query;
    if (!query) {
      this.showError(error ? 'The error has no text to search for.' : 'Type what to look for.');
      return;
    }
    const reply = await this._run(() => api.search(query, this.source, this.hits, error));
    if (reply) {
      if (error) {
        this._query.value = reply.query; // the query made from the error: its type, message and libraries
      }
      this._push({ kind: 'hits', reply, selected: reply.results.length ? 0 : -1 });
      this._list?.focus({ preventScroll: true }); // the header and its notices stay in view
      void this.refreshStatus(); // the site suggestions follow the index that answered
    }
  }

  /** Ask `question`; the answer, or hits with the quota notice when no answer is left today. */
  async ask(question: string): Promise<void> {
    question = question.trim();
    this._question.value = question;
    if (!question) {
      this.showError('Type a question.');
      return;
    }
    const reply = await this._run(() => api.answer(question));
    if (reply?.kind === 'answer') {
      this._push({ kind: 'answer', reply });
    } else if (reply) {
      this._push({ kind: 'hits', reply, selected: reply.results.length ? 0 : -1 });
    }
  }

  /** Fetch a page by document name or page URL and show it. */
  async openDocument(nameOrUrl: string): Promise<void> {
    const [name, anchor] = nameOrUrl.split('#', 2);
    const reply = await this._run(() => api.documents([name]));
    const doc = reply?.documents[0];
    if (doc) {
      this._push({ kind: 'page', doc });
      if (anchor) {
        findAnchor(this._view, anchor)?.scrollIntoView({ block: 'start' });
      }
    }
  }

  /** Go back one view in the history. */
  back(): void {
    if (this._position > 0) {
      this._position--;
      this._render();
    }
  }

  /** Go forward one view in the history. */
  forward(): void {
    if (this._position < this._history.length - 1) {
      this._position++;
      this._render();
    }
  }

  /** Open the page shown in a main-area tab. */
  openCurrentInTab(): void {
    const doc = this.currentDocument;
    if (doc) {
      this.options.openInTab(doc);
    }
  }

  /** Select hit `index` (scrolls it into view). */
  select(index: number): void {
    const view = this._history[this._position];
    if (view?.kind !== 'hits' || !this._list) {
      return;
    }
    const items = Array.from(this._list.children) as HTMLElement[];
    if (!items.length) {
      return;
    }
    view.selected = Math.min(Math.max(index, 0), items.length - 1);
    items.forEach((item, i) => {
      item.classList.toggle('jp-mod-selected', i === view.selected);
      item.setAttribute('aria-selected', String(i === view.selected));
    });
    this._list.setAttribute('aria-activedescendant', items[view.selected].id);
    const head = this._view.querySelector<HTMLElement>('.jp-DevKnow-head');
    this._view.style.scrollPaddingTop = head ? `${head.offsetHeight}px` : ''; // not under the sticky header
    items[view.selected].scrollIntoView({ block: 'nearest' });
  }

  /** Show one line of error text (cleared by the next request). */
  showError(text: string): void {
    this._error.textContent = text;
    this._error.classList.toggle('jp-mod-visible', !!text);
  }

  /** Show where the server's client points (endpoint, backend, key source; never the key). */
  async refreshStatus(): Promise<void> {
    try {
      const status = await api.status();
      this._style.textContent = status.stylesheet; // our own server's stylesheet for the rendered HTML
      const key = status.key_source ? `key from ${status.key_source}` : 'no key';
      const where = status.backend === 'local' ? 'offline index' : status.endpoint;
      this._status.textContent = `${where} · ${key}`;
      this._status.title = `Endpoint: ${status.endpoint} (set on the server: c.DevKnowServer.endpoint)`;
      this._showSites(status.sites ?? []);
    } catch (reason) {
      this._status.textContent = reason instanceof api.DocsError ? reason.line : String(reason);
    }
  }

  /** Refresh the Insert buttons when the active notebook changes. */
  updateInsert(): void {
    updateInsertButtons(this._inserts, this.options.canInsert());
  }

  private _showSites(sites: string[]): void {
    this._sites.replaceChildren(
      ...sites.map(site => {
        const option = document.createElement('option');
        option.value = site;
        return option;
      })
    );
  }

  protected onAfterAttach(): void {
    if (!this._statusAsked) {
      this._statusAsked = true;
      void this.refreshStatus();
    }
  }

  private async _run<T>(call: () => Promise<T>): Promise<T | null> {
    const ticket = ++this._ticket; // a newer request wins; an older reply arriving late is dropped
    this.showError('');
    this.node.classList.add('jp-mod-busy');
    try {
      const reply = await call();
      return ticket === this._ticket ? reply : null;
    } catch (reason) {
      if (ticket === this._ticket) {
        this.showError(reason instanceof api.DocsError ? reason.line : String(reason));
      }
      return null;
    } finally {
      if (ticket === this._ticket) {
        this.node.classList.remove('jp-mod-busy');
      }
    }
  }

  private _push(view: View): void {
    this._history.splice(this._position + 1);
    this._history.push(view);
    this._position = this._history.length - 1;
    this._render();
  }

  private _render(): void {
    const view = this._history[this._position];
    this._view.replaceChildren();
    this._stopSections();
    this._list = null;
    this._inserts = [];
    this.showError('');
    if (view?.kind === 'hits') {
      this._renderHits(view);
    } else if (view?.kind === 'page') {
      this._renderContent(view.doc.html, 'jp-DevKnow-page', '.devknow-ref', view.doc);
    } else if (view?.kind === 'answer') {
      this._renderContent(view.reply.html, 'jp-DevKnow-answer', '.devknow-ref');
    }
    this._view.scrollTop = 0;
    this._updateNav();
  }

  private _renderHits(view: Extract<View, { kind: 'hits' }>): void {
    const { sanitizer } = this.options;
    const head = sanitized(view.reply.header_html, sanitizer);
    head.className = 'jp-DevKnow-head'; // sticky: the count and the notices stay above the scrolling hits
    this._view.append(head);
    const list = element('ul', 'jp-DevKnow-hits');
    list.setAttribute('role', 'listbox');
    list.setAttribute('aria-label', 'Search hits');
    list.tabIndex = 0;
    view.reply.results.forEach((hit, i) => {
      const item = sanitized(hit.html, sanitizer, 'li');
      item.className = 'jp-DevKnow-hit devknow-hit';
      item.id = `${this.id}-hit-${i}`;
      item.setAttribute('role', 'option');
      item.addEventListener('click', event => {
        event.preventDefault(); // the title links to the web page; here it opens the page in the panel
        this.select(i);
        void this.openDocument(hit.parent);
      });
      list.append(item);
    });
    list.addEventListener('keydown', event => {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const next = this.selectedIndex + (event.key === 'ArrowDown' ? 1 : -1);
        if (next < 0) {
          this._query.focus();
        } else {
          this.select(next);
        }
      } else if (event.key === 'Enter' && this.selectedIndex >= 0) {
        event.preventDefault();
        void this.openDocument(view.reply.results[this.selectedIndex].parent);
      }
    });
    this._view.append(list);
    this._list = list;
    this.select(view.selected);
  }

  private _renderContent(html: string, className: string, pageLinks: string, doc?: api.IDocument): void {
    const content = sanitized(html, this.options.sanitizer);
    content.classList.add(className);
    wireLinks(content, this.options, pageLinks);
    this._inserts = addCodeActions(content, this.options);
    this._view.append(content);
    const sections = doc?.sections;
    if (doc && sections) {
      this._stopSections = fillSections(
        content,
        sections.pending,
        this.options.sanitizer,
        index => api.section(doc.name, index, sections.number).then(reply => reply.html),
        section => this._inserts.push(...addCodeActions(section, this.options))
      );
    }
  }

  private _updateNav(): void {
    this._back.disabled = this._position <= 0;
    this._forward.disabled = this._position >= this._history.length - 1;
    this._tab.disabled = !this.currentDocument;
  }

  private _history: View[] = [];
  private _position = -1;
  private _ticket = 0;
  private _statusAsked = false;
  private _list: HTMLElement | null = null;
  private _inserts: HTMLButtonElement[] = [];
  private _stopSections: () => void = () => undefined;
  private readonly _back: HTMLButtonElement;
  private readonly _forward: HTMLButtonElement;
  private readonly _tab: HTMLButtonElement;
  private readonly _query: HTMLInputElement;
  private readonly _source: HTMLInputElement;
  private readonly _sites: HTMLDataListElement;
  private readonly _question: HTMLInputElement;
  private readonly _spinner: HTMLElement;
  private readonly _error: HTMLElement;
  private readonly _view: HTMLElement;
  private readonly _status: HTMLElement;
  private readonly _style: HTMLStyleElement;
}

/** A page in a main-area tab: the same rendering, with its own code buttons. */
export class DocsPage extends Widget {
  constructor(
    readonly doc: api.IDocument,
    private readonly actions: IRenderActions
  ) {
    super();
    this.addClass('jp-DevKnow-tabPage');
    this.title.label = doc.title || doc.name;
    this.title.caption = doc.uri;
    const content = sanitized(doc.html, actions.sanitizer);
    content.classList.add('devknow', 'jp-DevKnow-page');
    wireLinks(content, actions, '');
    this._inserts = addCodeActions(content, actions);
    this.node.append(content);
    const sections = doc.sections;
    if (sections) {
      fillSections(
        content,
        sections.pending,
        actions.sanitizer,
        index => api.section(doc.name, index, sections.number).then(reply => reply.html),
        section => this._inserts.push(...addCodeActions(section, actions))
      );
    }
  }

  /** Refresh the Insert buttons when the active notebook changes. */
  updateInsert(): void {
    updateInsertButtons(this._inserts, this.actions.canInsert());
  }

  private readonly _inserts: HTMLButtonElement[];
}

function element(tag: string, className: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  return node;
}

function input(type: string, className: string, placeholder: string): HTMLInputElement {
  const node = document.createElement('input');
  node.type = type;
  node.className = `jp-mod-styled jp-DevKnow-input ${className}`;
  node.placeholder = placeholder;
  node.setAttribute('aria-label', placeholder);
  node.spellcheck = false;
  return node;
}
