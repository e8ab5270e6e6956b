// What the table page and the replay page both need of the DOM: elements built without innerHTML (the
// CSP allows no inline script, and no text from a player is ever parsed as markup), and the server's
// strings with their {placeholders} filled.
"use strict";
(function () {
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function format(strings, key, params) {
    let text = Object.prototype.hasOwnProperty.call(strings, key) ? strings[key] : key;
    for (const [k, v] of Object.entries(params || {})) text = text.split("{" + k + "}").join(String(v));
    return text;
  }

  window.Dom = { el, format };
})();
