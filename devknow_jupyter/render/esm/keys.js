// The keys a devknow view keeps for itself, shared by the result views (results.js) and the explorer
// (explorer/esm/explorer.js): Python puts this file before each module's own code (render/widgets.py,
// explorer/widget.py), so both take exactly the same keys.
//
// A view keeps the arrow keys, Enter, Escape, Home, End and Space, pressed without Ctrl, Alt, Meta or Shift,
// and only while the focus is inside it. They are taken in the capture phase on the window, before the page
// sees them: Notebook 7 runs its shortcuts in the document's capture phase and JupyterLab in the bubbling
// phase, and either would move to another cell or into edit mode. Every other key (Ctrl+S, Shift+Enter, the
// command palette, a cell's letters) goes on to JupyterLab as if the view were not there.

const OWN_KEYS = new Set(["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Enter", "Escape", "Home", "End", " "]);

function ownKey(event) {
  return OWN_KEYS.has(event.key) && !event.ctrlKey && !event.altKey && !event.metaKey && !event.shiftKey
    && !event.isComposing;
}

// Give `onKey(event)` the view's own keys pressed inside `root`; when it returns true the key's default
// action is cancelled too (a focused button's Enter, the arrows' scrolling stay otherwise). Returns the
// function that stops listening (call it when the view goes away).
function takeOwnKeys(root, onKey) {
  const listener = event => {
    if (!root.contains(event.target) || !ownKey(event)) return;
    event.stopPropagation(); // not the notebook's shortcut for this key
    if (onKey(event)) event.preventDefault();
  };
  window.addEventListener("keydown", listener, true);
  return () => window.removeEventListener("keydown", listener, true);
}

