// The web table page (docs/WEB.md): signs in with Telegram initData or the `t` link, shows the view JSON,
// follows it by Server-Sent Events and sends the payloads of the view's actions. No text of its own: every
// label comes from the server (`strings` of the session answer, `label` and `prompt` of the view).
"use strict";
(function () {
  let tg = null; // Telegram's WebApp object, or the launch parameters of the URL fragment (telegram())
  const $ = (id) => document.getElementById(id);
  const state = { session: null, seat: null, strings: {}, view: null, picks: [], selected: null, busy: false, source: null };

  // What the page shows between views: every completed trick for HOLD_MS (or until the next tap), one
  // after the other even when several came in one view, then the deal's result until it is put away.
  const HOLD_MS = 1500;
  const shown = {
    count: {}, queue: [], hold: null, holdTimer: null, result: 0, panels: [],
    confirming: null, valuePage: 0, pageKind: "",
  };
  const S = (key, params) => Dom.format(state.strings, key, params);
  const h = Dom.el;

  // ---- Telegram: its script, or the launch parameters it would have read ----
  // Telegram opens a Mini App with its launch parameters in the fragment (#tgWebAppData=...&
  // tgWebAppVersion=...); only then is https://telegram.org/js/telegram-web-app.js loaded (the CSP allows
  // exactly that script), so link pages (Discord, terminal) never touch telegram.org. If the script does
  // not come (blocked, offline, 404), initData and the theme are read from the fragment as it would have.
  const TG_SCRIPT = "https://telegram.org/js/telegram-web-app.js";
  const TG_WAIT_MS = 5000;
  function launchParams() {
    const hash = new URLSearchParams(location.hash.replace(/^#/, ""));
    const query = new URLSearchParams(location.search);
    const launched = [...hash.keys()].some((k) => k.startsWith("tgWebApp")) || query.has("tgWebAppStartParam");
    return launched ? hash : null;
  }
  function loadScript(src, ms) {
    return new Promise((resolve) => {
      const s = document.createElement("script");
      const timer = setTimeout(() => resolve(false), ms);
      s.src = src;
      s.async = true;
      s.onload = () => { clearTimeout(timer); resolve(true); };
      s.onerror = () => { clearTimeout(timer); resolve(false); };
      document.head.append(s);
    });
  }
  function fromFragment(hash) {
    let themeParams = {};
    try { themeParams = JSON.parse(hash.get("tgWebAppThemeParams") || "{}") || {}; } catch (e) { themeParams = {}; }
    const bg = /^#([0-9a-f]{6})$/i.exec(themeParams.bg_color || "");
    let colorScheme = "light";
    if (bg) {
      const n = parseInt(bg[1], 16);
      const luma = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
      colorScheme = luma < 120 ? "dark" : "light";
    }
    return { initData: hash.get("tgWebAppData") || "", themeParams, colorScheme };
  }
  async function telegram() {
    const present = () => (window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null);
    if (present()) return present();
    const hash = launchParams();
    if (!hash) return null;
    if ((await loadScript(TG_SCRIPT, TG_WAIT_MS)) && present()) return present();
    return fromFragment(hash);
  }

  // ---- Telegram: theme, buttons, haptics ----
  const THEME = {
    bg_color: "--bg", text_color: "--text", hint_color: "--hint", link_color: "--link",
    button_color: "--button", button_text_color: "--button-text", secondary_bg_color: "--secondary-bg",
  };
  function applyTheme() {
    if (!tg) return;
    const root = document.documentElement;
    root.classList.add("tg");
    root.classList.toggle("dark", tg.colorScheme === "dark");
    for (const [k, v] of Object.entries(THEME)) {
      const value = tg.themeParams && tg.themeParams[k];
      if (value) root.style.setProperty(v, value);
    }
  }
  function haptic(kind) {
    const hf = tg && tg.HapticFeedback;
    if (!hf) return;
    if (kind === "error" || kind === "success" || kind === "warning") hf.notificationOccurred(kind);
    else if (kind === "select") hf.selectionChanged();
    else hf.impactOccurred("light");
  }
  // Your turn gets noticed: the document title says it (render), and where the device allows a short
  // vibration and a short tone, which the person can switch off (the bell in the bar; kept by the browser).
  const ALERT_KEY = "thousand.alerts";
  function alertsOn() { try { return localStorage.getItem(ALERT_KEY) !== "off"; } catch (e) { return true; } }
  let audio = null;
  function beep() {
    try {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return;
      audio = audio || new Ctx();
      const osc = audio.createOscillator(), gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.08, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + 0.18);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.2);
    } catch (e) { /* no sound here */ }
  }
  function alertTurn() {
    if (!alertsOn()) return;
    if (tg && tg.HapticFeedback) haptic("success");
    else if (navigator.vibrate) { try { navigator.vibrate(120); } catch (e) { /* not allowed */ } }
    beep();
  }
  function alertToggle() {
    const on = alertsOn();
    const label = on ? S("alerts_on") : S("alerts_off");
    return h("button", { type: "button", class: "alerts" + (on ? "" : " off"), id: "alerts", title: label, "aria-label": label,
      "aria-pressed": on ? "true" : "false", onclick: () => {
        try { localStorage.setItem(ALERT_KEY, alertsOn() ? "off" : "on"); } catch (e) { /* private mode */ }
        render();
      } }, icon("bell", null, on ? null : "slash"));
  }
  function myTurn(v) {
    return !!v && v.me !== null && v.status === "game" && !v.finished && v.to_act === v.me;
  }

  let mainHandler = null;
  function mainButton(text, handler) {
    if (!tg || !tg.MainButton) return false;
    if (mainHandler) tg.MainButton.offClick(mainHandler);
    mainHandler = null;
    if (!text) { tg.MainButton.hide(); return true; }
    mainHandler = handler;
    tg.MainButton.setText(text);
    tg.MainButton.onClick(handler);
    tg.MainButton.show();
    return true;
  }
  function backButton(visible) {
    if (!tg || !tg.BackButton) return;
    if (visible) tg.BackButton.show(); else tg.BackButton.hide();
  }
  function onBack() {
    // Back undoes the picks of a give or discard (and a card chosen with two ways to play it).
    if (state.picks.length || state.selected) { state.picks = []; state.selected = null; render(); return; }
  }

  // ---- talking to the server ----
  async function post(path, body) {
    const r = await fetch(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      credentials: "omit", cache: "no-store",
    });
    let data = {};
    try { data = await r.json(); } catch (e) { data = {}; }
    return { status: r.status, data };
  }

  async function signIn() {
    const params = new URLSearchParams(location.search);
    const t = params.get("t");
    let body;
    if (tg && tg.initData) {
      body = { init_data: tg.initData };
      if (t) body.start = t;
    } else if (t) {
      body = { link: t };
    } else {
      return "none";
    }
    const { status, data } = await post("/api/session", body);
    if (status === 404 && tg && tg.initData && !t) return "none"; // the Mini App opened with no table
    if (status !== 200) { fail(data.error || String(status)); return false; }
    state.session = data.session;
    state.seat = data.seat;
    state.strings = data.strings || {};
    document.documentElement.lang = data.lang || "en";
    return true;
  }

  function fail(message) {
    const app = $("app");
    $("playnow").hidden = true;
    app.hidden = false;
    app.replaceChildren(h("p", { class: "error", text: message || "401" }));
    mainButton(null);
  }

  // The session token never goes in a URL (proxy logs keep URLs): the view comes by POST, and the event
  // stream opens with a single-use ticket that lives 30 s. A ticket cannot be reused, so the page (not
  // EventSource) reconnects after an error, with a new ticket and a growing pause.
  let retryMs = 1000;
  async function listen() {
    let ticket = null;
    try {
      const { status, data } = await post("/api/ticket", { session: state.session });
      if (status === 401) { fail(data.error || S("connection_lost")); return; }
      ticket = data.ticket;
    } catch (e) { ticket = null; }
    if (!ticket) { reconnect(); return; }
    const es = new EventSource("/api/events?ticket=" + encodeURIComponent(ticket));
    state.source = es;
    es.addEventListener("view", (ev) => {
      retryMs = 1000;
      notice(null);
      const view = JSON.parse(ev.data);
      if (state.view && view.version === state.view.version) return;
      show(view);
    });
    es.addEventListener("gone", () => { es.close(); state.source = null; fail(S("connection_lost")); });
    es.addEventListener("error", () => {
      if (state.source !== es) return;
      es.close();
      state.source = null;
      reconnect();
    });
  }
  function reconnect() {
    notice(S("reconnecting"), true);
    setTimeout(listen, retryMs);
    retryMs = Math.min(retryMs * 2, 15000);
  }

  async function act(payload) {
    if (state.busy) return;
    state.busy = true;
    if (shown.panels.length) { shown.panels = []; render(); } // acting puts the last deal's result away
    haptic("tap");
    try {
      const { status, data } = await post("/api/act", { session: state.session, payload });
      if (data.ok && data.review) notice(data.review, true); // the person's own review of a deal
      else if (data.ok) { state.picks = []; state.selected = null; notice(null); }
      else { haptic("error"); notice(data.error || String(status)); }
    } catch (e) {
      notice(S("connection_lost"));
    } finally {
      state.busy = false;
    }
  }

  let noticeTimer = null;
  function notice(text, soft) {
    const n = $("notice");
    if (!n) return;
    clearTimeout(noticeTimer);
    if (!text) { n.hidden = true; n.textContent = ""; return; }
    n.textContent = text;
    n.hidden = false;
    if (!soft) noticeTimer = setTimeout(() => { n.hidden = true; }, 6000);
  }

  // ---- drawing ----
  function nameOf(seat) {
    const v = state.view;
    return v && v.seats[seat] ? v.seats[seat].name : String(seat);
  }

  function show(view) {
    const before = state.view;
    const changed = !before || before.version !== view.version;
    state.view = view;
    if (changed) { state.picks = []; state.selected = null; shown.confirming = null; }
    follow(before, view);
    if (before && myTurn(view) && !myTurn(before)) alertTurn();
    render();
  }

  function render() {
    const v = state.view;
    if (!v) return;
    $("app").dataset.version = String(v.version);
    $("app").dataset.phase = v.phase || "";
    $("app").dataset.deal = String(v.deal || 0);
    $("app").dataset.tricks = String((v.tricks || []).length);
    $("app").dataset.contract = String(v.contract || 0);
    $("title").textContent = v.heading || v.title || v.table_id;
    const gate = between(v);
    $("app").classList.toggle("between", gate);
    $("app").classList.toggle("result-up", gate && shown.panels.length > 0);
    document.title = (myTurn(v) ? S("your_turn") + " · " : "") + (v.heading || "1000");
    renderFacts(v);
    renderTimer();
    renderSeats(v);
    renderFelt(v);
    renderResult(v);
    renderPrompt(v);
    renderActions(v);
    renderHand(v);
    renderSheet(v);
    renderSocial(v);
  }

  function fact(label, ...value) {
    return h("span", { class: "fact" }, label ? label + ": " : "", ...value);
  }

  function renderFacts(v) {
    const out = [];
    if (v.deal) out.push(fact(S("deal"), h("b", { text: String(v.deal) })));
    // Between deals the bar tells nothing of the next deal's auction either (the result is read first).
    const gate = between(v);
    if (v.phase && !gate) out.push(h("span", { class: "fact phase", text: S("phase." + v.phase) }));
    if (v.trump && !gate) out.push(fact(S("trump"), Cards.suit(v.trump, state.strings)));
    if (gate) { /* nothing of the next deal's auction */ }
    else if (v.contract) out.push(fact(S("contract"), h("b", { text: String(v.contract) })));
    else if (v.bid) out.push(fact(S("bid"), h("b", { text: String(v.bid) })));
    if (v.declarer >= 0 && !gate) out.push(fact(S("declarer"), h("b", { text: nameOf(v.declarer) })));
    if (v.me === null) out.push(h("span", { class: "fact", text: S("spectator") }));
    if (v.rating) {
      // "1500?" and the points explain themselves (a tooltip; the legend under the score sheet says it too).
      const help = S("rating_help") + (v.rating.provisional ? " " + S("provisional_help") : "");
      out.push(h("span", { class: "fact rating-fact", title: help, "aria-label": S("rating") + " " + v.rating.rating + ". " + help },
        S("rating") + ": ", h("b", { class: "rating", text: String(v.rating.rating) + (v.rating.provisional ? "?" : "") })));
    }
    out.push(h("span", { class: "fact timer", id: "timer", hidden: true, title: S("time_left") }));
    out.push(alertToggle());
    $("facts").replaceChildren(...out);
  }

  function renderSeats(v) {
    const order = [];
    const n = v.seats.length;
    const first = v.me === null ? 0 : v.me;
    for (let i = 0; i < n; i++) order.push((first + i) % n);
    const boxes = order.map((s) => {
      const seat = v.seats[s];
      const cls = ["seat"];
      if (s === v.to_act) cls.push("to-act");
      if (s === v.me) cls.push("me");
      if (seat.active === false) cls.push("inactive");
      const line = h("div", { class: "line" });
      line.append(h("span", {}, S("total") + " ", h("b", { text: String(seat.total) })));
      // Between deals (a result on show) the seats tell nothing of the next deal yet.
      const gate = between(v);
      if (seat.points && !gate) line.append(h("span", { class: "taken", title: S("points_help") }, "+", h("b", { text: String(seat.points) })));
      // Bids are the auction's: once the contract is fixed only the declarer's contract is told (a seat
      // kept "Bid 110" under a contract of 120).
      if (gate) { /* nothing of the next deal */ }
      else if (v.contract && s === v.declarer) line.append(h("span", { class: "bid" }, S("contract") + " ", h("b", { text: String(v.contract) })));
      else if (v.contract) { /* the auction is over */ }
      else if (seat.bid === 0) line.append(h("span", { class: "bid", text: S("pass") }));
      else if (seat.bid) line.append(h("span", { class: "bid" }, S("bid") + " ", h("b", { text: String(seat.bid) })));
      const marks = h("div", { class: "line" });
      if (s === v.dealer) marks.append(h("span", { class: "tag dealer", text: S("dealer") }));
      if (seat.barrel) marks.append(h("span", { class: "tag barrel", text: S("barrel") }));
      for (const m of (v.marriages && v.marriages[s]) || []) marks.append(h("span", { class: "tag", title: S("marriage") }, Cards.suit(m, state.strings)));
      const backs = h("div", { class: "backs" });
      if (s !== v.me && !gate) for (let i = 0; i < (seat.cards || 0); i++) backs.append(Cards.back());
      return h("div", { class: cls.join(" "), "data-seat": s },
        h("div", { class: "name" }, seat.name, seat.computer ? botMark() : null, seat.away ? icon("pause", S("away")) : null),
        line, marks, backs, saidBy(s));
    });
    $("seats").replaceChildren(...boxes);
  }

  // A computer's seat is marked once, by a small drawn robot (an emoji needs a font a plain Debian lacks).
  function botMark() {
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 16 16");
    svg.setAttribute("class", "bot");
    svg.setAttribute("role", "img");
    const title = document.createElementNS(NS, "title");
    title.textContent = S("computer");
    svg.append(title);
    for (const [tag, attrs] of [
      ["line", { x1: 8, y1: 1.5, x2: 8, y2: 4, class: "wire" }], ["circle", { cx: 8, cy: 1.5, r: 1.2 }],
      ["rect", { x: 2.5, y: 4, width: 11, height: 9, rx: 2.5 }],
      ["circle", { cx: 5.8, cy: 8, r: 1.3, class: "eye" }], ["circle", { cx: 10.2, cy: 8, r: 1.3, class: "eye" }],
      ["rect", { x: 5.5, y: 10.6, width: 5, height: 1, rx: 0.5, class: "eye" }],
    ]) {
      const e = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
      svg.append(e);
    }
    return svg;
  }

  // Small marks the page draws itself: an emoji (⏱ ⏸ 🛢 ⚡ 🔔) is an empty box where the system has no
  // emoji font (Debian's chromium), so none is used. 16 x 16, in the colour of the text around it.
  const ICONS = {
    clock: [["circle", { cx: 8, cy: 9, r: 5.6, class: "stroke" }], ["path", { d: "M8 6v3.2l2.2 1.4", class: "stroke" }],
      ["rect", { x: 6.5, y: 1, width: 3, height: 1.8, rx: 0.6 }]],
    pause: [["rect", { x: 3.5, y: 3, width: 3, height: 10, rx: 0.8 }], ["rect", { x: 9.5, y: 3, width: 3, height: 10, rx: 0.8 }]],
    bolt: [["path", { d: "M9.5 1 3 9.2h4.2L6.2 15 13 6.6H8.6z" }]],
    barrel: [["path", { d: "M4.2 2h7.6c1.6 3.6 1.6 8.4 0 12H4.2c-1.6-3.6-1.6-8.4 0-12z" }],
      ["path", { d: "M3.4 5.6h9.2M3.4 10.4h9.2", class: "hoop" }]],
    bell: [["path", { d: "M8 1.6c-2.5 0-4.1 2-4.1 4.5v3.1L2.4 11.6h11.2l-1.5-2.4V6.1c0-2.5-1.6-4.5-4.1-4.5z" }],
      ["path", { d: "M6.4 12.6a1.6 1.6 0 0 0 3.2 0z" }]],
    slash: [["path", { d: "M2 2l12 12", class: "stroke" }]],
  };
  function icon(name, title, more) {
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 16 16");
    svg.setAttribute("class", "icon " + name);
    svg.setAttribute("data-icon", name);
    if (title) {
      svg.setAttribute("role", "img");
      const t = document.createElementNS(NS, "title");
      t.textContent = title;
      svg.append(t);
    } else svg.setAttribute("aria-hidden", "true");
    for (const [tag, attrs] of [...ICONS[name], ...(more ? ICONS[more] : [])]) {
      const e = document.createElementNS(NS, tag);
      for (const [k, val] of Object.entries(attrs)) e.setAttribute(k, String(val));
      svg.append(e);
    }
    return svg;
  }

  function played(seat, card, win) {
    return h("div", { class: "played" + (win ? " win" : ""), "data-seat": seat },
      card ? Cards.face(card, state.strings) : Cards.back(), h("span", { text: nameOf(seat) }));
  }

  // ---- completed tricks and the deal's result ----
  // The view carries every trick taken in the deal (`tricks`) and, while the next deal has none yet, the
  // deals that ended since (`recent`: their tricks and results): what this page has not shown yet is
  // queued in order, a deal's result after its last trick.
  function follow(before, v) {
    if (before && before.status === "finished" && v.status !== "finished") {
      // Play again: a new game at this table counts its deals from 1 again.
      clearTimeout(shown.holdTimer);
      Object.assign(shown, { count: {}, queue: [], hold: null, result: 0, panels: [] });
    }
    const fresh = !before; // the first view of a page replays nothing: it shows the table as it is
    const add = (deal, tricks) => {
      for (let i = shown.count[deal] || 0; i < tricks.length && !fresh; i++) shown.queue.push({ deal, index: i, trick: tricks[i] });
      shown.count[deal] = Math.max(shown.count[deal] || 0, tricks.length);
    };
    for (const item of v.recent || []) {
      add(item.deal, item.deal === v.deal ? v.tricks || [] : item.tricks || []);
      if (item.result && item.deal > shown.result) {
        // A page opened (or reloaded: a Mini App closed and opened again) before the next deal has a
        // trick shows the last result at once; its history stays on the score sheet.
        if (!fresh) shown.queue.push({ result: item.result });
        else shown.panels = [...shown.panels, item.result].slice(-3);
        shown.result = item.deal;
      }
    }
    add(v.deal, v.tricks || []);
    pump();
  }
  function pump() {
    if (shown.hold) return;
    while (shown.queue.length && shown.queue[0].result) shown.panels = [...shown.panels, shown.queue.shift().result].slice(-3);
    const next = shown.queue.shift();
    if (next) {
      shown.hold = next;
      shown.holdTimer = setTimeout(release, HOLD_MS);
    }
    render();
  }
  function release() {
    clearTimeout(shown.holdTimer);
    shown.hold = null;
    pump();
  }
  function lastTrick(v) {
    const mine = v.tricks || [];
    if (mine.length) return { deal: v.deal, index: mine.length - 1, trick: mine[mine.length - 1] };
    for (const item of (v.recent || []).slice().reverse()) {
      const t = item.tricks || [];
      if (t.length) return { deal: item.deal, index: t.length - 1, trick: t[t.length - 1] };
    }
    return null;
  }
  function showLast() {
    const last = lastTrick(state.view);
    if (!last || shown.hold) return;
    shown.hold = Object.assign({ again: true }, last);
    shown.holdTimer = setTimeout(release, HOLD_MS);
    render();
  }
  function completed(item) {
    const t = item.trick;
    return h("div", { class: "completed", "data-trick": item.deal + ":" + item.index, "data-winner": t.winner },
      h("div", { class: "cards" }, ...t.cards.map((p) => played(p.seat, p.card, p.seat === t.winner))),
      h("div", { class: "taken", text: nameOf(t.winner) + " +" + t.points }));
  }

  // Between deals: a result is on show (or still to come after the last tricks of its deal). The next
  // deal asks nothing of the person until they put it away (Continue): its auction does not run under
  // the panel, and a quick tap during the last tricks cannot skip the result.
  function between(v) {
    if (!v || v.finished) return false;
    if (shown.panels.length) return true;
    if (shown.queue.some((q) => q.result || q.deal < v.deal)) return true;
    return !!(shown.hold && !shown.hold.again && shown.hold.deal < v.deal);
  }

  function renderResult(v) {
    const box = $("result");
    if (!shown.panels.length) { box.replaceChildren(); box.hidden = true; return; }
    box.hidden = false;
    const out = shown.panels.map(panel);
    if (!v.finished) out.push(button(S("continue"), () => { shown.panels = []; render(); }, "", { "data-kind": "close-result" }));
    box.replaceChildren(...out);
  }
  function panel(r) {
    const head = h("tr", {}, h("th"), h("th", { text: S("points") }), h("th", { text: S("score") }), h("th", { text: S("total") }));
    const rows = r.rows.map((row) => {
      const pts = h("td", { class: "points" }, row.points === null ? "—" : String(row.points));
      for (const m of row.marriages) pts.append(" ", h("span", { class: "tag", title: S("marriage") }, Cards.suit(m, state.strings)));
      const score = h("td", { class: "score" }, h("b", { text: (row.score > 0 ? "+" : "") + row.score }));
      const why = [row.rounding, row.reason].filter(Boolean).join("; ");
      if (why) score.append(h("div", { class: "why", text: why }));
      const seat = state.view.seats[row.seat] || {};
      const name = h("td", {}, row.name, seat.computer ? botMark() : null, row.barrel ? icon("barrel", S("barrel")) : null, row.bolt ? icon("bolt", S("bolt")) : null);
      return h("tr", { "data-seat": row.seat, class: row.seat === r.declarer ? "declarer" : "" },
        name, pts, score, h("td", { class: "total", text: String(row.total) }));
    });
    return h("div", { class: "panel", "data-deal": r.deal },
      h("div", { class: "title", text: S("result_title", { number: r.deal }) }),
      h("p", { class: "summary" + (r.made === true ? " made" : r.made === false ? " failed" : ""), text: r.summary }),
      h("table", {}, h("thead", {}, head), h("tbody", {}, ...rows)),
      ...r.notes.map((n) => h("p", { class: "note", text: n })));
  }

  function renderFelt(v) {
    if (shown.hold) {
      // The trick taken stays a moment; the next one, if it has begun, shows under it (a player whose
      // turn it is sees what was led before tapping a card).
      const now = (v.trick || []).length ? h("div", { class: "now" },
        h("div", { class: "label", text: S("trick") }), ...v.trick.map((p) => played(p.seat, p.card, false))) : null;
      $("trick").replaceChildren(completed(shown.hold), ...(now ? [now] : []));
    }
    else $("trick").replaceChildren(...(v.trick || []).map((p) => played(p.seat, p.card, false)));
    const talon = [];
    // The talon lies on the felt until the declarer takes it; then the cards are in their hand, and the
    // felt says in words what they took (until the first trick is over): drawn there, they looked like
    // cards in play.
    const open = ["bidding", "blind", "sale", "talon"].includes(v.phase);
    if (v.talon_taken && !open) {
      talon.push(h("p", { class: "talon-taken", "data-seat": v.talon_taken.seat, text: v.talon_taken.text }));
    } else if (v.talon && v.talon.length && open) {
      talon.push(h("div", { class: "label", text: S("talon") }));
      for (const c of v.talon) talon.push(Cards.face(c, state.strings));
    } else if (v.talon_size && (v.phase === "bidding" || v.phase === "blind" || v.phase === "sale" || v.phase === "talon")) {
      talon.push(h("div", { class: "label", text: S("talon") }));
      for (let i = 0; i < v.talon_size; i++) talon.push(Cards.back());
    }
    $("talon").replaceChildren(...talon);
    const last = [];
    if (v.last_trick && (!v.trick || v.trick.length === 0) && !shown.hold) {
      last.push(h("div", { class: "label", text: S("last_trick") }));
      for (const p of v.last_trick.cards) last.push(played(p.seat, p.card, p.seat === v.last_trick.winner));
    } else if (lastTrick(v) && !shown.hold) {
      // While a trick forms (or a new deal begins) the last one taken is a tap away.
      last.push(button(S("last_trick"), showLast, "quiet small", { "data-kind": "last-trick", "data-keep": "1" }));
    }
    $("last").replaceChildren(...last);
  }

  function renderPrompt(v) {
    const p = $("prompt");
    const mine = v.me !== null && v.actions && v.actions.length > 0;
    // The service's prompt for the player to act is a fragment made to follow "Your turn:" (as in chat).
    let text = mine && v.prompt ? S("your_turn") + ": " + v.prompt : v.prompt || "";
    if (v.finished) {
      text = S("game_over");
      if (v.winner && v.winner.length) text += " — " + S("winner", { names: v.winner.map(nameOf).join(", ") });
    } else if (!mine && !text && v.to_act >= 0 && v.status === "game") {
      text = S("waiting_for", { name: nameOf(v.to_act) });
    }
    if (mine && pickKind(v) === "give") {
      // The prompt follows the picks: only the players still without a card are named; once every card
      // is picked it says what is left to do (the confirm names what it gives).
      const used = new Set(state.picks.map((p) => p.target));
      const left = v.actions.find((a) => a.kind === "give").targets.filter((t) => !used.has(t));
      const ready = giveMatch(v);
      text = S("your_turn") + ": " + (left.length ? S("give_card_to", { name: left.map(nameOf).join(", ") }) + " " + pickHint(v)
        : ready ? S("give_ready", { button: ready.label }) : S("choose_card"));
    } else if (mine && pickKind(v)) text = (text ? text + " " : "") + pickHint(v);
    if (between(v)) text = shown.panels.length ? S("next_deal", { number: v.deal }) : "";
    p.textContent = text;
    p.className = "prompt" + (mine ? " mine" : "");
    if (v.finished && v.public) p.append(button(S("play_now"), openPlayNow, "playnow-again", { "data-kind": "play-now" }));
    if (v.finished && v.public) renderRematch(p);
  }

  // ---- Play again at a finished public table (docs/WEB.md "Play again"): the offer comes from
  // /api/rematch (asked once per table, then every 2 s while it is open); an answer goes there too; once
  // the new game started with this person in it, its session opens as Play now's seated answer does.
  const rm = { session: null, data: null, timer: null };
  function renderRematch(p) {
    p.append(h("div", { id: "rematch", class: "rematch", "data-kind": "rematch" }));
    if (rm.session !== state.session) {
      clearTimeout(rm.timer);
      Object.assign(rm, { session: state.session, data: null, timer: null });
      rematchCall(null);
    }
    drawRematch();
  }
  function drawRematch() {
    const box = $("rematch"), r = rm.data;
    if (!box) return;
    box.textContent = "";
    if (!r) return;
    box.append(h("p", { text: r.state === "open" ? r.text + " (" + r.seconds_left + " s)" : r.text }));
    box.append(h("p", { class: "rematch-people", text: r.people.map((x) => x.mark + " " + x.name).join(" · ") }));
    if (r.state !== "open") return;
    if (r.answer !== "yes") box.append(button(r.labels.yes, () => rematchCall("yes"), "", { "data-kind": "rematch-yes" }));
    if (r.answer !== "no") box.append(button(r.labels.no, () => rematchCall("no"), "", { "data-kind": "rematch-no" }));
  }
  async function rematchCall(answer) {
    clearTimeout(rm.timer);
    const session = state.session;
    let res = null;
    try { res = await post("/api/rematch", answer ? { session, answer } : { session }); } catch (e) { /* asked again */ }
    if (session !== state.session) return;
    if (res && res.status === 200) {
      rm.data = res.data.rematch;
      if (res.data.session) { seated({ session: res.data.session, seat: res.data.seat }); return; }
    }
    drawRematch();
    if (res && res.data && res.data.error && $("rematch")) $("rematch").append(h("p", { class: "error", text: res.data.error }));
    if (!res || res.status !== 200 || (rm.data && rm.data.state === "open")) rm.timer = setTimeout(() => rematchCall(null), 2000);
  }

  // A give or a discard is chosen by picking cards (and, for a give, a player for each card).
  function pickKind(v) {
    const kinds = new Set((v.actions || []).map((a) => a.kind));
    if (kinds.has("give")) return "give";
    if (kinds.has("discard")) return "discard";
    return null;
  }
  function pickHint(v) {
    if (pickKind(v) !== "give") return S("choose_card");
    return state.selected ? S("choose_player") : S("choose_card");
  }

  function giveMatch(v) {
    const gives = v.actions.filter((a) => a.kind === "give");
    if (!gives.length) return null;
    const targets = gives[0].targets;
    if (state.picks.length !== targets.length) return null;
    const chosen = {};
    for (const p of state.picks) chosen[p.target] = p.card;
    return gives.find((a) => a.targets.every((t, i) => chosen[t] === a.cards[i])) || null;
  }
  function discardMatch(v) {
    const picked = state.picks.map((p) => p.card).sort().join(" ");
    return v.actions.find((a) => a.kind === "discard" && a.cards.slice().sort().join(" ") === picked) || null;
  }

  function button(label, onclick, cls, data) {
    return h("button", Object.assign({ type: "button", class: cls || "", onclick, text: label }, data || {}));
  }

  function renderActions(v) {
    const box = $("actions");
    if (between(v)) { mainButton(null); backButton(false); box.replaceChildren(); return; }
    const out = [];
    const actions = v.actions || [];
    const kind = pickKind(v);
    let confirm = null;
    if (kind === "give") {
      const targets = actions.find((a) => a.kind === "give").targets;
      const used = new Set(state.picks.map((p) => p.target));
      const group = h("div", { class: "group pick" });
      for (const t of targets) {
        if (used.has(t)) continue;
        group.append(button(S("give_to", { name: nameOf(t) }), () => {
          if (!state.selected) return;
          state.picks.push({ card: state.selected, target: t });
          state.selected = null;
          haptic("select");
          render();
        }, "", { disabled: !state.selected, "data-target": t }));
      }
      out.push(group);
      confirm = giveMatch(v);
    } else if (kind === "discard") {
      confirm = discardMatch(v);
    }
    const cardKinds = new Set(["card", "declare", "give", "discard"]);
    const values = actions.filter((a) => (a.kind === "bid" || a.kind === "contract"));
    const others = actions.filter((a) => !cardKinds.has(a.kind) && a.kind !== "bid" && a.kind !== "contract");
    // A card with two ways to play it (plain, or declaring the marriage): the choice shows here.
    if (state.selected && !kind) {
      const group = h("div", { class: "group" });
      for (const a of actions.filter((x) => (x.kind === "card" || x.kind === "declare") && x.card === state.selected)) {
        group.append(button(a.label, () => act(a.payload), a.kind === "declare" ? "" : "quiet", { "data-kind": a.kind, "data-payload": a.payload }));
      }
      out.push(group);
    }
    if (values.length) out.push(...valueGroups(values));
    // Concede and bomb end the deal: they ask first, and sit last, set apart from the moves.
    const ending = new Set(["concede", "bomb"]);
    const moves = others.filter((a) => !ending.has(a.kind));
    const enders = others.filter((a) => ending.has(a.kind));
    if (moves.length) {
      const group = h("div", { class: "group" });
      for (const a of moves) group.append(button(a.label, () => act(a.payload), a.kind === "pass" ? "quiet" : "", { "data-kind": a.kind, "data-value": a.value, "data-payload": a.payload }));
      out.push(group);
    }
    if (confirm) {
      // Inside Telegram the MainButton sends it; the page's own button does too (and is what tests tap).
      out.push(h("div", { class: "group" }, button(confirm.label, () => act(confirm.payload), "", { "data-kind": confirm.kind, "data-payload": confirm.payload, "data-confirm": "1" })));
      mainButton(confirm.label, () => act(confirm.payload));
    } else {
      mainButton(null);
    }
    const asking = shown.confirming && enders.find((a) => a.kind === shown.confirming);
    if (asking) {
      out.push(h("div", { class: "group ask", "data-asking": asking.kind },
        h("span", { class: "question", text: S("sure_" + asking.kind) }),
        button(asking.label, () => { shown.confirming = null; act(asking.payload); }, "danger", { "data-kind": asking.kind + "-yes", "data-payload": asking.payload }),
        button(S("cancel"), () => { shown.confirming = null; render(); }, "quiet", { "data-kind": "cancel" })));
    } else if (enders.length) {
      const group = h("div", { class: "group enders" });
      for (const a of enders) group.append(button(a.label, () => { shown.confirming = a.kind; render(); }, "quiet danger-text", { "data-kind": a.kind }));
      out.push(group);
    }
    backButton(state.picks.length > 0 || !!state.selected);
    box.replaceChildren(...out);
  }

  // Bid and contract values in pages as in the chats: up to 12 at once, else pages of 8 with a row that
  // turns them (a Russian bid offers 60 values; a wall of them pushed the hand off a phone's screen).
  const VALUES_ON_ONE_PAGE = 12, PAGE_SIZE = 8;
  function valueGroups(values) {
    const make = (a) => button(a.label, () => act(a.payload), "value", { "data-kind": a.kind, "data-value": a.value, "data-payload": a.payload });
    if (values.length <= VALUES_ON_ONE_PAGE) return [h("div", { class: "group" }, ...values.map(make))];
    const pages = [];
    for (let i = 0; i < values.length; i += PAGE_SIZE) pages.push(values.slice(i, i + PAGE_SIZE));
    const kind = values[0].kind + ":" + values[0].value;
    if (shown.pageKind !== kind) { shown.pageKind = kind; shown.valuePage = 0; }
    const index = Math.min(shown.valuePage, pages.length - 1);
    const to = (i, label) => button(label, () => { shown.valuePage = i; render(); }, "quiet value", { "data-kind": "page", "data-page": i });
    const range = (p) => p[0].value + "–" + p[p.length - 1].value;
    const nav = h("div", { class: "group nav" });
    if (index >= 2) nav.append(to(0, "« " + pages[0][0].value));
    if (index >= 1) nav.append(to(index - 1, "‹ " + range(pages[index - 1])));
    if (index + 1 < pages.length) nav.append(to(index + 1, range(pages[index + 1]) + " ›"));
    if (index + 2 < pages.length) nav.append(to(pages.length - 1, pages[pages.length - 1].slice(-1)[0].value + " »"));
    return [h("div", { class: "group values" }, ...pages[index].map(make)), nav];
  }

  // The running turn's countdown (the view carries the deadline; the page counts down by the second).
  function renderTimer() {
    const v = state.view;
    const el = $("timer");
    if (!el) return;
    const left = v && v.turn_deadline && v.to_act >= 0 && !v.finished ? Math.ceil(v.turn_deadline - Date.now() / 1000) : null;
    if (left === null) { el.hidden = true; el.textContent = ""; return; }
    const s = Math.max(0, left);
    el.hidden = false;
    el.replaceChildren(icon("clock"), h("span", { class: "left", text: Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0") }));
    el.classList.toggle("urgent", s <= 10);
  }

  function renderHand(v) {
    const box = $("hand");
    if (!v.hand || between(v)) { box.replaceChildren(); return; }
    const actions = v.actions || [];
    const legal = new Set(v.legal_cards || []);
    const kind = pickKind(v);
    const picked = new Map(state.picks.map((p) => [p.card, p.target]));
    box.className = "hand" + (legal.size && !kind ? " playing" : "") + (legal.size || kind ? " choosing" : "") + (kind === "give" ? " giving" : "");
    const pickable = new Set();
    if (kind) for (const a of actions) for (const c of a.cards || []) if (a.kind === kind) pickable.add(c);
    const cards = v.hand.map((code) => {
      const enabled = kind ? pickable.has(code) : legal.has(code);
      const cls = ["cardbtn"];
      if (state.selected === code || (kind === "discard" && picked.has(code))) cls.push("selected");
      const attrs = { type: "button", class: cls.join(" "), "data-card": code, disabled: !enabled, "aria-pressed": state.selected === code ? "true" : null };
      // A given card names its player under it, in the strip of the card the next one leaves in sight
      // (the whole card's width, on a phone, was under the next card).
      let tag = null;
      if (kind === "give" && picked.has(code)) {
        cls.push("given"); attrs.class = cls.join(" "); attrs["data-to"] = nameOf(picked.get(code));
        tag = h("span", { class: "to", title: nameOf(picked.get(code)), text: nameOf(picked.get(code)) });
      }
      attrs.onclick = () => tapCard(code);
      return h("button", attrs, Cards.face(code, state.strings), tag);
    });
    box.replaceChildren(...cards);
    // Cards overlap only as much as the row needs to fit the screen (58 px each on a phone, larger on a
    // wide screen: the width comes from the style sheet; 3 px apart otherwise).
    const cardWidth = parseFloat(getComputedStyle(box).getPropertyValue("--hand-card")) || 58;
    const n = cards.length, width = box.clientWidth || 360;
    const overlap = n > 1 ? Math.max(-3, (n * cardWidth - width) / (n - 1)) : 0;
    box.style.setProperty("--overlap", overlap.toFixed(1) + "px");
    box.style.setProperty("--strip", Math.max(0, cardWidth - Math.max(0, overlap)).toFixed(1) + "px");
  }

  function tapCard(code) {
    const v = state.view;
    const kind = pickKind(v);
    if (kind === "give") {
      const i = state.picks.findIndex((p) => p.card === code);
      if (i >= 0) state.picks.splice(i, 1);
      else state.selected = state.selected === code ? null : code;
      haptic("select");
      render();
      return;
    }
    if (kind === "discard") {
      const i = state.picks.findIndex((p) => p.card === code);
      const size = v.actions.find((a) => a.kind === "discard").cards.length;
      if (i >= 0) state.picks.splice(i, 1);
      else if (state.picks.length < size) state.picks.push({ card: code });
      haptic("select");
      render();
      return;
    }
    const ways = (v.actions || []).filter((a) => (a.kind === "card" || a.kind === "declare") && a.card === code);
    if (ways.length === 1) { act(ways[0].payload); return; }
    if (ways.length > 1) { state.selected = state.selected === code ? null : code; haptic("select"); render(); }
  }

  // The score sheet with the chats' marks (✓ made, ✗ failed, • bomb or concession at the declarer's
  // total; a bolt and the barrel drawn), each deal a tap away from its whole result (the view carries
  // every finished deal's result: a reload or a page opened later shows them all).
  function renderSheet(v) {
    $("sheet-title").textContent = S("score_sheet");
    const body = $("sheet-body");
    const n = v.seats.length;
    const history = v.history || [];
    const head = h("tr", {}, h("th", { text: S("deal") }), ...v.seats.map((s) => h("th", { text: s.name })));
    const rows = [];
    (v.scores || []).forEach((totals, i) => {
      const r = history[i] || null;
      const open = r && shown.openDeal === r.deal;
      const cells = totals.map((t, s) => {
        const row = r ? r.rows[s] || {} : {};
        const td = h("td", { "data-seat": s }, String(t));
        if (r && s === r.declarer && r.ending !== "redeal") {
          const mark = r.made === true ? "✓" : r.made === false ? "✗" : "•";
          td.append(h("span", { class: "mark " + (r.made === true ? "made" : r.made === false ? "failed" : "other"), text: mark }));
        }
        if (row.bolt) td.append(icon("bolt", S("bolt")));
        if (row.barrel) td.append(icon("barrel", S("barrel")));
        return td;
      });
      const deal = r ? h("button", { type: "button", class: "deal-link", "data-deal": r.deal, "aria-expanded": open ? "true" : "false",
        title: S("result_title", { number: r.deal }),
        onclick: () => { shown.openDeal = open ? null : r.deal; render(); } }, String(i + 1)) : String(i + 1);
      rows.push(h("tr", { class: "deal-row" + (open ? " open" : ""), "data-deal": i + 1 }, h("td", {}, deal), ...cells));
      if (open) {
        const review = r.review ? h("button", { type: "button", class: "review-deal", "data-deal": r.deal, onclick: () => act(r.review), text: S("review") }) : "";
        rows.push(h("tr", { class: "deal-result" }, h("td", { colspan: n + 1 }, h("div", { class: "result sheet-result" }, panel(r)), review)));
      }
    });
    const total = h("tr", { class: "total" }, h("td", { text: S("total") }), ...v.seats.map((s) => h("td", { text: String(s.total) })));
    const table = h("table", {}, h("thead", {}, head), h("tbody", {}, ...rows, total));
    // The chart once a deal is scored (before, it would be empty axes).
    if (v.scores && v.scores.length) {
      const marks = h("p", { class: "marks" }, S("sheet_marks"), " · ", icon("bolt"), " " + S("bolt"), " · ", icon("barrel"), " " + S("barrel"));
      const help = h("p", { class: "marks", text: S("sheet_tap") + " " + S("points_legend") + (v.rating ? " " + S("rating_help") : "") });
      body.replaceChildren(table, marks, help, h("div", { class: "label", text: S("chart") }), chart(v.scores, n), legend(v));
    } else body.replaceChildren(table);
  }

  function legend(v) {
    return h("div", { class: "legend" }, ...v.seats.map((s, i) => h("span", {}, h("i", { class: "s" + i }), s.name)));
  }

  function chart(scores, n) {
    const NS = "http://www.w3.org/2000/svg";
    const W = 320, H = 160, L = 34, B = 18, T = 8, R = 8;
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("class", "chart");
    const all = [0, 1000];
    for (const row of scores) all.push(...row);
    const lo = Math.min(...all), hi = Math.max(...all);
    const deals = Math.max(scores.length, 1);
    const x = (i) => L + (i / deals) * (W - L - R);
    const y = (s) => T + (1 - (s - lo) / (hi - lo || 1)) * (H - T - B);
    const add = (name, attrs, text) => {
      const e = document.createElementNS(NS, name);
      for (const [k, val] of Object.entries(attrs)) e.setAttribute(k, String(val));
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    };
    for (const g of [lo, 0, 500, 1000].filter((g, i, a) => a.indexOf(g) === i && g >= lo && g <= hi)) {
      add("line", { x1: L, x2: W - R, y1: y(g), y2: y(g), class: "grid" });
      add("text", { x: L - 4, y: y(g) + 3, "text-anchor": "end" }, String(g));
    }
    add("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" });
    add("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" });
    for (let i = 1; i <= scores.length; i++) add("text", { x: x(i), y: H - 5, "text-anchor": "middle" }, String(i));
    for (let s = 0; s < n; s++) {
      const pts = [[x(0), y(0)], ...scores.map((row, i) => [x(i + 1), y(row[s])])];
      add("polyline", { points: pts.map((p) => p.join(",")).join(" "), class: "s" + s });
    }
    return svg;
  }

  // ---- strangers at a public table: the chats' fixed phrases, block and report (docs/WEB.md) ----
  // The page is sent no messages: it asks for the table's recent phrases every few seconds and shows
  // each once, for a moment, under the seat that said it.
  const social = { choices: null, loading: false, seen: new Set(), said: {}, timer: null, notice: "", open: false };
  const PHRASE_POLL_MS = 2500, PHRASE_SHOW_MS = 6000;
  async function socialCall(command, args) {
    try {
      const { data } = await post("/api/social", { session: state.session, command, args });
      social.notice = data.text || data.error || "";
    } catch (e) { social.notice = S("connection_lost"); }
    render();
  }
  async function pollPhrases() {
    clearTimeout(social.timer);
    const v = state.view;
    if (!v || !v.public || !state.session) return;
    try {
      const { status, data } = await post("/api/phrases", { session: state.session });
      if (status === 200) {
        for (const p of data.phrases || []) {
          if (social.seen.has(p.id)) continue;
          social.seen.add(p.id);
          social.said[p.seat] = { text: p.text, until: Date.now() + PHRASE_SHOW_MS, id: p.id };
          setTimeout(render, PHRASE_SHOW_MS + 50);
        }
        render();
      }
    } catch (e) { /* the next poll */ }
    social.timer = setTimeout(pollPhrases, PHRASE_POLL_MS);
  }
  function renderSocial(v) {
    const box = $("social");
    if (!box) return;
    const show = v.public && v.me !== null && v.status !== "lobby";
    box.hidden = !show;
    if (!show) { box.replaceChildren(); return; }
    if (!social.timer && !social.polling) { social.polling = true; pollPhrases(); }
    if (!social.choices) {
      if (!social.loading) {
        social.loading = true;
        post("/api/social/choices", { session: state.session }).then(({ data }) => { social.choices = data; render(); })
          .catch(() => { social.loading = false; });
      }
      return;
    }
    const phrases = h("div", { class: "phrases", role: "group", "aria-label": S("say") },
      ...social.choices.phrases.map((p) => button(p.name, () => socialCall("say", [p.value]), "quiet", { "data-phrase": p.value })));
    const others = v.seats.map((s, i) => ({ s, i })).filter(({ s, i }) => i !== v.me && !s.computer);
    const parts = [phrases];
    if (others.length) {
      const who = select("social-player", others.map(({ s, i }) => ({ value: i + 1, name: s.name })), social.player || "");
      who.addEventListener("change", () => { social.player = who.value; });
      const why = select("social-reason", social.choices.reasons, social.reason || "");
      why.addEventListener("change", () => { social.reason = why.value; });
      const act = (cmd) => () => {
        social.player = who.value; social.reason = why.value;
        socialCall(cmd, cmd === "report" ? [who.value, why.value] : [who.value]);
      };
      const details = h("details", { class: "safety", open: social.open },
        h("summary", { text: S("safety") }),
        h("div", { class: "row" }, h("label", {}, S("player"), who), h("label", {}, S("reason"), why)),
        h("div", { class: "row buttons" },
          button(S("block"), act("block"), "quiet", { "data-kind": "block-player" }),
          button(S("unblock"), act("unblock"), "quiet", { "data-kind": "unblock-player" }),
          button(S("report"), act("report"), "quiet danger-text", { "data-kind": "report-player" })));
      details.addEventListener("toggle", () => { social.open = details.open; });
      parts.push(details);
    }
    parts.push(h("p", { class: "social-notice", id: "social-notice", role: "status", text: social.notice }));
    box.replaceChildren(...parts);
  }
  function saidBy(seat) {
    const said = social.said[seat];
    return said && said.until > Date.now() ? h("div", { class: "said", "data-said": said.id, text: said.text }) : null;
  }

  async function start() {
    // A tap anywhere ends the completed trick on show (the next one, if any, follows); the last-trick
    // button itself is the exception (it shows one).
    // Released after the tap's own handler ran (redrawing first would replace the button tapped).
    document.addEventListener("click", (e) => {
      if (shown.hold && !(e.target.closest && e.target.closest("[data-keep]"))) setTimeout(release, 0);
    }, true);
    setInterval(renderTimer, 1000);
    tg = await telegram();
    if (tg) {
      applyTheme();
      tg.onEvent && tg.onEvent("themeChanged", applyTheme);
      tg.BackButton && tg.BackButton.onClick(onBack);
      tg.ready && tg.ready();
      tg.expand && tg.expand();
    }
    const signed = await signIn();
    if (signed === "none") { await openPlayNow(); return; }
    if (!signed) return;
    await openTable();
  }

  async function openTable() {
    try {
      const { status, data } = await post("/api/view", { session: state.session });
      if (status === 200) show(data);
    } catch (e) { /* the event stream brings it */ }
    listen();
  }

  // ---- Play now (docs/WEB.md): a page without a table, or after a public game, joins the queue ----
  // Who plays: the page's session or Telegram initData, else a guest whose signed player token the
  // browser keeps (localStorage); the page asks its status every 2 s while it waits (that keeps its
  // place), and when seated it gets a session for the public table and shows it as any table.
  const PLAYER_KEY = "thousand.player";
  const POLL_MS = 2000;
  const pn = { data: null, player: null, guest: false, options: null, timer: null, status: null, hideOfferUntil: 0, notice: "" };
  function stored() { try { return localStorage.getItem(PLAYER_KEY); } catch (e) { return null; } }
  function store(token) { try { if (token) localStorage.setItem(PLAYER_KEY, token); else localStorage.removeItem(PLAYER_KEY); } catch (e) { /* private mode */ } }

  async function openPlayNow() {
    if (state.source) { state.source.close(); state.source = null; }
    // The language: the one chosen on the panel before (kept by the browser), else the browser's.
    const chosen = storedLang();
    const body = { lang: chosen || navigator.language || "en" };
    if (chosen) body.chosen = true;
    if (state.session) body.session = state.session;
    else if (tg && tg.initData) body.init_data = tg.initData;
    else if (stored()) body.player = stored();
    let { status, data } = await post("/api/play", body);
    if (status === 401 && body.player) { store(null); delete body.player; ({ status, data } = await post("/api/play", body)); }
    if (status !== 200) { fail(data.error || String(status)); return; }
    pn.data = data;
    state.strings = data.strings || state.strings;
    document.documentElement.lang = data.lang || "en";
    pn.player = data.player || null;
    pn.guest = !data.me || data.me.platform === "web";
    if (pn.player && pn.guest) store(pn.player);
    $("app").hidden = true;
    $("playnow").hidden = false;
    document.title = S("play_now") + " · 1000";
    drawPanel();
    if (pn.player) await queueCall("/api/queue/status");
  }

  const LANG_KEY = "thousand.lang";
  function storedLang() { try { return localStorage.getItem(LANG_KEY); } catch (e) { return null; } }
  // The panel's language list (each language named in itself): the labels, the rules' names and the
  // guest's table follow the choice.
  function languagePicker(d) {
    const sel = select("pn-lang", d.languages || [], d.lang);
    sel.addEventListener("change", async () => {
      try { localStorage.setItem(LANG_KEY, sel.value); } catch (e) { /* private mode */ }
      const keep = pn.options;
      await openPlayNow();
      pn.options = keep;
      drawPanel();
    });
    return h("div", { class: "lang" }, sel);
  }

  function drawPanel() {
    const d = pn.data;
    const box = $("playnow");
    const out = [h("div", { class: "head" }, h("h1", { text: S("play_now") }), d.languages ? languagePicker(d) : null)];
    if (!d.available) { out.push(h("p", { class: "notice", text: S("play_none") })); box.replaceChildren(...out); return; }
    if (d.me && !pn.guest) out.push(h("p", { class: "who", text: S("playing_as", { name: d.me.name }) }));
    out.push(...ratingsOf(d.ratings || []));
    const st = pn.status;
    if (st && (st.state === "waiting" || st.state === "found")) out.push(statusBox(st));
    else out.push(form(d));
    out.push(h("p", { class: "notice", id: "pn-notice", role: "alert", text: pn.notice || "" }));
    box.replaceChildren(...out);
  }

  function ratingsOf(list) {
    if (!list.length) return [];
    return [h("div", { class: "ratings", id: "pn-ratings" }, ...list.map((r) => h("div", { "data-preset": r.preset },
      r.name + " · " + S("rating") + " ", h("b", { text: String(r.rating) + (r.provisional ? "?" : "") }),
      " · " + S("games_played", { n: r.games }),
      r.changes.length ? h("span", { class: "changes", text: "  " + r.changes.map((c) => (c > 0 ? "+" : c < 0 ? "−" : "±") + Math.abs(c)).join(", ") }) : null)))];
  }

  function select(id, options, value) {
    const sel = h("select", { id });
    for (const o of options) sel.append(h("option", { value: String(o.value), text: o.name, selected: String(o.value) === String(value) }));
    return sel;
  }

  function form(d) {
    const chosen = pn.options || { preset: "any", players: 3, pace: "normal" };
    const presetSel = select("pn-preset", d.presets, chosen.preset);
    const counts = () => (d.presets.find((p) => p.value === presetSel.value) || d.presets[0]).players;
    const playersSel = select("pn-players", counts().map((n) => ({ value: n, name: String(n) })), chosen.players);
    presetSel.addEventListener("change", () => {
      const keep = Number(playersSel.value);
      const list = counts();
      playersSel.replaceChildren(...list.map((n) => h("option", { value: String(n), text: String(n), selected: n === (list.includes(keep) ? keep : list.includes(3) ? 3 : list[0]) })));
    });
    const paceSel = select("pn-pace", d.paces, chosen.pace);
    const fields = [];
    if (pn.guest) {
      const name = h("input", { id: "pn-name", type: "text", maxlength: 32, autocomplete: "nickname", required: true, value: (d.me && d.me.name) || "" });
      fields.push(h("label", {}, S("your_name"), name));
    }
    fields.push(h("div", { class: "row" },
      h("label", {}, S("rules"), presetSel), h("label", {}, S("players"), playersSel), h("label", {}, S("pace"), paceSel)));
    if (d.pace_help) fields.push(h("p", { class: "help", id: "pn-pace-help", text: d.pace_help }));
    const find = h("button", { type: "submit", id: "pn-find", text: S("find_game") });
    const f = h("form", { id: "pn-form" }, ...fields, find);
    f.addEventListener("submit", (e) => {
      e.preventDefault();
      pn.options = { preset: presetSel.value, players: Number(playersSel.value), pace: paceSel.value };
      join(pn.guest ? $("pn-name").value : null);
    });
    return f;
  }

  function statusBox(st) {
    const lines = (st.lines || []).map((l) => h("p", { text: l }));
    const buttons = h("div", { class: "buttons" });
    const offer = st.offer && (st.waited || 0) >= pn.hideOfferUntil;
    if (st.state === "waiting" && offer) {
      buttons.append(h("button", { type: "button", id: "pn-go", text: S("start_computers"), onclick: () => queueCall("/api/queue/go") }));
      buttons.append(h("button", { type: "button", id: "pn-wait", class: "quiet", text: S("keep_waiting"), onclick: () => {
        pn.hideOfferUntil = (st.waited || 0) + ((pn.data && pn.data.computers_after) || 60);
        drawPanel();
      } }));
    }
    if (st.state === "waiting") buttons.append(h("button", { type: "button", id: "pn-cancel", class: "quiet", text: S("cancel"), onclick: () => queueCall("/api/queue/cancel") }));
    // The offer's own line shows only while its buttons do (Keep waiting hides both for a while).
    const shown = offer || !st.offer ? lines : lines.slice(0, 3);
    return h("div", { class: "status", id: "pn-status", "data-state": st.state }, ...shown, buttons);
  }

  async function join(name) {
    pn.notice = "";
    if (pn.guest) {
      const { status, data } = await post("/api/guest", { name, lang: (pn.data && pn.data.lang) || navigator.language, player: pn.player || stored() || undefined });
      if (status !== 200) { pn.notice = data.error || String(status); drawPanel(); return; }
      pn.player = data.player;
      store(pn.player);
      pn.data.me = { name: data.name, platform: "web" };
    }
    pn.hideOfferUntil = 0;
    await queueCall("/api/queue/join");
  }

  // A closed tab (or one navigated away) leaves the queue at once: the page says so as it goes
  // (pagehide; a beacon is the request a closing page may still send), instead of its entry lingering
  // until it expires while the next visitor reads "Waiting for this game: 2".
  window.addEventListener("pagehide", () => {
    if (!pn.player || !pn.status || pn.status.state !== "waiting") return;
    const body = JSON.stringify({ player: pn.player });
    let sent = false;
    try { sent = navigator.sendBeacon("/api/queue/cancel", new Blob([body], { type: "application/json" })); } catch (e) { sent = false; }
    if (!sent) {
      try { fetch("/api/queue/cancel", { method: "POST", headers: { "Content-Type": "application/json" }, body, keepalive: true, credentials: "omit" }); } catch (e) { /* gone */ }
    }
  });

  async function queueCall(path) {
    clearTimeout(pn.timer);
    let r;
    try { r = await post(path, { player: pn.player, options: pn.options || undefined }); }
    catch (e) { pn.notice = S("connection_lost"); drawPanel(); pn.timer = setTimeout(() => queueCall("/api/queue/status"), POLL_MS); return; }
    const { status, data } = r;
    if (status === 401) { store(null); pn.player = null; pn.status = null; pn.notice = data.error || ""; drawPanel(); return; }
    if (status !== 200) { pn.notice = data.error || String(status); drawPanel(); return; }
    // Dropped from the queue while waiting without cancelling (a background tab's timers slowed past
    // its entry's short lifetime): queue again, once, with the same options.
    if (path.endsWith("/status") && data.state === "idle" && pn.status && pn.status.state === "waiting" && pn.options && !pn.rejoined) {
      pn.rejoined = true;
      await queueCall("/api/queue/join");
      return;
    }
    if (data.state !== "idle") pn.rejoined = false;
    pn.status = data;
    pn.notice = data.notice || (path.endsWith("/join") || path.endsWith("/status") ? "" : pn.notice);
    if (data.options) pn.options = data.options;
    if (data.state === "seated") { seated(data); return; }
    drawPanel();
    if (data.state === "waiting" || data.state === "found") pn.timer = setTimeout(() => queueCall("/api/queue/status"), POLL_MS);
  }

  async function seated(data) {
    clearTimeout(pn.timer);
    pn.status = null;
    state.session = data.session;
    state.seat = data.seat;
    state.view = null;
    clearTimeout(shown.holdTimer);
    Object.assign(shown, { count: {}, queue: [], hold: null, result: 0, panels: [], confirming: null });
    $("playnow").hidden = true;
    $("app").hidden = false;
    await openTable();
  }

  window.addEventListener("DOMContentLoaded", start);
})();
