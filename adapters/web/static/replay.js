// The replay page: steps through a game deal by deal and trick by trick with every hand open. The steps
// come from the server (core/replay_steps.py): embedded in the page as JSON (`thousand replay FILE
// --html`) or fetched from /api/replay/<token> (the link /export offers). No rules live here.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const data = { steps: [], players: [], strings: {}, preset: "" };
  let at = 0;

  const S = (key, params) => Dom.format(data.strings, key, params);
  const h = Dom.el;
  const card = (code) => Cards.face(code, data.strings);
  const name = (seat) => data.players[seat] || String(seat);

  // Where to go: the first step of a deal, the next/previous completed trick (or deal start/end).
  function dealStart(i) { const d = data.steps[i].deal; while (i > 0 && data.steps[i - 1].deal === d) i--; return i; }
  function go(i) { at = Math.max(0, Math.min(data.steps.length - 1, i)); render(); }
  function nextTrick() {
    for (let i = at + 1; i < data.steps.length; i++) if (data.steps[i].winner !== null || data.steps[i].result || data.steps[i].deal !== data.steps[at].deal) return go(i);
    go(data.steps.length - 1);
  }
  function prevTrick() {
    for (let i = at - 1; i >= 0; i--) if (data.steps[i].winner !== null || data.steps[i].action === null) return go(i);
    go(0);
  }
  function nextDeal() { const d = data.steps[at].deal; const i = data.steps.findIndex((s) => s.deal > d); go(i < 0 ? data.steps.length - 1 : i); }
  function prevDeal() { const s = dealStart(at); go(s === at && at > 0 ? dealStart(at - 1) : s); }

  function said(step) {
    const a = step.action;
    if (!a) return [S("deal") + " " + step.deal];
    const who = name(step.seat) + ": ";
    switch (a.action) {
      case "bid": return [who + S("bid") + " " + a.value];
      case "contract": return [who + S("contract") + " " + a.value];
      case "pass": return [who + S("pass")];
      case "take_talon": return [who + S("talon") + (a.pile ? " " + (a.pile + 1) : "")];
      case "discard": return [who, ...a.cards.map(card)];
      case "give": return [who, ...Object.entries(a.cards).flatMap(([seat, c]) => [card(c), " → " + name(+seat) + " "])];
      case "play": return [who, card(a.card), a.declare ? " " + S("marriage") : ""];
      default: return [who + a.action];
    }
  }

  function render() {
    const step = data.steps[at];
    if (!step) return;
    $("app").dataset.step = String(at);
    const facts = [h("span", { class: "fact" }, S("deal") + ": ", h("b", { text: String(step.deal) }))];
    if (step.phase) facts.push(h("span", { class: "fact phase", text: S("phase." + step.phase) }));
    if (step.trump) facts.push(h("span", { class: "fact" }, S("trump") + ": ", Cards.suit(step.trump, data.strings)));
    if (step.contract) facts.push(h("span", { class: "fact" }, S("contract") + ": ", h("b", { text: String(step.contract) })));
    else if (step.bid) facts.push(h("span", { class: "fact" }, S("bid") + ": ", h("b", { text: String(step.bid) })));
    if (step.declarer >= 0) facts.push(h("span", { class: "fact" }, S("declarer") + ": ", h("b", { text: name(step.declarer) })));
    $("facts").replaceChildren(...facts);
    const b = (label, f, off, title) => h("button", { type: "button", onclick: f, disabled: off, text: label, title, "aria-label": title });
    const first = at === 0, last = at === data.steps.length - 1;
    $("steps").replaceChildren(
      b("« " + S("deal"), prevDeal, first), b("‹ " + S("trick"), prevTrick, first), b("‹", () => go(at - 1), first, S("previous")),
      b("›", () => go(at + 1), last, S("next")), b(S("trick") + " ›", nextTrick, last), b(S("deal") + " »", nextDeal, last),
      h("span", { class: "where", text: (at + 1) + " / " + data.steps.length }));
    $("steps").querySelectorAll("button").forEach((x, i) => x.setAttribute("data-nav", ["deal-", "trick-", "prev", "next", "trick+", "deal+"][i]));
    $("said").replaceChildren(...said(step));
    $("trick").replaceChildren(...step.trick.map(played));
    const talon = step.talon && step.talon.length ? [h("div", { class: "label", text: S("talon") }), ...step.talon.map(card)] : [];
    $("talon").replaceChildren(...talon);
    $("hands").replaceChildren(...step.hands.map((cards, s) => h("div", { class: "openhand" + (s === step.to_act ? " acting" : ""), "data-seat": s },
      h("div", { class: "name", text: name(s) + (s === step.dealer ? " (D)" : "") + "  " + S("total") + " " + step.totals[s] + (step.points[s] ? "  +" + step.points[s] : "") }),
      h("div", { class: "cards" }, ...cards.map(card)))));
    renderSheet(step);
  }

  // A card played, with the review's mark when it cost 10 points or more (`thousand replay --review`):
  // about how many points, and the better card.
  function played(p) {
    const step = data.steps[at];
    const cls = "played" + (p.seat === step.winner ? " win" : "") + (p.review ? " costly" : "");
    const parts = [card(p.card), h("span", { text: name(p.seat) })];
    if (p.review) parts.push(h("div", { class: "mark", "data-best": p.review.best, title: "−" + p.review.cost + " → " + p.review.best },
      h("b", { text: "−" + p.review.cost }), card(p.review.best)));
    return h("div", { class: cls }, ...parts);
  }

  function renderSheet(step) {
    $("sheet-title").textContent = S("score_sheet");
    const rows = [];
    for (const s of data.steps) if (s.result && data.steps.indexOf(s) <= at) rows.push(s);
    const head = h("tr", {}, h("th", { text: S("deal") }), ...data.players.map((p) => h("th", { text: p })));
    const body = rows.map((s) => h("tr", {}, h("td", { text: String(s.deal) }), ...s.result.totals.map((t) => h("td", { text: String(t) }))));
    $("sheet-body").replaceChildren(h("table", {}, h("thead", {}, head), h("tbody", {}, ...body)));
  }

  function keys(ev) {
    if (ev.key === "ArrowRight") go(at + 1);
    else if (ev.key === "ArrowLeft") go(at - 1);
    else if (ev.key === "ArrowDown") nextTrick();
    else if (ev.key === "ArrowUp") prevTrick();
  }

  async function load() {
    const embedded = document.getElementById("replay-data");
    let got;
    if (embedded) got = JSON.parse(embedded.textContent);
    else {
      const token = location.pathname.split("/").pop();
      const r = await fetch("/api/replay/" + encodeURIComponent(token), { cache: "no-store" });
      got = await r.json();
      if (!r.ok) { $("app").replaceChildren(h("p", { class: "error", text: got.error || String(r.status) })); return; }
    }
    Object.assign(data, got);
    document.documentElement.lang = got.lang || "en";
    $("title").textContent = S("replay") + " — " + data.players.join(", ");
    document.addEventListener("keydown", keys);
    render();
  }
  window.addEventListener("DOMContentLoaded", load);
})();
