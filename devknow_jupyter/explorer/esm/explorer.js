// The documentation explorer's view (anywidget ES module, hand-written; no build step, no dependencies).
//
// The DOM is built once per view and filled from the model's traits (see explorer/widget.py). HTML comes
// only from the `*_html` traits, which Python rendered and sanitized; every other value is set as text.
// User actions go to Python as custom messages; keyboard focus and the arrow keys stay here:
//   * Enter in the search box or the site filter searches, Enter in the ask box asks.
//   * ArrowDown in the search box goes to the hits. In a list (the hits, an answer's references) ArrowDown /
//     ArrowUp / Home / End move the focus and the highlight (no request; the status line previews the row),
//     Enter or Space opens the highlighted row. Pressed anywhere else in the explorer (its blank space takes
//     the focus on a click), the arrows drive the hit list. The ends stop (no wrap).
//   * Tab moves through the controls and every hit; the Search and Ask buttons are for the mouse only.
// The explorer's own keys are taken before the page sees them (render/esm/keys.js, which Python puts before
// this module), so the notebook's shortcuts for them (ArrowUp / ArrowDown select another cell) do not fire;
// every other key (Ctrl+S, Shift+Enter, the command palette) reaches JupyterLab and Notebook 7.

const MOVES = { ArrowDown: 1, ArrowUp: -1, Home: 'first', End: 'last' };

function make(tag, className, props = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return Object.assign(node, props);
}

function button(className, text, label) {
  const node = make('button', `dkx-button ${className}`, { type: 'button', textContent: text });
  if (label) {
    node.title = label;
    node.setAttribute('aria-label', label);
  }
  return node;
}

function textBox(className, placeholder, label) {
  const wrap = make('div', `dkx-field ${className}`);
  const input = make('input', 'dkx-input', { type: 'text', placeholder, spellcheck: false });
  input.setAttribute('aria-label', label);
  wrap.append(input);
  return { wrap, input };
}

// A list of rows (hits or references): buttons that Tab reaches one by one, arrows move between.
function rowList(className, label, onOpen, onMove) {
  const node = make('div', `dkx-list ${className}`);
  node.setAttribute('role', 'list');
  node.setAttribute('aria-label', label);
  const list = { node, rows: [], cursor: -1 };
  list.fill = (rows) => {
    list.rows = rows.map((row, index) => {
      const item = button('dkx-row', row.label || '');
      item.title = row.tooltip || '';
      item.setAttribute('role', 'listitem');
      item.addEventListener('click', () => {
        list.mark(index);
        onOpen(index);
      });
      item.addEventListener('focus', () => list.mark(index));
      return item;
    });
    node.replaceChildren(...list.rows);
    node.hidden = list.rows.length === 0;
    list.cursor = -1;
  };
  list.mark = (index) => {
    list.cursor = index;
    list.rows.forEach((row, i) => {
      row.classList.toggle('mod-active', i === index);
      row.setAttribute('aria-current', i === index ? 'true' : 'false');
    });
  };
  // A key for this list: true when it was handled.
  list.key = (event) => {
    const count = list.rows.length;
    const move = MOVES[event.key];
    if (!count) return false;
    if (move === undefined) {
      if ((event.key === 'Enter' || event.key === ' ') && list.cursor >= 0 && list.node.contains(event.target)) {
        onOpen(list.cursor);
        return true;
      }
      return false;
    }
    let target;
    if (move === 'first') target = 0;
    else if (move === 'last') target = count - 1;
    else if (list.cursor < 0) target = move > 0 ? 0 : count - 1;
    else target = Math.min(Math.max(list.cursor + move, 0), count - 1);
    if (target !== list.cursor || document.activeElement !== list.rows[target]) {
      list.mark(target);
      list.rows[target].focus({ preventScroll: false });
      onMove(target, count);
    }
    return true;
  };
  return list;
}

function render({ model, el }) {
  const get = (name) => model.get(name);
  const send = (event, extra = {}) => {
    showStatus(get('status') || {}); // a row's preview gives way to the model's line again
    model.send({ event, ...extra });
  };
  el.classList.add('devknow-explorer');
  el.tabIndex = -1; // a click on its blank space gives the explorer the focus (and the arrow keys)

  const style = make('div', 'dkx-style');
  const back = button('dkx-back', '◀', 'Back');
  const forward = button('dkx-forward', '▶', 'Forward');
  const source = textBox('dkx-source', 'all sites', 'Only hits from this site (Enter searches)');
  const sites = make('datalist', '', { id: `dkx-sites-${Math.random().toString(36).slice(2)}` });
  source.input.setAttribute('list', sites.id);
  source.input.title = 'Only hits from this site, e.g. firebase.google.com (Enter searches)';
  const search = textBox('dkx-search', 'Search the docs', 'Search the docs (Enter searches)');
  const searchButton = button('dkx-search-button', 'Search', 'Search');
  searchButton.tabIndex = -1; // Enter in the box searches: Tab goes from the box straight to the hits
  const toolbar = make('div', 'dkx-toolbar');
  toolbar.append(back, forward, source.wrap, sites, search.wrap, searchButton);

  const status = make('div', 'dkx-status-box');
  status.setAttribute('aria-live', 'polite');
  const header = make('div', 'dkx-hits-header');
  const more = button('dkx-more', 'More hits', 'The next page of hits');
  const preview = (noun) => (index, count) => {
    if ((get('status') || {}).kind === 'busy') return; // keep the spinner line of a request in flight
    const rows = get(noun === 'Hit' ? 'hits' : 'references') || [];
    const label = String((rows[index] || {}).label || '').replace(/^\d+\.\s*/, '');
    showStatus({ kind: 'hint', text: `${noun} ${index + 1} of ${count}: ${label} · Enter opens it` });
  };
  const hits = rowList('dkx-hit-list', 'Hits', (index) => send('open', { hit: index }), preview('Hit'));
  const hitPanel = make('div', 'dkx-hits');
  hitPanel.append(header, hits.node, more);

  const title = make('div', 'dkx-title');
  const toc = make('div', 'dkx-toc');
  const page = make('div', 'dkx-page-box');
  const whole = button('dkx-whole', 'Show the whole page');
  const refs = rowList('dkx-reference-list', 'References', (index) => send('open', { reference: index }),
    preview('Reference'));
  const refPanel = make('div', 'dkx-refs');
  refPanel.append(refs.node);
  const doc = make('div', 'dkx-doc');
  doc.append(title, toc, page, whole, refPanel);
  const body = make('div', 'dkx-body');
  body.append(hitPanel, doc);

  const ask = textBox('dkx-ask', 'Ask a question (empty: the search above), press Enter', 'Ask a question');
  const askButton = button('dkx-ask-button', 'Ask', 'Ask');
  askButton.tabIndex = -1;
  const askRow = make('div', 'dkx-ask-row');
  askRow.append(ask.wrap, askButton);
  el.replaceChildren(style, toolbar, status, body, askRow);

  // -- actions ---------------------------------------------------------------------------------------------
  const doSearch = () => send('search', { query: search.input.value, source: source.input.value });
  const doAsk = () => send('ask', { question: ask.input.value });
  back.addEventListener('click', () => send('back'));
  forward.addEventListener('click', () => send('forward'));
  searchButton.addEventListener('click', doSearch);
  askButton.addEventListener('click', doAsk);
  more.addEventListener('click', () => send('more'));
  whole.addEventListener('click', () => send('whole'));

  // The explorer's own keys (render/esm/keys.js, unmodified, focus inside it); all others reach JupyterLab.
  const onKey = (event) => {
    const target = event.target;
    if (target === search.input || target === source.input || target === ask.input) {
      if (event.key === 'Enter') {
        (target === ask.input ? doAsk : doSearch)();
        return true;
      }
      return event.key === 'ArrowDown' && target === search.input && hits.rows.length > 0 && hits.key(event);
    }
    if (refs.node.contains(target)) return refs.key(event);
    return hits.key(event); // anywhere else in the explorer the arrows drive the hit list
  };
  const stopKeys = takeOwnKeys(el, onKey);

  // -- showing the model's state ---------------------------------------------------------------------------
  function showStatus(line) {
    const box = make('div', 'dkx-status');
    box.title = line.title || line.text || '';
    if (line.kind === 'busy') {
      const spin = make('span', 'dkx-spin');
      spin.setAttribute('role', 'progressbar');
      spin.setAttribute('aria-label', 'working');
      box.append(spin);
    }
    const text = ['error', 'warn', 'hint'].includes(line.kind)
      ? make('span', `dkx-${line.kind}`, { textContent: line.text || '' })
      : document.createTextNode(line.text || '');
    box.append(text);
    if (line.hint) box.append(' ', make('span', 'dkx-hint', { textContent: `— ${line.hint}` }));
    status.replaceChildren(box);
  }
  const setValue = (input, value) => {
    if (input.value !== value) input.value = value;
  };
  const views = {
    query: () => setValue(search.input, get('query') || ''),
    source: () => setValue(source.input, get('source') || ''),
    question: () => setValue(ask.input, get('question') || ''),
    sites: () => sites.replaceChildren(...(get('sites') || []).map((site) => make('option', '', { value: site }))),
    status: () => showStatus(get('status') || {}),
    hits: () => {
      hits.fill(get('hits') || []);
      hits.mark(get('selected'));
    },
    selected: () => hits.mark(get('selected')),
    has_more: () => { more.hidden = !get('has_more'); },
    references: () => {
      refs.fill(get('references') || []);
      refPanel.hidden = refs.rows.length === 0;
    },
    truncated: () => { whole.hidden = !get('truncated'); },
    can_back: () => { back.disabled = !get('can_back'); },
    can_forward: () => { forward.disabled = !get('can_forward'); },
    hits_header_html: () => { header.innerHTML = get('hits_header_html'); },
    title_html: () => { title.innerHTML = get('title_html'); },
    toc_html: () => { toc.innerHTML = get('toc_html'); },
    page_html: () => {
      page.innerHTML = get('page_html');
      // A new page starts at its top; in the next frame, which lays the page out anyway (setting it now
      // would force a layout of the whole page at once).
      requestAnimationFrame(() => { page.scrollTop = 0; });
    },
    style_html: () => { style.innerHTML = get('style_html'); },
  };
  for (const [name, show] of Object.entries(views)) {
    show();
    model.on(`change:${name}`, show);
  }
  return () => {
    for (const [name, show] of Object.entries(views)) model.off(`change:${name}`, show);
    stopKeys();
  };
}

export default { render };
