// The browser half of devknow_jupyter's result views (render/widgets.py): one anywidget model per output.
//
// Every HTML string in the model was rendered and sanitized in Python (nh3, render/static.py); this module
// only places it, and never renders Markdown. Text that is not HTML (labels, the error line) goes in with
// textContent. Fetching stays in Python: a click or a key invokes one of the widget's anywidget commands
// (open_hit, more_hits, whole_page); Python sets the traits, then answers, and the awaiting page draws.

const ANSWER_MS = 180_000; // longer than any request the client makes (its timeout and retries)

let serial = 0; // element ids unique in the page (aria-activedescendant points at the active hit)

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(label, className, title) {
  const node = element("button", `dkv-button ${className}`, label);
  node.type = "button";
  if (title) node.title = title;
  return node;
}

// A remote image is a link until clicked (render/markdown.py, image_placeholders): then it loads, in place.
function loadImage(event) {
  const link = event.target.closest ? event.target.closest("a.dk-remote-image") : null;
  if (!link) return;
  event.preventDefault(); event.stopPropagation();
  link.replaceWith(Object.assign(document.createElement("img"), { src: link.href, alt: link.dataset.alt || "" }));
}

// A long page comes in sections (render/sections.py): each placeholder asks Python for its HTML when it
// comes within a few screens of view (`ask(name, index)`), and is replaced by the answer ({section, name, html}).
function watchSections(ask, container, name) {
  const pending = container.querySelectorAll("section.devknow-pending[data-dk-section]");
  if (!pending.length || typeof IntersectionObserver === "undefined") return null;
  const observer = new IntersectionObserver(entries => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      ask(name, Number(entry.target.dataset.dkSection));
    }
  }, { rootMargin: "2000px 0px" });
  pending.forEach(node => observer.observe(node));
  return observer;
}

function render({ model, el, experimental }) {
  const kind = model.get("kind");
  const listed = kind === "hits" || kind === "hit" || kind === "answer"; // items with an Open each
  const id = `dkv-${++serial}`;
  const state = { shown: 0, active: 0, view: kind === "document" ? "page" : "list", pending: null };
  // What is in the DOM now, so that a redraw skips what did not change.
  const drawn = { header: null, page: null, items: null, shown: 0 };

  const root = element("div", `devknow dkv dkv-${kind}`);
  const header = element("div", "dkv-header");
  const error = element("div", "devknow-error dkv-error");
  error.setAttribute("role", "alert");
  const listView = element("div", "dkv-list-view");
  const list = element("div", "dkv-list");
  const more = button("More", "dkv-more");
  const pageView = element("div", "dkv-page-view");
  const back = button("← Back", "dkv-back", kind === "answer" ? "Back to the references (Esc)" : "Back to the hits (Esc)");
  const pageBody = element("div", "dkv-page");
  const showAll = button("Show all", "dkv-show-all");
  listView.append(list, more);
  pageView.append(back, pageBody, showAll);
  root.append(header, listView, pageView, error);
  root.addEventListener("click", loadImage, true); // before a hit's own click opens it
  el.appendChild(root);
  if (listed) {
    list.tabIndex = 0;
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", kind === "answer" ? "References" : "Hits");
  }
  if (kind === "document") back.hidden = true; // a page on its own has no list to go back to

  const sectioned = new Map(); // page name -> [its element, the observer of its pending sections]
  function sections(container, name) {
    sectioned.get(name)?.[1]?.disconnect();
    sectioned.set(name, [container, watchSections(askSection, container, name)]);
  }
  function onSection(message) {
    if (!message || typeof message.section !== "number") return;
    const container = sectioned.get(message.name)?.[0];
    const node = container?.querySelector(`section.devknow-pending[data-dk-section="${message.section}"]`);
    if (!node) return;
    const filled = element("section", "devknow-section");
    filled.innerHTML = message.html; // sanitized in Python
    node.replaceWith(filled);
  }
  function askSection(name, index) {
    experimental.invoke("page_section", { name, index }, { signal: AbortSignal.timeout(ANSWER_MS) })
      .then(([reply]) => onSection(reply), () => {}); // no answer: the placeholder keeps its source text
  }

  const items = () => model.get("items") || [];
  const rows = () => Array.from(list.querySelectorAll(":scope > .dkv-item"));

  // One request to Python at a time: `pending` says which (the buttons show it) until the answer comes.
  async function send(name, message, pending) {
    state.pending = pending;
    draw();
    let answered = true;
    try {
      // A kernel that died or restarted never answers: the view gives up after ANSWER_MS and says so.
      await experimental.invoke(name, message, { signal: AbortSignal.timeout(ANSWER_MS) });
    } catch {
      answered = false;
    }
    onReply();
    if (!answered) {
      error.textContent = "No answer from the kernel: is it still running? Run the cell again to retry.";
      error.hidden = false;
    }
  }

  function open(index) {
    const item = items()[index];
    if (!item || state.pending || !model.get("can_open")) return;
    state.active = index;
    send("open_hit", { name: item.name }, { do: "open", index });
  }

  function goBack() {
    state.view = "list";
    draw();
    list.focus({ preventScroll: true });
    rows()[state.active]?.scrollIntoView({ block: "nearest" });
  }

  function onMore() {
    if (state.pending) return;
    if (state.shown < items().length) {
      state.shown = Math.min(items().length, state.shown + model.get("page_size"));
      draw();
    } else if (model.get("has_next")) {
      send("more_hits", {}, { do: "more" });
    }
  }

  function makeRow(item, index) {
    const row = element("div", "dkv-item");
    const body = element("div", "dkv-item-html");
    body.innerHTML = item.html; // sanitized in Python
    row.append(body);
    if (item.sections) sections(body, item.name);
    if (listed) {
      row.id = `${id}-${index}`;
      row.setAttribute("role", "option");
      const openButton = button("Open", "dkv-open", `Show ${item.name} here`);
      openButton.tabIndex = -1; // the list is one tab stop; arrows move within it
      if (!model.get("can_open")) openButton.title = "No client to fetch with (no actions given)";
      openButton.addEventListener("click", event => { event.stopPropagation(); open(index); });
      row.addEventListener("click", event => {
        if (event.target.closest("a")) return; // links open the page on the web
        state.active = index;
        markActive();
      });
      row.append(openButton);
    } else if (item.truncated) {
      const whole = button("Show all", "dkv-show-all");
      whole.addEventListener("click", () => send("whole_page", { name: item.name }, { do: "all" }));
      row.append(whole);
    }
    return row;
  }

  function drawItems() {
    // Rows are built when the items change, and added when more are shown; otherwise only buttons change.
    const all = items();
    if (drawn.items !== all || drawn.shown > state.shown) {
      list.replaceChildren();
      drawn.items = all;
      drawn.shown = 0;
    }
    for (let index = drawn.shown; index < Math.min(state.shown, all.length); index++) {
      list.append(makeRow(all[index], index));
    }
    drawn.shown = Math.max(drawn.shown, Math.min(state.shown, all.length));
    rows().forEach((row, index) => {
      const control = row.querySelector(":scope > .dkv-button");
      if (!control) return;
      const opening = state.pending?.do === "open" && state.pending.index === index;
      if (listed) control.textContent = opening ? "Opening…" : "Open";
      control.disabled = !!state.pending || (listed && !model.get("can_open"));
    });
    markActive();
  }

  function markActive() {
    if (!listed) return;
    const all = rows();
    state.active = Math.max(0, Math.min(state.active, all.length - 1));
    all.forEach((row, index) => {
      const active = index === state.active;
      row.classList.toggle("dkv-active", active);
      row.setAttribute("aria-selected", active ? "true" : "false");
    });
    if (all.length) list.setAttribute("aria-activedescendant", all[state.active].id);
  }

  function draw() {
    if (drawn.header !== model.get("header")) {
      drawn.header = model.get("header");
      header.innerHTML = drawn.header; // sanitized in Python (the stylesheet is the StyleSheet model's)
    }
    const all = items();
    if (!state.shown) state.shown = Math.min(all.length, model.get("page_size"));
    drawItems();
    const left = all.length - state.shown;
    more.hidden = !(left > 0 || model.get("has_next"));
    more.textContent = state.pending?.do === "more" ? "Loading…" : left > 0 ? `More (${left} left)` : "More";
    more.disabled = !!state.pending;
    const page = model.get("page") || {};
    const showing = state.view === "page" && !!page.html;
    listView.hidden = showing || kind === "document";
    pageView.hidden = !showing;
    if (showing && drawn.page !== page.html) {
      drawn.page = page.html;
      pageBody.innerHTML = page.html; // sanitized in Python
      if (page.sections) sections(pageBody, page.name);
    }
    showAll.hidden = !(showing && page.truncated);
    showAll.textContent = state.pending?.do === "all" ? "Rendering…" : "Show all";
    showAll.disabled = !!state.pending;
    const line = model.get("error");
    error.textContent = line;
    error.hidden = !line;
  }

  function onReply() {
    const done = state.pending;
    state.pending = null;
    if (done?.do === "more") state.shown = Math.min(items().length, state.shown + model.get("page_size"));
    if (done?.do === "open" && !model.get("error")) {
      state.view = "page";
      draw();
      back.focus({ preventScroll: true });
      // Measured in the next frame, whose layout happens anyway, rather than forcing one now.
      requestAnimationFrame(() => { if (root.getBoundingClientRect().top < 0) root.scrollIntoView({ block: "start" }); });
      return;
    }
    draw();
  }

  // The view's own keys (keys.js): the list's moves and Enter, Esc in a page; all others reach JupyterLab.
  function onKey(event) {
    if (list.contains(event.target)) return listKey(event.key);
    if (!pageView.contains(event.target) || event.key !== "Escape" || kind === "document") return false;
    goBack();
    return true;
  }

  function listKey(key) {
    const count = rows().length;
    if (key === "ArrowDown" || key === "ArrowUp") {
      state.active = (state.active + (key === "ArrowDown" ? 1 : count - 1)) % Math.max(count, 1);
      markActive();
      rows()[state.active]?.scrollIntoView({ block: "nearest" });
    } else if (key === "Home" || key === "End") {
      state.active = key === "Home" ? 0 : count - 1;
      markActive();
    } else if (key === "Enter") {
      open(state.active);
    } else {
      return false;
    }
    return true;
  }
  const stopKeys = takeOwnKeys(root, onKey);
  back.addEventListener("click", goBack);
  more.addEventListener("click", onMore);
  showAll.addEventListener("click", () => {
    const page = model.get("page") || {};
    if (page.name && !state.pending) send("whole_page", { name: page.name }, { do: "all" });
  });

  const changes = ["change:header", "change:items", "change:has_next", "change:page", "change:error"];
  const redraw = () => draw();
  changes.forEach(name => model.on(name, redraw));
  // The static copy of every hit fetched (after More): the output holding this view saves it (the JupyterLab
  // extension listens), so a saved notebook shows what More had shown.
  const offerTwin = () => {
    const twin = model.get("twin");
    if (twin && twin["text/html"]) el.dispatchEvent(new CustomEvent("devknow-twin", { bubbles: true, detail: twin }));
  };
  model.on("change:twin", offerTwin);
  draw();
  return () => {
    changes.forEach(name => model.off(name, redraw));
    model.off("change:twin", offerTwin);
    stopKeys();
    sectioned.forEach(([, observer]) => observer?.disconnect());
  };
}

export default { render };
