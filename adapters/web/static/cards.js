// Card pictures drawn by the project as SVG (no fonts or images from elsewhere). Card codes as in the
// records: rank 9 J Q K 10 A and suit C S H D ("QS", "10H"). The rank letters shown are the reader's
// (the server sends them as strings rank.9 ... rank.A).
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const RED = { H: true, D: true };
  // Suit shapes in a 100 x 100 box.
  const SUITS = {
    H: [["path", { d: "M50 90C22 66 4 50 4 30 4 15 15 5 28 5c10 0 18 6 22 15 4-9 12-15 22-15 13 0 24 10 24 25 0 20-18 36-46 60z" }]],
    D: [["path", { d: "M50 3 88 50 50 97 12 50z" }]],
    S: [["path", { d: "M50 4C40 24 6 40 6 62c0 13 11 22 23 22 8 0 14-4 17-8-1 9-5 15-11 20h30c-6-5-10-11-11-20 3 4 9 8 17 8 12 0 23-9 23-22C94 40 60 24 50 4z" }]],
    C: [
      ["circle", { cx: 50, cy: 27, r: 19 }],
      ["circle", { cx: 26, cy: 58, r: 19 }],
      ["circle", { cx: 74, cy: 58, r: 19 }],
      ["circle", { cx: 50, cy: 52, r: 10 }],
      ["path", { d: "M46 55c0 18-5 31-12 41h32c-7-10-12-23-12-41z" }],
    ],
  };

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  function suitShape(suit, x, y, size, parent) {
    const g = el("g", { transform: `translate(${x} ${y}) scale(${size / 100})`, class: "pip" }, parent);
    for (const [name, attrs] of SUITS[suit] || []) el(name, attrs, g);
    return g;
  }

  function parse(code) {
    const c = String(code).toUpperCase();
    return { rank: c.slice(0, -1), suit: c.slice(-1) };
  }

  function rankLetter(rank, strings) {
    const key = "rank." + rank;
    return strings && strings[key] ? strings[key] : rank;
  }

  // A face-up card: an <svg> 60 x 84 (it scales with CSS).
  function face(code, strings) {
    const { rank, suit } = parse(code);
    const svg = el("svg", {
      viewBox: "0 0 60 84",
      class: "card " + (RED[suit] ? "red" : "black"),
      role: "img",
      "data-card": rank + suit,
    });
    const title = el("title", {}, svg);
    title.textContent = rankLetter(rank, strings) + " " + ((strings && strings["suit." + suit]) || suit);
    el("rect", { x: 0.75, y: 0.75, width: 58.5, height: 82.5, rx: 5, class: "paper" }, svg);
    const letter = rankLetter(rank, strings);
    const narrow = letter.length > 1;
    const t = el("text", { x: narrow ? 3 : 5, y: 17, class: "rank" + (narrow ? " narrow" : "") }, svg);
    t.textContent = letter;
    suitShape(suit, 4.5, 21, 11, svg);
    const b = el("text", { x: 0, y: 0, class: "rank" + (narrow ? " narrow" : ""),
      transform: `rotate(180 30 42) translate(${narrow ? 3 : 5} 17)` }, svg);
    b.textContent = letter;
    suitShape(suit, 30 - 16, 44 - 16, 32, svg);
    return svg;
  }

  // The back of a card (someone else's card, a hidden talon, a face-down crawl card).
  function back() {
    const svg = el("svg", { viewBox: "0 0 60 84", class: "card back", role: "img" });
    el("rect", { x: 0.75, y: 0.75, width: 58.5, height: 82.5, rx: 5, class: "paper" }, svg);
    el("rect", { x: 5, y: 5, width: 50, height: 74, rx: 3, class: "weave" }, svg);
    el("path", { d: "M30 18 44 42 30 66 16 42z", class: "mark" }, svg);
    return svg;
  }

  // A small suit sign (trump, marriages) as an inline SVG.
  function suit(letter, strings) {
    const svg = el("svg", { viewBox: "0 0 100 100", class: "suit " + (RED[letter] ? "red" : "black"), role: "img" });
    const title = el("title", {}, svg);
    title.textContent = (strings && strings["suit." + letter]) || letter;
    if (letter === "A") {
      const t = el("text", { x: 50, y: 78, "text-anchor": "middle", class: "aces" }, svg);
      t.textContent = rankLetter("A", strings) + "×4";
    } else {
      suitShape(letter, 0, 0, 100, svg);
    }
    return svg;
  }

  window.Cards = { face, back, suit, parse, rankLetter };
})();
