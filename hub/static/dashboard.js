// The floor dashboard: a snapshot and then updates over Server-Sent Events (/api/stream).
// Everything shown is set with textContent: table names and texts come from the tables.
"use strict";

const $ = (selector, root = document) => root.querySelector(selector);

// Text from the tables and the network as it is shown: bidirectional controls made visible
// (a right-to-left override could make one table's text read as another's), and cut at a
// length the layout can hold.
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const MAX_SHOWN = 500;
function shown(value) {
  let text = String(value);
  if (text.length > MAX_SHOWN) {
    text = `${text.slice(0, MAX_SHOWN)}… (${text.length - MAX_SHOWN} more characters)`;
  }
  return text.replace(BIDI, (c) => `[U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}]`);
}

const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = shown(text);
  return node;
};

const state = { tables: {}, alerts: {}, commands: {}, clock: null, h4h: null, labels: {},
                offset: 0, me: null, openTable: null, log: [], structures: [],
                bustouts: [], tvLink: null };
const SEVERITY_ORDER = ["urgent", "attention", "notice"];  // hub/floor.py SEVERITIES
const UNDO_SECONDS = 120;  // a seating change can be undone this long after the table applied it
let audio = null;

function serverNow() { return Date.now() + state.offset; }
// Times and dates as the venue writes them (the hub's --locale and --time-zone; a browser's own
// without them).
let venueTime = (ms) => new Date(ms).toLocaleTimeString();
let venueDate = (ms) => new Date(ms).toLocaleString();
function useVenueLocale(locale, timeZone) {
  const options = timeZone ? { timeZone } : {};
  try {
    const time = new Intl.DateTimeFormat(locale || undefined, { ...options, timeStyle: "medium" });
    const date = new Intl.DateTimeFormat(locale || undefined, { ...options, dateStyle: "medium", timeStyle: "short" });
    venueTime = (ms) => time.format(new Date(ms));
    venueDate = (ms) => date.format(new Date(ms));
  } catch (e) { /* a tag this browser does not know: its own */ }
}

function ago(ms) {
  if (ms === null || ms === undefined) return "";
  const s = Math.max(0, Math.round((serverNow() - ms) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function clockText(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// Seconds left in a level as of now, from a reading taken at `at` (ms).
function leftNow(remaining, at, running) {
  if (remaining === null || remaining === undefined) return null;
  return running ? remaining - (serverNow() - at) / 1000 : remaining;
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, options);
  const value = await response.json().catch(() => ({}));
  // A refusal's whole answer goes with it (a 409 says what is current).
  if (!response.ok) throw Object.assign(new Error(value.error || response.statusText), { body: value });
  return value;
}

// Each severity has its own sound, repeated while an alert of it waits for acknowledgement
// (urgent every 10 s, attention every 30 s; a notice sounds once). Each tablet chooses what it
// plays (#sound, kept on the device): every alert, urgent only, or nothing.
const SOUNDS = {
  urgent: { tones: [1320, 990, 1320], repeat: 10 },
  attention: { tones: [880, 660], repeat: 30 },
  notice: { tones: [520], repeat: 0 },
};
const lastPlayed = {};

function soundChoice() { return $("#sound").value; }

function play(severity) {
  const choice = soundChoice();
  if (choice === "off" || (choice === "urgent" && severity !== "urgent")) return;
  const sound = SOUNDS[severity] || SOUNDS.urgent;
  lastPlayed[severity] = Date.now();
  document.body.dataset.beeps = Number(document.body.dataset.beeps || 0) + 1;
  document.body.dataset.lastSound = severity;
  try {
    audio = audio || new AudioContext();
    sound.tones.forEach((frequency, i) => {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = frequency;
      gain.gain.value = 0.3;
      osc.connect(gain).connect(audio.destination);
      const start = audio.currentTime + i * 0.22;
      osc.start(start);
      osc.stop(start + 0.16);
    });
  } catch (e) { /* no sound on this device */ }
}

// Once a second: each severity with a live alert still open sounds again when its time is up.
function repeatSounds() {
  const open = Object.values(state.alerts).filter((a) => !a.acked_by && !a.historical);
  for (const [severity, sound] of Object.entries(SOUNDS)) {
    if (!sound.repeat || !open.some((a) => a.severity === severity)) continue;
    if (Date.now() - (lastPlayed[severity] || 0) >= sound.repeat * 1000) play(severity);
  }
}

// ------------------------------------------------------------------ state from the hub
function applySnapshot(snap) {
  state.offset = snap.now - Date.now();
  state.tables = {};
  for (const t of snap.tables) state.tables[t.name] = t;
  state.alerts = {};
  for (const a of snap.alerts) state.alerts[a.id] = a;
  forgetOldAcknowledged();
  state.commands = {};
  for (const c of snap.commands) state.commands[c.transaction] = c;
  state.clock = snap.clock;
  state.h4h = snap.hand_for_hand;
  state.labels = snap.labels;
  state.hub = snap.hub;
  state.bustouts = snap.bustouts || [];
  state.balance = snap.balance;
  state.roster = snap.roster || { players: [] };
  state.dealers = snap.dealers || {};
  state.payouts = snap.payouts || null;  // payouts.js
  $("#venue").textContent = snap.venue;
  for (const name of [...tableCards.keys()]) if (!(name in state.tables)) tableCards.delete(name);
  roomOrder = null;
  touchEverything();
  drawBroadcast();  // the tables one may feature
}

function alertChangedAt(alert) {
  return Math.max(alert.acked_at || 0, alert.reopened_at || 0);
}

// What each kind of update can change on the page, noted for the next frame (draw): the
// parts of the page by name, the tables by name. A room of 200 tables sends about 200 updates
// a second, each about one table: redrawing the whole room for each kept a tablet's main
// thread saturated (issue 50); now an update costs what it touches, whatever the room's size.
// The dealers' list is drawn row by row: ``dealers`` holds the tables whose row may read
// differently (the list's rows and their order are the ``dealers`` part's).
const changed = { parts: new Set(), tables: new Set(), dealers: new Set() };
const PARTS = ["roster", "final", "dealers", "bustouts", "balance", "link", "clock", "alerts",
               "room", "h4h", "replies", "dialog", "payouts"];
const touch = (...parts) => { for (const part of parts) changed.parts.add(part); };
const touchAllTables = () => { for (const name of Object.keys(state.tables)) changed.tables.add(name); };
const touchAllDealerRows = () => { for (const name of Object.keys(state.tables)) changed.dealers.add(name); };
function touchEverything() {
  touch(...PARTS);
  keepAlerting();
  touchSeatedTables();
  touchAllTables();
  touchAllDealerRows();
}

// The hand-for-hand panel comes with every table's update: drawn when it reads differently.
function keepH4h(panel) {
  if (JSON.stringify(panel) !== JSON.stringify(state.h4h)) touch("h4h");
  state.h4h = panel;
}

// The acknowledged alerts this page lists: the newest (all are in the hub's database and the
// floor log). A night's thousands made every redraw of the list, and the page, longer.
const MAX_ACKED_SHOWN = 100;
function forgetOldAcknowledged() {
  const acked = Object.values(state.alerts).filter((a) => a.acked_by);
  if (acked.length <= MAX_ACKED_SHOWN) return;
  acked.sort((a, b) => (b.acked_at || 0) - (a.acked_at || 0) || b.id - a.id);
  for (const a of acked.slice(MAX_ACKED_SHOWN)) delete state.alerts[a.id];
}

// The tables with an open alert (their cards are marked), as the alerts come.
let alertingTables = new Set();
function keepAlerting() {
  alertingTables = new Set(Object.values(state.alerts).filter((a) => !a.acked_by).map((a) => a.table));
}

// What of a table the room's other parts show: when it changes, they are drawn again.
const roomKey = (t) => `${t.status}|${(t.seats || []).length}|${isBroken(t)}`;
// What a table's row in the dealers' list shows (the time in the box counts on by itself: the
// tick), and whether it has a row there and whose: when that changes, the list's rows are
// gathered again; otherwise only the table's own row is drawn.
const dealerKey = (t) => `${t.dealer}|${t.dealer_minutes}|${t.state_ts}|${t.dealer_hands}|${t.hands_per_hour}`;
const dealerListKey = (t) => (onDealersList(t) ? t.dealer : "");

// ``answer``: the update is this page's own request's answer, not the stream's word.
function applyUpdate(update, answer = false) {
  if (update.kind === "table") {
    const t = update.table;
    const before = state.tables[t.name];
    state.tables[t.name] = t;
    keepH4h(update.hand_for_hand);
    changed.tables.add(t.name);
    if (!before) roomOrder = null;
    if (!before || roomKey(before) !== roomKey(t)) touch("room", "final");
    if (!before || dealerListKey(before) !== dealerListKey(t)) touch("dealers");
    if (!before || dealerKey(before) !== dealerKey(t)) changed.dealers.add(t.name);
    if ((before && before.alerts_hidden) !== t.alerts_hidden) touch("alerts");
    if (state.openTable === t.name) touch("dialog");
  } else if (update.kind === "alert") {
    // An answer to this page's own request can arrive after the stream's newer word on the
    // same alert (re-opened here, acknowledged meanwhile by someone else): then the later
    // change at the hub wins. (The hub's times only: ts is the table's clock. The stream comes
    // in order and always applies: a hub clock stepped back would otherwise hide its word.)
    const known = state.alerts[update.alert.id];
    if (answer && known && alertChangedAt(known) > alertChangedAt(update.alert)) return;
    state.alerts[update.alert.id] = update.alert;
    if (update.alert.acked_by) forgetOldAcknowledged();
    keepAlerting();
    touch("alerts");
    changed.tables.add(update.alert.table);  // its card's alerting mark
    if (known && known.table !== update.alert.table) changed.tables.add(known.table);
    if (update.new && !update.alert.historical) play(update.alert.severity);
  } else if (update.kind === "alert_hidden") {
    const known = state.alerts[update.id];
    delete state.alerts[update.id];  // still open at the hub; counted on its table's line
    keepAlerting();
    touch("alerts");
    if (known) changed.tables.add(known.table);
  } else if (update.kind === "command") {
    state.commands[update.command.transaction] = update.command;
    touch("replies");
  } else if (update.kind === "hub") {
    state.hub = { broker: update.broker, since: update.since };
    touch("link");
  } else if (update.kind === "clock") {
    state.clock = update.clock;
    keepH4h(update.hand_for_hand);
    touch("clock");
  } else if (update.kind === "bustout") {
    const known = state.bustouts.findIndex((b) => b.id === update.bustout.id);
    if (known >= 0) state.bustouts[known] = update.bustout; else state.bustouts.push(update.bustout);
    drawBustouts();
  } else if (update.kind === "balance") {
    keepBalance(update.balance);
  } else if (update.kind === "roster") {
    state.roster = update.roster;
    touch("roster", "final", "bustouts", "balance", "payouts");
    touchSeatedTables();
  } else if (update.kind === "payouts") {  // payouts.js
    state.payouts = update.payouts;
    touch("payouts", "bustouts");
  } else if (update.kind === "dealers") {
    state.dealers = update.dealers;
    touch("dealers", "dialog");
    touchAllDealerRows();  // each row's name
    touchAllTables();  // a dealer's name on a card (rare: the floor names a badge)
  } else if (update.kind === "log") {
    if (update.line.action === "tv-link/withdraw") loadTvLink();  // withdrawn elsewhere
    if (["broadcast/feature", "broadcast/delay"].includes(update.line.action)) loadBroadcast();
    state.log.unshift(update.line);
    state.log.length = Math.min(state.log.length, 100);
    drawLog();
  }
}

// ------------------------------------------------------------------ drawing
let drawPending = false;
// No redraw while a finger or the mouse is down: a button made anew between the press and the
// release gets no click (the floor's "Acknowledge all" lost so, once in a test run); what
// came meanwhile is drawn once it is released, after its click, and after the frame that shows
// what the tap did: a tap that opens a table shared its first frame with every card that
// changed during the press, and an older tablet drew the panel 100-200 ms after the press.
// A release the page never hears (the window left meanwhile) ends the hold after 5 s.
let pressedAt = null;
let drawAfterPress = false;
let pressTimer = null;
const pressing = () => pressedAt !== null && performance.now() - pressedAt < 5000;
const holdWhilePressed = () => {
  drawAfterPress = true;
  if (!pressTimer) pressTimer = setTimeout(() => { pressTimer = null; draw(); }, 5000);
};
document.addEventListener("pointerdown", () => { pressedAt = performance.now(); }, true);
const afterNextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
const released = () => {
  pressedAt = null;
  if (drawAfterPress) { drawAfterPress = false; afterNextFrame().then(draw); }
};
document.addEventListener("pointerup", released, true);
document.addEventListener("pointercancel", released, true);
window.addEventListener("blur", released);

// Draws what changed, once a frame however many updates came meanwhile. What only the
// tables' cards show waits for the next of their redraws, five a second: a busy room changes
// some card in nearly every frame, and a tablet paid a whole frame (style, layout, paint) for
// each; a floor member reads a card at a glance, not at sixty frames a second.
const CARDS_EVERY_MS = 200;
let cardsDrawnAt = 0;
let cardsTimer = null;
function draw() {
  if (pressing()) { holdWhilePressed(); return; }
  if (drawPending || (!changed.parts.size && !changed.tables.size)) return;
  if (!changed.parts.size) {  // only cards: at their own pace
    const wait = cardsDrawnAt + CARDS_EVERY_MS - performance.now();
    if (wait > 0) {
      if (!cardsTimer) cardsTimer = setTimeout(() => { cardsTimer = null; draw(); }, wait);
      return;
    }
  }
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    if (pressing()) { holdWhilePressed(); return; }
    drawChanged();
  });
}

// After this page's own action changed its state (not through the stream): everything, once.
function drawEverything() {
  touchEverything();
  draw();
}

function drawChanged() {
  const { parts, tables, dealers } = changed;
  changed.parts = new Set();
  changed.tables = new Set();
  changed.dealers = new Set();
  if (parts.has("roster")) drawRoster();
  if (parts.has("final")) drawFinalChoice();
  if (parts.has("dealers")) drawDealerList();
  if (dealers.size) drawDealerRows(dealers);
  if (parts.has("bustouts")) drawBustouts();
  if (parts.has("balance")) drawBalance();
  if (parts.has("link")) drawLink();
  if (parts.has("clock")) drawClock();
  if (parts.has("alerts")) drawAlerts();
  if (tables.size) {
    drawTables(tables);
    cardsDrawnAt = performance.now();
  }
  if (parts.has("room")) drawRoom();
  if (parts.has("h4h")) drawH4h();
  if (parts.has("replies")) drawReplies();
  if (parts.has("dialog")) drawDialogSeats();
  if (parts.has("payouts")) drawPayouts();  // payouts.js
  if (parts.has("roster") || parts.has("clock")) chipsMayHaveChanged();  // chips.js
}

// Once a second, what counts on by itself: the clocks, each table's "since" and each alert's
// "ago", the dealers' time in the box. Only the text that differs is written, and only on the
// cards on screen: a room of 200 tables wrote 400 texts a second, 30 ms of an older tablet's
// second, for the dozen cards a floor member sees.
function tick() {
  drawLink();
  drawClock();
  for (const [name, card] of tableCards) if (!card.skipped) tickCard(name, card);
  for (const when of document.querySelectorAll("#alerts-panel .when")) {
    setText(when, whenText(Number(when.dataset.ts), when.dataset.historical === "1"));
  }
  tickDealers();
}

function tickCard(name, card) {
  const t = state.tables[name];
  if (!t || !card.ticking) return;
  setText(card.ticking.status, statusText(t));
  setText(card.ticking.left, leftText(t));
}

function setText(node, text) {
  if (node && node.textContent !== text) node.textContent = text;
}

// "live" only when both hold: this page's stream from the hub, and the hub's broker link.
// Written only when it changes: the tick calls it every second, and a text written again, if
// the same, repainted the header (dashboard.css: .clock).
function drawLink() {
  const link = $("#link");
  let text = "live";
  let className = "link ok";
  if (document.body.dataset.live !== "1") {
    text = "reconnecting to the hub";
    className = "link lost";
  } else if (state.hub && state.hub.broker !== "ok") {
    text = `hub lost the broker ${ago(state.hub.since)} ago: tables not updated`;
    className = "link lost";
  }
  setText(link, text);
  if (link.className !== className) link.className = className;
}

function drawClock() {
  const c = state.clock;
  const box = $("#clock");
  if ((c && c.structure) !== state.shownStructure) {  // a new structure runs
    state.shownStructure = c && c.structure;
    $("#structure").dataset.picked = "";
    showRunningStructure();
  }
  if (!c || !c.structure) {
    setText($(".level", box), "no clock");
    setText($(".time", box), "");
    setText($(".running", box), "");
    return;
  }
  setText($(".level", box), c.on_break ? "BREAK" : `Level ${c.level ?? "?"}`);
  setText($(".time", box), clockText(leftNow(c.remaining, c.received, c.running)));
  setText($(".running", box), c.running ? "" : "PAUSED");
}

// Open alerts grouped by table, the most urgent first and then the one waiting longest (a
// group sits where its first alert does), each group with one
// "Acknowledge all" for when the floor has been to the table; the filter narrows by severity
// and table name. The panel scrolls on its own: the tables stay on screen.
function drawAlerts() {
  const open = $("#alerts");
  const acked = $("#acked");
  const severity = $("#alert-filter").value;
  const tableWanted = $("#alert-table").value.trim().toLowerCase();
  // The most urgent first, then the one waiting longest; tables in the order of their first.
  const rank = (a) => Math.max(0, SEVERITY_ORDER.indexOf(a.severity || "urgent"));
  const alerts = Object.values(state.alerts).sort((a, b) =>
    (a.acked_by ? 1 : 0) - (b.acked_by ? 1 : 0) || (a.acked_by ? b.id - a.id : rank(a) - rank(b) || a.ts - b.ts || a.id - b.id));
  const groups = new Map();
  const closed = [];
  let count = 0;
  for (const a of alerts) {
    if (a.acked_by) { closed.push(alertItemOf(a)); continue; }
    count += 1;
    if (severity && a.severity !== severity) continue;
    if (tableWanted && !a.table.toLowerCase().includes(tableWanted)) continue;
    if (!groups.has(a.table)) groups.set(a.table, []);
    groups.get(a.table).push(a);
  }
  for (const table of [...alertGroups.keys()]) if (!groups.has(table)) alertGroups.delete(table);
  const shownGroups = [...groups].map(([table, list]) => alertGroup(table, list));
  if (!sameChildren(open, shownGroups)) placeChildren(open, shownGroups);
  if (!sameChildren(acked, closed)) placeChildren(acked, closed);
  const hidden = Object.values(state.tables).reduce((n, t) => n + (t.alerts_hidden || 0), 0);
  const shownCount = [...groups.values()].reduce((n, list) => n + list.length, 0);
  $("#alert-count").textContent = count ? `(${count}${hidden ? ` + ${hidden} older not shown` : ""}` +
    `${shownCount < count ? `, ${count - shownCount} filtered out` : ""})` : "";
}

// An alert's item is made once for each state of it (the hub sends a new object when it
// changes) and kept: a redraw of the list, at each alert that comes in a busy room, moves the
// items it has rather than making a hundred anew.
const alertItems = new WeakMap();
function alertItemOf(a) {
  const resumable = a.kind === "clock_held" && !!(state.clock && state.clock.structure && !state.clock.running);
  const had = alertItems.get(a);
  if (had && had.resumable === resumable) return had.li;
  const li = alertItem(a);
  alertItems.set(a, { li, resumable });
  return li;
}

// A table's group of open alerts, kept while it holds the same alerts.
const alertGroups = new Map();  // table -> { key, li, ul }
function alertGroup(table, list) {
  const key = list.map((a) => a.id).join();
  let group = alertGroups.get(table);
  if (!group || group.key !== key) {
    const li = el("li", "alert-group");
    li.dataset.table = table;
    const head = el("div", "group-head");
    head.append(el("span", "table-name", `Table ${table}`), el("span", "group-count", ` ${list.length} open`));
    if (list.length > 1) {
      const all = el("button", "ack-all", "Acknowledge all");
      const ids = list.map((a) => a.id);  // only what this group shows: a newer alert stays open
      all.addEventListener("click", (event) => acknowledgeTable(table, ids, all, event));
      head.append(all);
    }
    const ul = el("ul");
    li.append(head, ul);
    group = { key, li, ul };
    alertGroups.set(table, group);
  }
  const items = list.map(alertItemOf);
  if (!sameChildren(group.ul, items)) placeChildren(group.ul, items);
  return group.li;
}

function sameChildren(parent, nodes) {
  return parent.children.length === nodes.length && nodes.every((node, i) => parent.children[i] === node);
}

// The children made ``nodes``, in order, moving only those out of place: a node taken out and
// put back is styled and laid out anew. An acknowledged alert put atop the hundred listed
// below the open ones made all of them anew (replaceChildren), in the frame after each.
function placeChildren(parent, nodes) {
  const wanted = new Set(nodes);
  for (const child of [...parent.childNodes]) if (!wanted.has(child)) child.remove();
  let at = parent.firstChild;
  for (const node of nodes) {
    if (node === at) at = at.nextSibling;
    else parent.insertBefore(node, at);
  }
}

function whenText(ts, historical) {
  return `${ago(ts)} ago` + (historical ? " (sent after an outage)" : "");
}

function alertItem(a) {
  const li = el("li", `alert ${a.severity || "urgent"}` + (a.historical ? " historical" : "") + (a.acked_by ? " acked" : ""));
  li.dataset.alert = a.id;
  li.dataset.kind = a.kind;
  li.dataset.table = a.table;
  li.dataset.severity = a.severity;
  const what = el("div", "what");
  what.append(el("span", "severity", a.severity), " ", el("span", "label", state.labels[a.kind] || a.kind), " ",
              el("span", "table-name", `table ${a.table}`),
              a.hand ? ` hand ${a.hand}` : "", el("div", "text", a.text),
              el("div", "when", whenText(a.ts, a.historical)));
  const when = $(".when", what);
  when.dataset.ts = a.ts;
  when.dataset.historical = a.historical ? "1" : "";
  li.append(what);
  if (a.acked_by) {
    li.append(el("span", "acked-by", `acknowledged by ${a.acked_by}`));
    const again = el("button", "reopen", "Re-open");
    again.addEventListener("click", (event) => reopen(a.id, again, event));
    li.append(" ", again);
  } else {
    if (a.reopened_by) what.append(el("div", "reopened", `re-opened by ${a.reopened_by}`));
    const button = el("button", "ack", "Acknowledge");
    button.addEventListener("click", (event) => acknowledge(a.id, button, event));
    li.append(button);
    // A house that stops the clock for a floor call (Mike's, seed 003): the floor is asked
    // to start it again, here, while it stands still.
    if (a.kind === "clock_held" && state.clock && state.clock.structure && !state.clock.running
        && state.me && state.me.may.includes("clock")) {
      const resume = el("button", "resume-clock", "Resume the clock");
      resume.addEventListener("click", async (event) => {
        if (event.detail > 1) return;
        if (await confirmed(`Resume the venue clock? The floor call at table ${a.table} is settled.`,
                            "Resume the clock")) clockCommand("resume", null);
      });
      li.append(" ", resume);
    }
  }
  return li;
}

// Each table's card is made once and kept, and a redraw changes inside it only the parts whose
// text changed (drawCard): the card under a finger stays the same element. Made anew each
// time, a card lost a tap whose press and release fell on either side of a redraw (the
// browser sends no click when the pressed element is gone).
const tableCards = new Map();

function tableCard(name) {
  let card = tableCards.get(name);
  if (!card) {
    card = el("div", "table");
    card.dataset.table = name;
    card.addEventListener("click", (event) => { if (!unsettled(event)) openTable(name); });
    // Off screen, the browser skips a card (content-visibility): the tick leaves it alone,
    // and it is counted on as it comes back.
    card.addEventListener("contentvisibilityautostatechange", (event) => {
      card.skipped = event.skipped;
      if (event.skipped) return;
      if (offScreen.delete(name) && state.tables[name]) drawCard(card, state.tables[name]);
      tickCard(name, card);
    });
    tableCards.set(name, card);
  }
  return card;
}

// A table's line that counts on by itself (tick): its status and since when, its clock.
function statusText(t) { return `${t.status} ${ago(t.status_since)}`; }
function leftText(t) {
  // A table that is not online is shown as last heard: its clock frozen, its link down.
  const left = leftNow(t.remaining, t.state_ts, t.clock_running && t.status === "online");
  return left === null ? "" : ` ${clockText(left)}`;
}

// Who sits where by the roster: "table:seat" -> the player, kept as the roster comes.
let sitting = new Map();
let seatedNames = new Map();  // table -> its players' names as its card shows them
function touchSeatedTables() {
  sitting = new Map();
  for (const p of (state.roster || {}).players || []) {
    if (p.out_at == null && p.table) sitting.set(`${p.table}:${p.seat}`, p);
  }
  const now = new Map();
  for (const [key, p] of sitting) {
    const table = key.slice(0, key.lastIndexOf(":"));
    now.set(table, `${now.get(table) || ""}|${p.seat} ${p.name}`);
  }
  for (const table of new Set([...now.keys(), ...seatedNames.keys()])) {
    if (now.get(table) !== seatedNames.get(table)) changed.tables.add(table);
  }
  seatedNames = now;
}

// The frame draws the cards on screen (those the browser renders: content-visibility); a card
// off screen that changed waits, and is drawn apart, a few at a time in short tasks of their
// own after the frame (or at once as it comes back on screen). Drawing every changed card in
// the frame made a busy room's card frames long (200 tables: 40 cards, most of them off
// screen, each 200 ms), and a finger that landed meanwhile waited for the whole of it.
const offScreen = new Set();  // tables whose card, off screen, waits to be drawn
let offScreenTimer = null;
const OFF_SCREEN_BUDGET_MS = 4;  // a task of off-screen cards, at most (then the next task)

function drawTables(names) {
  for (const name of names) {
    const t = state.tables[name];
    if (!t) continue;
    const card = tableCard(name);
    // A card never drawn is drawn now: the room's first draw has every card whole.
    if (card.skipped && card.drawn) { offScreen.add(name); continue; }
    offScreen.delete(name);
    drawCard(card, t);
  }
  if (offScreen.size) drawOffScreenSoon();
}

function drawOffScreenSoon(after = 0) {
  if (!offScreenTimer) offScreenTimer = setTimeout(drawOffScreen, after);
}

function drawOffScreen() {
  offScreenTimer = null;
  if (pressing()) { drawOffScreenSoon(CARDS_EVERY_MS); return; }  // not under a finger
  const until = performance.now() + OFF_SCREEN_BUDGET_MS;
  for (const name of offScreen) {
    offScreen.delete(name);
    const t = state.tables[name];
    if (t && tableCards.has(name)) drawCard(tableCards.get(name), t);
    if (performance.now() >= until) break;
  }
  if (offScreen.size) drawOffScreenSoon();
}

// A card is drawn in parts, each made again only when what it shows changed: an event
// changes a table's hand line, seldom its seats (a tablet drew the whole card, 40 elements,
// for each of a busy room's 200 updates a second). Each part is keyed by what it shows.
function drawCard(card, t) {
  const name = t.name;
  const className = `table ${t.status}` + (alertingTables.has(name) ? " alerting" : "");
  if (card.className !== className) card.className = className;
  const level = t.on_break ? "break" : (t.level ? `level ${t.level}` : "no clock");
  const hand = [t.hand ?? "-", t.in_progress && t.street ? ` ${t.street}` : (t.hand ? " ended" : "")];
  const dealer = [t.dealer ? dealerName(t.dealer) : "-", t.hands_per_hour ? `, ${t.hands_per_hour} hands/h` : ""];
  const shoe = [t.shoe ?? "?", "  hub link ", t.status === "online" ? (t.hub_link ?? "?") : t.status];
  const seatingLine = seatingText(t);
  const parts = [
    // The status and the clock are keyed by what they are worked out from, not by their text,
    // which counts on with the time (the tick writes it).
    // The name first: it floats, and the status's line goes beside it (dashboard.css).
    ["name", name, () => el("div", "name", name)],
    ["status", `${t.status}|${t.status_since}`, () => el("span", "status", statusText(t))],
    ["seats", seatMapKey(t), () => seatMap(t)],
    ["names", seatNamesText(t), () => { const text = seatNamesText(t); return text && el("div", "seat-names", text); }],
    ["clock", `${level}|${t.remaining}|${t.state_ts}|${t.clock_running}|${t.status}`, () => {
      const clock = line("", [level, leftText(t)]);
      clock.lastChild.className = "left";
      return clock;
    }],
    ["hand", hand.join("|"), () => line("hand ", hand)],
    ["dealer", dealer.join("|"), () => line("dealer ", dealer)],
    ["shoe", shoe.join("|"), () => line("shoe ", shoe)],
    ["h4h", t.hand_for_hand, () => t.hand_for_hand !== "off" && line("hand for hand: ", [t.hand_for_hand])],
    ["seating", seatingLine, () => seatingLine && el("div", "line seating-state", seatingLine)],
  ];
  const drawn = card.drawn || (card.drawn = {});
  let previous = null;
  for (const [part, key, make] of parts) {
    const had = drawn[part];
    if (!had || had.key !== key) {
      // A part with nothing to show keeps its place with an empty, hidden element.
      const node = make() || Object.assign(document.createElement("span"), { hidden: true });
      if (had) had.node.replaceWith(node);
      else if (previous) previous.after(node);
      else card.prepend(node);
      drawn[part] = { key, node };
    }
    previous = drawn[part].node;
  }
  card.ticking = { status: drawn.status.node, left: $(".left", drawn.clock.node) };
}

// Who sits where, in words: a touch screen has no hover to show a seat's name.
function seatNamesText(t) {
  return (t.seats || []).map((seat) => [seat, sitting.get(`${t.name}:${seat}`)]).filter(([, p]) => p)
    .map(([seat, p]) => `${seat} ${p.name.length > 14 ? p.name.slice(0, 13) + "…" : p.name}`).join(" · ");
}

// The room: the cards in order (tables by name, the broken ones in their fold), the counts
// and the totals. Drawn when a table comes or goes, or its status, seats or break change.
let roomOrder = null;  // the table names in order, kept until a table comes or goes
const byName = new Intl.Collator(undefined, { numeric: true });
function drawRoom() {
  if (!roomOrder) roomOrder = Object.keys(state.tables).sort(byName.compare);
  const names = roomOrder;
  for (const name of [...tableCards.keys()]) if (!(name in state.tables)) tableCards.delete(name);
  // The same cards in the same order: left in place (a card moved out and back is still the
  // same card, but there is no need to move it).
  // A table the floor broke (nobody left, nobody drawn there) leaves the room's cards for
  // the fold below them.
  const live = [];
  const broken = [];
  for (const name of names) (isBroken(state.tables[name]) ? broken : live).push(tableCard(name));
  for (const [target, list] of [[$("#tables"), live], [$("#broken-tables"), broken]]) {
    const same = target.children.length === list.length && list.every((c, i) => target.children[i] === c);
    if (!same) target.replaceChildren(...list);
  }
  $("#broken-panel").hidden = !broken.length;
  setText($("#broken-count"), `(${broken.length})`);
  setText($("#table-count"), `(${live.length})`);
  // The room at a glance: players seated at the tables in play. A lost table keeps its last
  // known seats (its players did not leave), said as such; a broken or closed one counts none.
  const running = names.map((n) => state.tables[n])
    .filter((t) => (t.status === "online" || t.status === "lost") && (t.seats || []).length);
  const players = running.reduce((n, t) => n + (t.seats || []).length, 0);
  const lost = running.filter((t) => t.status === "lost").map((t) => t.name);
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  setText($("#totals"), `${plural(players, "player")} left at ${plural(running.length, "table")} in play` +
    (running.length ? `, ${(players / running.length).toFixed(1)} a table` : "") +
    (lost.length ? ` (${lost.join(", ")}: seats as last known, the link is lost)` : ""));
}

function isBroken(t) {
  return !!(t && t.seating && t.seating.broken && !(t.seats || []).length);
}

// Whether the table deals the hub's seating (hub/seating.py): nothing said when it does; else
// since when it waits, or that it takes it at its next hand; the seats held for players on
// their way; a table's refusal.
function seatingText(t) {
  const s = t.seating;
  if (!s) return "";
  const parts = [];
  if (s.state === "next_hand") parts.push("seating: takes it at its next hand");
  else if (s.state === "waiting") parts.push(`seating: waiting for the table ${ago(s.since)}`);
  else if (s.state === "unreachable") parts.push(`seating: sent when the table is back (changed ${ago(s.since)})`);
  for (const a of s.arriving || []) {
    parts.push(`seat ${a.seat} held for ${a.player || "a player"} from table ${a.from_table}`);
  }
  if (s.refused) parts.push(`refused: ${s.refused}`);
  if (s.broken) parts.push("broken");
  return parts.join("; ");
}

// The table's seats round it (the house's table size, fewer at a short table): taken or
// empty, the button marked D; as last known when the table's link is lost.
function tableSize(name) {
  const b = state.balance;
  if (!b) return 10;
  return Math.min(b.table_size || 10, (b.short_tables || {})[name] || 10);
}
function seatMapKey(t) {
  return JSON.stringify([t.status, t.seats, t.button, t.blind_seats, tableSize(t.name),
                         ((t.seating || {}).arriving || []).map((a) => a.seat),
                         (t.seats || []).map((seat) => (playerAt(t.name, seat) || {}).name)]);
}
function seatMap(t) {
  const map = el("div", "seat-map" + (t.status === "lost" ? " stale" : ""));
  if (t.status === "lost") map.title = "seats as last known: the table's link is lost";
  const taken = new Set(t.seats || []);
  const blinds = t.blind_seats || {};
  const size = Math.max(tableSize(t.name), ...taken);
  for (let seat = 1; seat <= size; seat += 1) {
    // A table with nobody (broken) has no button or blinds left to show.
    const role = !taken.size ? null : seat === t.button ? "D" : seat === blinds.small ? "SB" : seat === blinds.big ? "BB" : null;
    const held = ((t.seating || {}).arriving || []).some((a) => a.seat === seat);
    const spot = el("span", "seat" + (taken.has(seat) ? " taken" : "") + (held ? " arriving" : ""),
                    role || String(seat));
    spot.dataset.seat = seat;
    if (role) spot.classList.add(role === "D" ? "button" : "blind");
    const who = taken.has(seat) ? playerAt(t.name, seat) : null;
    spot.title = `seat ${seat}${taken.has(seat) ? (who ? `: ${who.name}` : "") : ": empty"}` +
      ({ D: ", the button", SB: ", small blind", BB: ", big blind" }[role] || "");
    map.append(spot);
  }
  return map;
}

// ------------------------------------------------------------------ dealers
// A dealer by name where the hub's badge-to-name list has one: "Maria Lopez (D17)".
function dealerName(badge) {
  const name = (state.dealers || {})[badge];
  return name ? `${name} (${badge})` : badge;
}

// Who deals where: each online table's dealer with their time in the box and pace, then the
// named dealers not in a box. One row per table, kept, and drawn when its table's dealer,
// hands or pace change: a room of 200 tables ends a hand about every 15 events, and working
// out every row for each such update cost an older tablet 23 ms a second (issue 50).
const dealerRows = new Map();  // table -> { tr, cells, boxAt: when its time in the box next reads differently }
const DEALER_COLUMNS = 6;  // name, badge, table, time in the box, hands, hands an hour
const BOX = 3;
const onDealersList = (t) => t.status === "online" && !!t.dealer && (t.seats || []).length > 0;

// The list's rows, in the room's order: rows made for the tables that came onto it, dropped
// for those that left; then the dealers not in a box. The rows' text is drawDealerRows's.
function drawDealerList() {
  const body = $("#dealers-on tbody");
  if (!roomOrder) roomOrder = Object.keys(state.tables).sort(byName.compare);
  const on = roomOrder.map((name) => state.tables[name]).filter((t) => t && onDealersList(t));
  const now = serverNow();
  const rows = on.map((t) => (dealerRows.get(t.name) || drawDealerRow(t, now)).tr);
  const listed = new Set(on.map((t) => t.name));
  for (const name of [...dealerRows.keys()]) if (!listed.has(name)) dealerRows.delete(name);
  const same = body.children.length === rows.length && rows.every((tr, i) => body.children[i] === tr);
  if (!same) body.replaceChildren(...rows);
  if ($("#dealers-on").hidden !== !on.length) $("#dealers-on").hidden = !on.length;
  if ($("#dealers-none").hidden !== !!on.length) $("#dealers-none").hidden = !!on.length;
  const busy = new Set(on.map((t) => t.dealer));
  const off = Object.entries(state.dealers || {}).filter(([badge]) => !busy.has(badge))
    .sort((a, b) => a[1].localeCompare(b[1]));
  setText($("#dealers-off"), off.length
    ? "Not in a box: " + off.map(([badge, name]) => `${name} (${badge})`).join(", ") : "");
}

// The rows of these tables, those the list has (a table that came onto it has its row from
// drawDealerList, drawn first).
function drawDealerRows(names) {
  const now = serverNow();
  for (const name of names) {
    const t = state.tables[name];
    if (t && dealerRows.has(name)) drawDealerRow(t, now);
  }
}

// One table's row: made the first time, then only the cells that read differently written.
function drawDealerRow(t, now) {
  let row = dealerRows.get(t.name);
  if (!row) {
    const tr = el("tr");
    const cells = Array.from({ length: DEALER_COLUMNS }, () => tr.appendChild(el("td")));
    row = { tr, cells, boxAt: Infinity };
    dealerRows.set(t.name, row);
  }
  if (row.tr.dataset.badge !== t.dealer) row.tr.dataset.badge = t.dealer;
  const texts = [(state.dealers || {})[t.dealer] || "(no name)", t.dealer, `table ${t.name}`, null,
                 t.dealer_hands ?? "-", t.hands_per_hour ?? "-"];
  texts.forEach((text, i) => { if (text !== null) setText(row.cells[i], shown(text)); });
  drawDealerBox(row, t, now);
  return row;
}

// The time in the box, from the table's reading (its minutes as of its state's time stamp),
// counted on; and when it next reads differently (the next whole minute), so that the tick
// writes each row once a minute rather than working out every row every second.
function drawDealerBox(row, t, now) {
  if (t.dealer_minutes == null) {
    setText(row.cells[BOX], "-");
    row.boxAt = Infinity;
    return;
  }
  const minutes = t.dealer_minutes + Math.max(0, now - (t.state_ts || now)) / 60000;
  setText(row.cells[BOX], minutes >= 60
    ? `${Math.floor(minutes / 60)} h ${String(Math.floor(minutes % 60)).padStart(2, "0")} min`
    : `${Math.floor(minutes)} min`);
  row.boxAt = now + (Math.floor(minutes) + 1 - minutes) * 60000;
}

function tickDealers() {
  const now = serverNow();
  for (const [name, row] of dealerRows) {
    const t = state.tables[name];
    if (t && now >= row.boxAt) drawDealerBox(row, t, now);
  }
}

function setUpDealers() {
  $("#dealer-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const reply = $("#dealer-reply");
    const badge = $("#dealer-badge").value.trim();
    const name = $("#dealer-name").value.trim();
    try {
      state.dealers = await api("/api/dealers", { badge, name });
      // The hub spells the badge as a table does (d31 typed, D31 signed in).
      const spelled = Object.keys(state.dealers).find((b) => b.toLowerCase() === badge.toLowerCase()) || badge;
      reply.className = "reply ok";
      reply.textContent = name ? `badge ${spelled} is ${state.dealers[spelled] || name}` : `badge ${badge} has no name now`;
      $("#dealer-badge").value = $("#dealer-name").value = "";
      drawEverything();
    } catch (e) {
      reply.className = "reply error";
      reply.textContent = shown(e.message);
    }
  });
}

// ------------------------------------------------------------------ the broadcast feed
// Which tables a production sees (hole cards, behind the delay, on the broadcast role's
// routes only: none of it comes here), and the delay; set by the floor, in its log.
function drawBroadcast() {
  const feed = state.broadcast;
  if (!feed) return;
  const minutes = feed.delay_seconds / 60;
  setText($("#broadcast-summary"), `Security delay ${Number.isInteger(minutes) ? minutes : minutes.toFixed(1)} min` +
    (feed.tables.length ? "" : "; no table featured"));
  const mayCommand = state.me.may.includes("command");
  $("#broadcast-tables").replaceChildren(...feed.tables.map((t) => {
    const item = el("li", null, `table ${t.table}: featured since ${venueTime(t.since)} (${t.by}) `);
    item.dataset.table = t.table;
    if (mayCommand) {
      const stop = el("button", "stop", "Stop featuring");
      stop.type = "button";
      stop.addEventListener("click", () => feature(t.table, false));
      item.append(stop);
    }
    return item;
  }));
  const select = $("#broadcast-table");
  const featured = new Set(feed.tables.map((t) => t.table));
  const choices = Object.keys(state.tables || {}).filter((name) => !featured.has(name)).sort();
  if (choices.join(" ") !== [...select.options].map((o) => o.value).join(" ")) {
    select.replaceChildren(...choices.map((name) => { const o = el("option", null, name); o.value = name; return o; }));
  }
  const input = $("#broadcast-minutes");
  if (document.activeElement !== input) input.value = String(minutes);
}

async function loadBroadcast() {
  try {
    state.broadcast = await api("/api/featured");
    drawBroadcast();
  } catch (e) { setText($("#broadcast-summary"), shown(e.message)); }
}

async function broadcastChange(path, body, said) {
  const reply = $("#broadcast-reply");
  try {
    state.broadcast = await api(path, body);
    reply.className = "reply ok";
    reply.textContent = said;
    drawBroadcast();
  } catch (e) {
    reply.className = "reply error";
    reply.textContent = shown(e.message);
  }
}

function feature(table, featured) {
  return broadcastChange(`/api/featured/tables/${encodeURIComponent(table)}`, { featured },
    featured ? `table ${table} is on the broadcast feed from now on` : `table ${table} is off the broadcast feed`);
}

function setUpBroadcast() {
  $("#broadcast-table").addEventListener("focus", drawBroadcast);  // tables heard since
  $("#broadcast-feature").addEventListener("submit", (event) => {
    event.preventDefault();
    const table = $("#broadcast-table").value;
    if (table) feature(table, true);
  });
  $("#broadcast-delay").addEventListener("submit", (event) => {
    event.preventDefault();
    const minutes = Number($("#broadcast-minutes").value);
    broadcastChange("/api/featured/delay", { seconds: Math.round(minutes * 60) },
      `the security delay is ${minutes} min`);
  });
  loadBroadcast();
}

// ------------------------------------------------------------------ the roster
// Who sits where by name, when the hub keeps a roster; without one, seats by number.
function playerAt(table, seat) {
  return sitting.get(`${table}:${seat}`) || null;
}
function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
  return `${n}${suffix}`;
}

// The final table: offered among the online tables, the one with the most players first.
function drawFinalChoice() {
  const r = state.roster || { players: [] };
  const finalSelect = $("#roster-final-table");
  const online = Object.values(state.tables).filter((t) => t.status === "online" && !isBroken(t))
    .sort((a, b) => (b.seats || []).length - (a.seats || []).length || a.name.localeCompare(b.name));
  const chosen = finalSelect.value;
  const names = online.map((t) => t.name);
  if (names.join() !== finalSelect.dataset.names) {
    finalSelect.replaceChildren(...names.map((n) => { const o = el("option", null, n); o.value = n; return o; }));
    finalSelect.dataset.names = names.join();
    if (names.includes(chosen)) finalSelect.value = chosen;
  }
  $("#roster-final").disabled = !r.left || !names.length;
}

function drawRoster() {
  const r = state.roster || { players: [] };
  const panel = $("#roster-panel");
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  $("#roster-count").textContent = r.players.length ? `(${r.left} of ${r.entrants} left)` : "";
  $("#roster-summary").textContent = r.players.length
    ? [r.winner ? `Tournament over: ${r.winner} wins` : null,
       plural(r.entrants, "entrant"), `${r.left} left`,
       r.entries > r.entrants ? plural(r.entries - r.entrants, "re-entry").replace("re-entrys", "re-entries") : null,
       r.add_ons ? plural(r.add_ons, "add-on") : null,
       r.waiting ? `${r.waiting} waiting for a seat` : null].filter(Boolean).join(" \u00b7 ")
    : "No roster: the tables work by seat number. Enter players or import a CSV to use names.";
  $("#roster-draw").disabled = !r.waiting;
  $("#roster-draw").textContent = r.waiting ? `Draw seats for ${plural(r.waiting, "player")}` : "Draw seats";
  // The seating chart: each table's seats by name, then who waits (printable).
  const tables = {};
  for (const p of r.players) {
    if (p.out_at == null && p.table) (tables[p.table] = tables[p.table] || []).push(p);
  }
  const chart = $("#seating-chart");
  chart.replaceChildren(...Object.keys(tables).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
    .map((table) => {
      const box = el("div", "chart-table");
      box.dataset.table = table;
      box.append(el("h3", null, `Table ${table}`));
      const list = el("ol");
      for (const p of tables[table].sort((a, b) => a.seat - b.seat)) {
        const li = el("li", null, `Seat ${p.seat}: ${p.name}`);
        li.dataset.seat = p.seat;
        list.append(li);
      }
      box.append(list);
      return box;
    }));
  const waiting = r.players.filter((p) => p.out_at == null && p.no_show_at == null && !p.table);
  if (waiting.length) chart.append(el("p", "waiting", `Waiting for a seat: ${waiting.map((p) => p.name).join(", ")}`));
  // On paper: a title with the time, and every player by name to find their seat.
  $("#chart-title").textContent = `Seating \u2014 ${$("#venue").textContent} \u2014 ${venueDate(serverNow())}`;
  const seatedNow = r.players.filter((p) => p.out_at == null && p.table)
    .sort((a, b) => a.name.localeCompare(b.name));
  $("#chart-by-name").replaceChildren(...seatedNow.map((p) => el("li", null, `${p.name}: table ${p.table} seat ${p.seat}`)));
  const list = $("#roster-players");
  list.replaceChildren(...r.players.map((p) => {
    if (p.no_show_at != null) return noShowItem(p);
    const li = el("li", p.out_at == null ? "in" : "out");
    li.dataset.player = p.id;
    const where = p.out_at != null ? `out, ${ordinal(p.place)}${p.out_hand ? ` (hand ${p.out_hand})` : ""}`
      : p.table ? `table ${p.table} seat ${p.seat}` : "waiting for a seat";
    li.append(el("b", null, p.name), ` ${where}`,
              p.entries > 1 ? ` \u00b7 ${p.entries} entries` : "", p.add_ons ? ` \u00b7 ${plural(p.add_ons, "add-on")}` : "");
    const act = (cls, label, path, question) => {
      const button = el("button", cls, label);
      button.addEventListener("click", async (event) => {
        if (event.detail > 1) return;
        if (!(await confirmed(question, label))) return;
        rosterAction(`/api/roster/players/${p.id}/${path}`, {});
      });
      li.append(" ", button);
    };
    if (p.out_at != null) act("reentry", "Re-entry", "re-entry", `${p.name} buys in again (entry ${p.entries + 1})?`);
    else act("addon", "Add-on", "add-on", `An add-on for ${p.name}?`);
    // A tap by mistake is taken back: a re-entry while its player waits, an add-on.
    const takeBack = (cls, label, what, question) => {
      const button = el("button", `take-back ${cls}`, label);
      button.addEventListener("click", async (event) => {
        if (event.detail > 1 || !(await confirmed(question, label))) return;
        rosterAction(`/api/roster/players/${p.id}/take-back`, { what });
      });
      li.append(" ", button);
    };
    if (p.out_at == null && p.last_out_at != null && !p.table) {
      takeBack("reentry", "Take back re-entry", "re-entry", `Take back ${p.name}'s re-entry? They are out again, in their place.`);
    }
    if (p.add_ons) takeBack("addon", "Take back add-on", "add-on", `Take back one of ${p.name}'s add-ons?`);
    // An entrant entered by mistake (a wrong name, a double entry) leaves before they play.
    if (p.out_at == null && p.last_out_at == null && p.entries === 1 && !p.add_ons) {
      act("remove", "Remove", "remove", `Remove ${p.name}, entered by mistake? ` +
          (p.table ? `Table ${p.table} seat ${p.seat} is freed (no bust-out).` : "They leave the roster."));
    }
    registrationButtons(li, p, act);
    return li;
  }));
  panel.dataset.players = r.players.length;
  drawRegistration(r);
}

// ------------------------------------------------------------------ registration details
// A no-show's line stays on the roster: no place, the refund said.
function noShowItem(p) {
  const li = el("li", "out no-show");
  li.dataset.player = p.id;
  li.append(el("b", null, p.name), ` no-show, refunded ${p.refund}`);
  return li;
}

// The re-entries a player has left (the structure's max_reentries: none left, no Re-entry),
// and No-show for an entrant who never came (the hub refuses it once they have played).
function registrationButtons(li, p, act) {
  if (p.reentries_left != null) {
    const left = p.reentries_left;
    // Beside the entries, before the buttons.
    li.insertBefore(el("span", "reentries-left", ` \u00b7 ${left} re-entr${left === 1 ? "y" : "ies"} left`),
                    li.querySelector("button"));
    const reentry = li.querySelector("button.reentry");
    if (reentry && !left) {
      reentry.disabled = true;
      reentry.title = "The structure that runs allows no more re-entries for this player";
    }
  }
  if (p.out_at == null && p.last_out_at == null && p.entries === 1 && !p.add_ons) {
    act("no-show", "No-show", "no-show", `${p.name} never came: remove them as a no-show and ` +
        "refund the buy-in? " + (p.table ? `Table ${p.table} seat ${p.seat} is freed (no bust-out).`
                                         : "Their line stays, marked no-show."));
  }
}

// The summary counts the no-shows (refunded: the prize pool leaves their entries out).
function drawRegistration(r) {
  if (r.no_shows) {
    $("#roster-summary").append(` \u00b7 ${r.no_shows} no-show${r.no_shows === 1 ? "" : "s"} (refunded)`);
  }
  drawAlternates(r);
}

// The alternates, in their order: the first takes the next seat that opens during late
// registration; closed with it, saying why.
function drawAlternates(r) {
  const list = r.alternates || [];
  $("#alternates-count").textContent = list.length ? `(${list.length})` : "";
  const closed = $("#alternates-closed");
  closed.hidden = !r.alternates_closed;
  closed.textContent = r.alternates_closed ? `The list is closed: ${r.alternates_closed}.` : "";
  $("#alternate-add").hidden = Boolean(r.alternates_closed);
  $("#alternates").replaceChildren(...list.map((a) => {
    const li = el("li", null, a.name);
    li.dataset.position = a.position;
    const button = el("button", "drop-alternate", "Remove");
    button.addEventListener("click", async (event) => {
      if (event.detail > 1 || !(await confirmed(`Take ${a.name} off the alternates list?`, "Remove"))) return;
      rosterAction(`/api/roster/alternates/${a.position}/remove`, {}, `${a.name} is off the list`);
    });
    li.append(" ", button);
    return li;
  }));
}

function setUpAlternates() {
  $("#alternate-add").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("#alternate-name").value.trim();
    if (!name) return;
    rosterAction("/api/roster/alternates", { name }, `${name} is an alternate: seated when a seat opens`)
      .then(() => { $("#alternate-name").value = ""; });
  });
}

// What a draw did, so the floor knows who walks: a new seat, or a seat already taken by a
// player the roster did not know, now named (the floor checks the name at the table).
function drawnText(answer) {
  const parts = Object.entries(answer.drawn).map(([table, seats]) => `table ${table}: ` +
    seats.map((s) => `${s.player} ${s.named ? "is the player already in seat" : "goes to seat"} ${s.seat}`).join(", "));
  return "Seats drawn \u2014 " + parts.join("; ");
}

async function rosterAction(path, body, said, more) {
  const reply = $("#roster-reply");
  try {
    const answer = await api(path, body);
    if (answer.players) state.roster = answer;
    else if (answer.roster) state.roster = answer.roster;
    reply.className = "reply ok";
    reply.textContent = answer.drawn ? drawnText(answer) : (said || "done") + (more ? more(answer) : "");
    drawEverything();
  } catch (e) {
    reply.className = "reply error";
    // A CSV's problems, one a line.
    reply.replaceChildren(...shown(e.message).split("; ").map((part) => el("div", null, part)));
  }
}

function setUpRoster() {
  $("#roster-add").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("#roster-name").value.trim();
    if (!name) return;
    rosterAction("/api/roster/players", { name }, `${name} entered: waiting for a seat`)
      .then(() => { $("#roster-name").value = ""; });
  });
  $("#roster-csv").addEventListener("change", async () => {
    const file = $("#roster-csv").files[0];
    if (!file) return;
    const text = await file.text();
    $("#roster-csv").value = "";
    rosterAction("/api/roster/import", { csv: text }, `entrants imported from ${file.name}`,
                 (answer) => (answer.ignored_columns || []).length
                   ? ` (columns not read: ${answer.ignored_columns.join(", ")})` : "");
  });
  $("#roster-draw").addEventListener("click", async (event) => {
    if (event.detail > 1) return;
    const r = state.roster;
    const unnamed = Object.values(state.tables).filter((t) => t.status === "online")
      .reduce((n, t) => n + (t.seats || []).filter((seat) => !playerAt(t.name, seat)).length, 0);
    const naming = unnamed ? ` ${unnamed} seat${unnamed === 1 ? " is" : "s are"} taken by players ` +
      "not on the roster: the draw names those first (check each name at the table)." : "";
    // What cannot succeed is said now, not after a confirmation (the hub checks it again).
    const free = Object.values(state.tables).filter((t) => t.status === "online" && !isBroken(t))
      .reduce((n, t) => n + Math.max(0, tableSize(t.name) - (t.seats || []).length), 0);
    if (r.waiting > free + unnamed) {
      refuse("#roster-reply", `${r.waiting} waiting and ${free + unnamed} seat${free + unnamed === 1 ? "" : "s"} ` +
             "free at the tables in play: open a table first (seat a player there by hand; a broken " +
             "table takes nobody from a draw)");
      return;
    }
    if (await confirmed(`Draw seats for the ${r.waiting} waiting? Each goes to a random seat, ` +
                        `the tables kept even; the tables are sent their seating.${naming}`, "Draw seats")) {
      rosterAction("/api/roster/draw", {});
    }
  });
  $("#roster-print").addEventListener("click", () => window.print());
  $("#roster-final").addEventListener("click", async (event) => {
    if (event.detail > 1) return;
    const table = $("#roster-final-table").value;
    const r = state.roster;
    if (r.left > tableSize(table)) {
      refuse("#roster-reply", `${r.left} players are left and table ${table} seats ${tableSize(table)}: ` +
             "break down to the final table first");
      return;
    }
    if (r.waiting) {
      refuse("#roster-reply", `${r.waiting} waiting for a seat: draw seats first`);
      return;
    }
    if (await confirmed(`Draw the final table at ${table}? All ${r.left} players left draw a seat ` +
                        `there, those already at ${table} too; the other tables break.`, "Draw the final table")) {
      rosterAction("/api/roster/final-table", { table });
    }
  });
  $("#roster-clear").addEventListener("click", async () => {
    if (await confirmed("Clear the roster for a new tournament? Every player and finishing " +
                        "place goes (take the finishing order as CSV first).", "Clear roster")) {
      rosterAction("/api/roster/clear", {});
    }
  });
}

// An action refused before it is asked: said where its answer would have been.
function refuse(where, text) {
  const reply = $(where);
  reply.className = "reply error";
  reply.textContent = shown(text);
}

// The bust-outs, newest first. A recent one has its Undo, kept by the hub: every tablet shows
// it, after a refresh too, until its window closes (the hub says when).
function drawBustouts() {
  const list = $("#bustouts");
  const newest = [...state.bustouts].reverse();
  list.replaceChildren(...newest.map((b) => {
    // The place as the roster has it now: an undo or a late entry moves the places after it.
    const player = b.player_id == null ? null
      : ((state.roster || {}).players || []).find((p) => p.id === b.player_id);
    const place = player ? (player.place ? `, ${ordinal(player.place)}` : ", back in the game")
      : (b.place ? `, ${ordinal(b.place)}` : "");
    const li = el("li", b.undone_by ? "undone" : null,
      `${venueTime(b.ts)} table ${b.table} seat ${b.seat}` +
      `${b.player ? ` ${b.player}${place}${bustoutPrizeText(b)}` : ""}` +  // payouts.js
      `${b.hand ? ` after hand ${b.hand}` : ""} (by ${b.by})`);
    li.dataset.bustout = b.id;
    if (b.undone_by) {
      li.append(el("span", "undone-by", ` undone by ${b.undone_by}: back in the game`));
    } else if (serverNow() < b.undo_until) {
      const button = el("button", "undo", "Undo");
      button.addEventListener("click", (event) => undoBustout(b, button, event));
      li.append(" ", button);
    }
    return li;
  }));
  $("#bustout-count").textContent = `(${state.bustouts.filter((b) => !b.undone_by).length})`;
  const closing = state.bustouts.filter((b) => !b.undone_by && serverNow() < b.undo_until)
    .map((b) => b.undo_until - serverNow());
  clearTimeout(state.undoTimer);  // redrawn when the next Undo's window closes
  if (closing.length) state.undoTimer = setTimeout(drawBustouts, Math.min(...closing) + 50);
}

async function undoBustout(b, button, event) {
  if (event && event.detail > 1) return;
  if (!await confirmed(`Undo the bust-out of ${b.player ? b.player + ", " : ""}table ${b.table} ` +
                       `seat ${b.seat}? The table takes seat ${b.seat} back into the game.`, "Undo")) return;
  button.disabled = true;
  const reply = $("#bustout-reply");
  try {
    await api(`/api/bustouts/${encodeURIComponent(b.id)}/undo`, {});  // undone: on the stream
    reply.className = "reply ok";
    reply.textContent = `seat ${b.seat} sent back to table ${b.table}`;
  } catch (e) {
    button.disabled = false;
    reply.className = "reply error";
    reply.textContent = shown(e.message);
  }
}

// The house's rule proposes a move (or a table break); the floor confirms it, and the hub
// makes it at once in its seating (each table takes it at its next hand).
// A move as the floor says it: "Anna, t2 seat 6 → t4 seat 3" (the name when a roster has it).
function moveText(m) {
  // The name the move was made with (kept by the hub: the player may be out since), else
  // who sits there now.
  const who = m.player ? { name: m.player }
    : playerAt(m.from_table, m.from_seat) || playerAt(m.to_table, m.to_seat);
  return `${who ? who.name + ", " : ""}table ${m.from_table} seat ${m.from_seat} \u2192 table ${m.to_table} seat ${m.to_seat}`;
}
function drawBalance() {
  const b = state.balance;
  const box = $("#balance");
  const recent = (b && b.recent) || [];
  $("#moves").replaceChildren(...[...recent].reverse().map((m) => el("li", null,
    `${venueTime(m.ts)} ${moveText(m)} (${m.kind}, by ${m.by})`)));
  $("#move-count").textContent = `(${recent.length})`;
  const p = b && b.proposal;
  box.hidden = !p;
  if (!p) return;
  box.dataset.kind = p.kind;
  box.dataset.tables = p.tables.join(",");
  $(".what", box).textContent = shown((p.kind === "break" ? "Break a table: " : "Balance: ") + p.reason);
  $(".moves", box).replaceChildren(...p.moves.map((m) => el("li", null, moveText(m))));
  $(".when", box).textContent = `Who moves is decided by the blinds now (${b.profile}). Confirmed, ` +
    "the moves are made at once: each player leaves after the hand at their table and is " +
    "seated at the other as soon as they have.";
  $(".rules", box).replaceChildren(...b.rules.filter((r) => p.rules.includes(r.key)).map((r) => {
    const li = el("li", null, `${r.key.replaceAll("_", " ")}: ${r.value} (${r.source}) `);
    if (r.quote) li.append(el("q", null, r.quote));
    else if (r.note) li.append(r.note);
    return li;
  }));
}

// The balancing panel: the newest revision wins, whichever way it came (the confirmation's
// answer can arrive after the stream has brought the next proposal).
function keepBalance(panel) {
  if (!state.balance || !panel || (panel.revision ?? 0) >= (state.balance.revision ?? 0)) {
    const sizes = (b) => JSON.stringify(b ? [b.table_size, b.short_tables] : null);
    if (sizes(panel) !== sizes(state.balance)) touchAllTables();  // the seats round each card
    state.balance = panel;
    touch("balance");
  }
}

async function confirmMove() {
  const p = state.balance && state.balance.proposal;
  if (!p) return;
  const question = (p.kind === "break" ? `Break table ${p.tables[0]}? ` : "Move players? ") +
    p.moves.map(moveText).join("; ") + ". Each player leaves after the hand at their table " +
    "and is seated at the other as soon as they have.";
  if (!await confirmed(question, p.kind === "break" ? "Break the table" : "Move players")) return;
  try {
    keepBalance(await api("/api/balance/confirm", { kind: p.kind, tables: p.tables, moves: p.moves }));
    $("#balance-refusal").hidden = true;
  } catch (e) {
    // It stays until dismissed: the proposal it was about may be gone at the next update.
    const refusal = $("#balance-refusal");
    $(".text", refusal).textContent = shown(`Not confirmed: ${e.message}`);
    refusal.hidden = false;
    return;
  }
  drawEverything();
}

// ------------------------------------------------------------------ statistics
// Chart.js (hub/static/VENDORED.md) is loaded the first time statistics are shown.
let chartLibrary = null;
function loadCharts() {
  if (!chartLibrary) {
    chartLibrary = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/static/chart.umd.min.js";
      script.onload = () => resolve(window.Chart);
      script.onerror = () => { chartLibrary = null; reject(new Error("the chart library did not load")); };
      document.head.append(script);
    });
  }
  return chartLibrary;
}

function statsPeriod() {
  const choice = $("#stats-period").value;
  if (choice !== "custom") {
    const to = Math.round(serverNow());
    return { from: to - Number(choice) * 3600 * 1000, to };
  }
  const at = (id) => { const v = $(id).value; return v ? new Date(v).getTime() : null; };
  return { from: at("#stats-from"), to: at("#stats-to") };
}

function statsQuery() {
  const { from, to } = statsPeriod();
  const query = new URLSearchParams();
  if (Number.isFinite(from)) query.set("from", from);
  if (Number.isFinite(to)) query.set("to", to);
  return query.toString();
}

const PALETTE = ["#4c9be8", "#e6a23c", "#3fb96b", "#e5484d", "#b07ce8", "#4cc9c0", "#d9d36a", "#9aa8b5"];
const charts = {};
function drawChart(Chart, id, labels, datasets, stacked) {
  if (charts[id]) charts[id].destroy();
  charts[id] = new Chart($(`#${id}`), {
    type: "bar",
    // Labels are the tables' and dealers' names: shown as every other text from the tables.
    data: { labels: labels.map(shown),
            datasets: datasets.map((d, i) => ({ backgroundColor: PALETTE[i % PALETTE.length], ...d,
                                                label: shown(d.label) })) },
    options: {
      animation: false, responsive: true, maintainAspectRatio: false,
      plugins: { legend: { display: datasets.length > 1, labels: { color: "#eef2f5" } } },
      scales: {
        x: { stacked, ticks: { color: "#9aa8b5" }, grid: { color: "#2a333d" } },
        y: { stacked, beginAtZero: true, ticks: { color: "#9aa8b5", precision: 0 }, grid: { color: "#2a333d" } },
      },
    },
  });
}

// One colour per irregularity kind (every kind of the contract's IrregularityData, a test
// holds them to it), the same in every chart and period.
const KIND_COLOURS = {
  exposed_card: "#4c9be8", boxed_card: "#e6a23c", joker: "#3fb96b", extra_card: "#e5484d",
  missing_card: "#b07ce8", premature_card: "#4cc9c0", too_many_board_cards: "#d9d36a",
  missing_burn: "#f07cc0", duplicate_card: "#8fd14f", foreign_card: "#c08552",
  unknown_tag: "#9aa8b5", shoe_fault: "#f5f5f5", wrong_game: "#5b6ee1",
};
function byKind(rows, key, kinds) {
  const names = [...new Set(rows.map((r) => r[key]))].sort();
  const unknown = kinds.filter((kind) => !KIND_COLOURS[kind]);  // a newer table's: spread apart
  return { labels: names, datasets: kinds.map((kind) => ({
    label: kind.replaceAll("_", " "),
    backgroundColor: KIND_COLOURS[kind] || `hsl(${(unknown.indexOf(kind) * 137.5 + 20) % 360} 65% 62%)`,
    data: names.map((n) => (rows.find((r) => r[key] === n && r.kind === kind) || { count: 0 }).count),
  })) };
}

async function loadStats() {
  const summary = $("#stats-summary");
  const query = statsQuery();
  $("#stats-csv").href = `/api/stats/hands.csv?${query}`;
  let stats, Chart;
  try {
    [stats, Chart] = await Promise.all([api(`/api/stats?${query}`), loadCharts()]);
  } catch (e) {
    summary.className = "reply error";
    summary.textContent = shown(`statistics: ${e.message}`);
    return;
  }
  const when = venueDate;
  summary.className = "reply";
  summary.textContent = `${stats.hands} hands from ${when(stats.from)} to ${when(stats.to)}` +
    (stats.durations.median !== null ? `; a hand takes ${stats.durations.median} s (median), ` +
     `${stats.durations.p90} s for the slowest tenth` : "");
  $("#stats-panel .charts").hidden = false;
  drawChart(Chart, "chart-tables", stats.tables.map((t) => t.table),
            [{ label: "hands per hour", data: stats.tables.map((t) => t.hands_per_hour) }], false);
  drawChart(Chart, "chart-dealers", stats.dealers.map((d) => dealerName(d.dealer)),
            [{ label: "hands per hour", data: stats.dealers.map((d) => d.hands_per_hour) }], false);
  const irregular = stats.irregularities;
  const tables = byKind(irregular.by_table, "table", irregular.kinds);
  drawChart(Chart, "chart-irregular-tables", tables.labels, tables.datasets, true);
  const dealers = byKind(irregular.by_dealer, "dealer", irregular.kinds);
  drawChart(Chart, "chart-irregular-dealers", dealers.labels.map(dealerName), dealers.datasets, true);
  drawChart(Chart, "chart-durations",
            stats.durations.bins.map((b) => (b.to === null ? `${b.from} s +` : `${b.from}-${b.to} s`)),
            [{ label: "hands", data: stats.durations.bins.map((b) => b.hands) }], false);
}

function setUpStats() {
  const period = $("#stats-period");
  period.addEventListener("change", () => {
    for (const label of document.querySelectorAll("#stats-panel .custom")) label.hidden = period.value !== "custom";
    if (period.value !== "custom") loadStats();
  });
  $("#stats-load").addEventListener("click", loadStats);
  $("#stats-csv").addEventListener("click", () => { $("#stats-csv").href = `/api/stats/hands.csv?${statsQuery()}`; });
  $("#stats-csv").href = `/api/stats/hands.csv?${statsQuery()}`;
  // The charts are drawn when the panel first comes into view (the library loads then).
  new IntersectionObserver((entries, observer) => {
    if (entries.some((e) => e.isIntersecting)) { observer.disconnect(); loadStats(); }
  }).observe($("#stats-panel"));
}

function line(label, parts) {
  const div = el("div", "line", label);
  for (const part of parts) div.append(el("b", null, part));
  return div;
}

function drawH4h() {
  const p = state.h4h || { on: false, playing: [], finished: [], ready: false };
  const box = $("#h4h");
  setText($(".state", box), p.on ? "ON" : "off");
  setText($(".playing", box), p.playing.join(", ") || "-");
  setText($(".finished", box), p.finished.join(", ") || "-");
  $("#h4h-release").disabled = !p.ready;
}

function drawReplies() {
  const list = $("#replies");
  const commands = Object.values(state.commands).sort((a, b) => b.sent_at - a.sent_at).slice(0, 30);
  list.replaceChildren(...commands.map((c) => {
    const reply = c.reply;
    const li = el("li", reply ? (reply.ok ? "ok" : "error") : "waiting");
    li.dataset.transaction = c.transaction;
    li.append(`${c.command} to table ${c.table} by ${c.sent_by}: `,
              el("span", "result", reply ? (reply.ok ? "done" : reply.error) : "waiting for the table"));
    return li;
  }));
}

// The open table's seats in its dialog, as its updates come.
function drawDialogSeats() {
  const dialog = $("#table-dialog");
  if (dialog.open && state.openTable) {
    const t = state.tables[state.openTable];
    drawSeats(t ? t.seats || [] : []);
  }
}

// ------------------------------------------------------------------ actions
function notice(text) {
  const box = $("#alert-notice");
  box.textContent = shown(text);
  box.hidden = !text;
}

async function acknowledge(id, button, event) {
  if (event && event.detail > 1) return;  // the list moved under a double tap
  button.disabled = true;
  try {
    const done = await api(`/api/alerts/${id}/ack`, {});
    applyUpdate({ kind: "alert", alert: done }, true);
    notice(done.acked_by && state.me && done.acked_by !== state.me.user
      ? `Already done by ${done.acked_by}: ${state.labels[done.kind] || done.kind} at table ${done.table}.` : "");
    draw();
  } catch (e) { button.disabled = false; alert(e.message); }
}

async function acknowledgeTable(table, ids, button, event) {
  if (event && event.detail > 1) return;  // the next table's group slid under a double tap
  button.disabled = true;
  try {  // the stream updates every page
    await api(`/api/tables/${encodeURIComponent(table)}/alerts/ack`, { alerts: ids });
  } catch (e) { button.disabled = false; alert(e.message); }
}

async function reopen(id, button, event) {
  if (event && event.detail > 1) return;
  button.disabled = true;
  try {
    applyUpdate({ kind: "alert", alert: await api(`/api/alerts/${id}/reopen`, {}) }, true);
    draw();
  } catch (e) { button.disabled = false; alert(e.message); }
}

// What the floor confirms before it changes every table's clock at once.
function clockQuestion(action, value) {
  const c = state.clock;
  const running = c && c.structure;
  const where = running ? `${c.structure} is at ${c.on_break ? "a break" : `level ${c.level}`}` : "";
  if (action === "stop" && running) return `Stop the tournament clock? ${where}; every table's clock stops, and Start begins again at level 1.`;
  if (action === "level" && running) return `Jump every table to level ${value}? ${where}.`;
  if (action === "start" && running) return `Start ${value} from level 1? ${where}, and is replaced.`;
  return null;
}

async function loadStructures() {
  const select = $("#structure");
  try {
    state.structures = await api("/api/structures");
  } catch (e) { return; }
  select.replaceChildren(...state.structures.filter((s) => !s.problem).map((s) => {
    const option = el("option", null, `${s.title || s.name} (${s.levels} levels, ${s.first} for ${s.minutes} min)`);
    option.value = s.name;
    option.dataset.label = option.textContent;
    return option;
  }));
  showRunningStructure();
}

// The list names the structure that is running, and shows it until the floor picks another.
function showRunningStructure() {
  const select = $("#structure");
  const running = state.clock && state.clock.structure;
  for (const option of select.options) {
    option.textContent = option.dataset.label + (option.value === running ? " \u2014 running" : "");
  }
  if (running && select.dataset.picked !== "1" && [...select.options].some((o) => o.value === running)) {
    select.value = running;
  }
}

// The room clock's TV link (its key after "#"), and the floor's way to withdraw it (a link
// that leaked, a TV taken away): the TVs showing it say so, and the new one is shown here.
// Answers come in any order (a withdrawal's reply, the GET a withdrawal's log line starts,
// here and on every other tablet): the link shown is the highest generation seen, never an
// older answer over a newer one.
function showTvLink(link) {
  if (state.tvLink && link.generation <= state.tvLink.generation) return;
  state.tvLink = link;
  const a = $("#tv-link");
  a.href = link.path;
  a.textContent = `Room clock for a TV: ${window.location.origin}/tv#…`;
  a.hidden = false;
  $("#tv-link-withdraw").hidden = false;
}

function loadTvLink() {
  api("/api/tv-link").then(showTvLink).catch(() => {});
}

async function withdrawTvLink() {
  // The link shown when the question is asked is the one withdrawn: if another tablet
  // withdraws it meanwhile, the hub refuses this (409) instead of withdrawing the new one.
  const generation = state.tvLink.generation;
  if (!(await confirmed("Withdraw the room clock's TV link? Every TV showing it stops and " +
                        "says so; open the new link on the TVs.", "Withdraw the link"))) return;
  const reply = clockReply();
  try {
    showTvLink(await api("/api/tv-link/withdraw", { generation }));
    reply("ok", "TV link withdrawn: open the new one on the TVs");
  } catch (e) {
    if (e.body && e.body.current) showTvLink(e.body.current);
    reply("error", `TV link: ${e.message}`);
  }
}

// The clock's reply line answers the newest question asked on this tablet: an older one's
// "done" coming late (two connections, a busy tablet) is not written over a newer one's. A
// refusal always is, whenever it comes: it names its action, and the floor must see it.
let clockAsked = 0;
function clockReply() {
  const asked = ++clockAsked;
  return (kind, text) => {
    if (asked !== clockAsked && kind === "ok") return;
    const line = $("#clock-reply");
    line.className = `reply ${kind}`;
    line.textContent = shown(text);
  };
}

async function clockCommand(action, value) {
  const reply = clockReply();
  try {
    await api("/api/clock", { action, value });
    reply("ok", `clock ${action}: done`);
  } catch (e) {
    reply("error", `clock ${action}: ${e.message}`);
  }
}

// The page's own question (a tablet has no good native one): resolves true on Confirm.
// A tired finger's taps: the second click of a double click (event.detail 2) must not act on
// whatever the first one moved under it (the next table's "Acknowledge all", the card under
// a closing dialog), and a table card does not open just after a dialog closed.
const SETTLE_MS = 600;
let settledAt = 0;
const settle = () => { settledAt = performance.now() + SETTLE_MS; };
const unsettled = (event) => (event && event.detail > 1) || performance.now() < settledAt;

function confirmed(question, yes = "Confirm") {
  const dialog = $("#confirm");
  $(".question", dialog).textContent = shown(question);
  $(".yes", dialog).textContent = yes;
  return new Promise((resolve) => {
    const opened = performance.now();
    const answer = (value) => (event) => {
      // The second click of the double click that opened it is no answer.
      if (value && event.detail > 1) return;
      dialog.close(); settle(); resolve(value);
    };
    $(".yes", dialog).onclick = answer(true);
    $(".no", dialog).onclick = answer(false);
    dialog.oncancel = () => { settle(); resolve(false); };
    dialog.showModal();
    dialog.dataset.opened = String(opened);  // for the tests: when a Confirm counts
  });
}

async function tableCommand(name, command, body) {
  const reply = $("#table-dialog .reply");
  try {
    await api(`/api/tables/${encodeURIComponent(name)}/cmd/${command}`, body);
    reply.className = "reply ok";
    reply.textContent = command === "seating"
      ? `table ${name}'s seating set: the table takes it at its next hand`
      : `${command} sent to table ${name}`;
  } catch (e) {
    reply.className = "reply error";
    reply.textContent = shown(`${command}: ${e.message}`);
  }
}

// A bust-out is the hub's: the seat leaves its seating at once, whatever the table shows yet
// (a second bust in the same hand keeps the first), and the table deals without it next hand.
async function bustSeat(table, seat) {
  const reply = $("#table-dialog .reply");
  try {
    const bust = await api(`/api/tables/${encodeURIComponent(table)}/bust`, { seat });
    reply.className = "reply ok";
    reply.textContent = `${bust.player ? bust.player + ", " : ""}table ${table} seat ${seat} is out` +
      (bust.place ? ` (place ${bust.place})` : "");
  } catch (e) {
    reply.className = "reply error";
    reply.textContent = shown(`bust seat ${seat}: ${e.message}`);
  }
}

function drawSeats(seats) {
  const box = $("#table-dialog .seats");
  box.replaceChildren(...seats.map((seat) => {
    const who = playerAt(state.openTable, seat);
    const button = el("button", "seat-bust", `${seat}${who ? " " + who.name : ""} bust`);
    button.dataset.seat = seat;
    button.addEventListener("click", async () => {
      const table = state.openTable;
      const named = who ? `${who.name} (seat ${seat})` : `seat ${seat}`;
      if (await confirmed(`Bust ${named} at table ${table}? The table takes seat ${seat} out ` +
                          "of the game (Undo, in the bust-outs, brings it back).", `Bust seat ${seat}`)) {
        bustSeat(table, seat);
      }
    });
    return button;
  }));
  if (!seats.length) box.textContent = "-";
}

async function openTable(name) {
  state.openTable = name;
  const dialog = $("#table-dialog");
  $(".name", dialog).textContent = name;
  $(".reply", dialog).textContent = "";
  const t = state.tables[name];
  drawSeats(t ? t.seats || [] : []);
  $(".seating", dialog).value = t && t.seats ? t.seats.join(",") : "";
  const hands = $(".hands", dialog);
  hands.textContent = "loading";
  if (!dialog.open) {
    $("#dialog-shade").hidden = false;
    dialog.show();
  }
  // The panel first, its hands after: asking for them (and writing them out, were the answer
  // quick) before the first frame kept the tap from showing on an older tablet.
  await afterNextFrame();
  if (state.openTable !== name || !dialog.open) return;  // closed, or another table opened
  try {
    const history = await api(`/api/tables/${encodeURIComponent(name)}/hands?n=20`);
    if (state.openTable !== name) return;
    hands.replaceChildren(...history.hands.reverse().map((h) => {
      const div = el("div", "hand");
      div.dataset.hand = h.hand;
      div.append(el("b", null, `hand ${h.hand}`), h.dealer ? ` dealer ${dealerName(h.dealer)}` : "");
      for (const e of h.events) div.append(el("div", `event ${e.type}`, describe(e)));
      return div;
    }));
    if (!history.hands.length) hands.textContent = "no hands recorded yet";
  } catch (e) { hands.textContent = shown(e.message); }
}

// Cards as a dealer writes them: A♠ 10♥; a card the viewer may not see is "?".
const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
function cardText(card) {
  if (!card) return "?";
  if (card === "JK") return "joker";
  const rank = card[0] === "T" ? "10" : card[0];
  return SUITS[card[1]] ? `${rank}${SUITS[card[1]]}` : card;
}
const cardsText = (cards) => (cards || []).map(cardText).join(" ");

function seatsText(e) {
  if (e.hole) {
    return Object.entries(e.hole).map(([seat, cards]) =>
      `seat ${seat} ${cards.length ? cardsText(cards) : "no cards"}`).join("; ");
  }
  return Object.entries(e.hole_counts || {}).map(([seat, n]) => `seat ${seat}: ${n} cards`).join("; ");
}

const OUTCOMES = { complete: "played out", misdeal: "MISDEAL: reshuffled and dealt again", void: "VOID: bets returned" };

// Blinds as a dealer calls them: "SB seat 4 100, BB seat 6 200" (amounts when a clock runs).
function blindsText(e) {
  const amounts = e.blinds || {};
  const small = e.small_blind == null ? "no small blind (dead)"
    : `SB seat ${e.small_blind}${amounts.sb != null ? " " + amounts.sb : ""}`;
  const big = `BB seat ${e.big_blind}${amounts.bb != null ? " " + amounts.bb : ""}`;
  return [small, big, amounts.ante ? `ante ${amounts.ante}` : null].filter(Boolean).join(", ");
}

// A made hand in words with its cards; a record stored before names were kept reads its label.
function madeText(name, cards, label) {
  if (!name && !label) return null;
  const words = name || label.split(" (")[0].toLowerCase();
  const shownCards = cards || ((label.match(/\(([^)]*)\)/) || [])[1] || "").match(/../g);
  return shownCards ? `${words} (${cardsText(shownCards)})` : words;
}

function showdownText(e) {
  const lines = Object.entries(e.best || {}).map(([seat, made]) => {
    const high = madeText(made.high_name, made.high_cards, made.high);
    const low = madeText(made.low_name, made.low_cards, made.low);
    return `seat ${seat} ${[high || "no hand", low ? "low " + low : null].filter(Boolean).join(", ")}`;
  });
  const anyHand = Object.values(e.best || {}).some((made) => made.high || made.high_name);
  if (!lines.length || !anyHand) return "no showdown";
  const best = e.best_hand || {};
  const seatsOf = (list) => list.map((s) => `seat ${s}`).join(" and ");
  const winners = [best.high && best.high.length ? `best hand ${seatsOf(best.high)}` : null,
                   best.low && best.low.length ? `best low ${seatsOf(best.low)}` : null].filter(Boolean);
  return `showdown: ${lines.join("; ")}` + (winners.length ? ` \u2014 ${winners.join(", ")}` : "");
}

function describe(e) {
  if (e.type === "hand.started") {
    const what = `${e.game}, button seat ${e.button}, ${blindsText(e)}, level ${e.level ?? "none"}`;
    return e.redeal ? `REDEAL ${e.redeal}: ${what}` : `dealt: ${what}`;
  }
  if (e.type === "hand.level") {
    const amounts = e.blinds ? `: blinds ${e.blinds.sb}/${e.blinds.bb}${e.blinds.ante ? ", ante " + e.blinds.ante : ""}` : "";
    return `level ${e.level ?? "none"} from the first card${amounts}`;
  }
  if (e.type === "hand.ended") {
    const board = (e.board || []).length ? `board ${cardsText(e.board)}` : "no board";
    return `${OUTCOMES[e.outcome] || e.outcome}; ${board}; ${seatsText(e)}`;
  }
  if (e.type === "hand.record") return showdownText(e);
  if (e.type === "ruling") return `ruling: ${e.text}`;
  if (e.type === "irregularity") return `irregularity: ${e.kind.replaceAll("_", " ")}${e.card ? " " + cardText(e.card) : ""}`;
  return e.type;
}

// The floor log: read once, then each new line arrives on the event stream.
async function loadLog() {
  try {
    state.log = await api("/api/log");
    drawLog();
  } catch (e) { $("#log").textContent = shown(e.message); }
}

// A floor log line as a sentence: "maria acknowledged the misdeal at table t1".
const seatList = (seats) => (seats && seats.length ? seats.join(", ") : "none");
const CLOCK_SAID = {
  start: (v) => `started the clock${v ? ` (${v})` : ""}`, pause: () => "paused the clock",
  resume: () => "resumed the clock", add: (v) => `added ${Math.round((Number(v) || 60) / 60)} min to the clock`,
  level: (v) => `jumped the clock to level ${v}`, stop: () => "stopped the clock",
  break: (v) => (v === "end" ? "ended the break" : "started a break"),
  "hand-for-hand": (v) => `turned hand-for-hand ${v === "off" || v === false ? "off" : "on"}`,
};
function logSentence(line) {
  const d = line.detail || {};
  const who = line.user;
  const kind = (k) => (state.labels[k] || String(k || "").replaceAll("_", " ")).toLowerCase();
  const [area, name] = line.action.split("/");
  if (line.action === "acknowledge") return `${who} acknowledged the ${kind(d.kind)} alert at table ${d.table}`;
  if (line.action === "re-open") return `${who} re-opened the ${kind(d.kind)} alert at table ${d.table}`;
  if (line.action === "acknowledge all") return `${who} acknowledged ${d.alerts} alert${d.alerts === 1 ? "" : "s"} at table ${d.table}`;
  if (line.action === "confirm balance") return `${who} confirmed the balancing of tables ${seatList(d.tables)}`;
  if (line.action === "confirm break") return `${who} confirmed breaking table ${seatList(d.tables)}`;
  if (line.action === "cancel balance") return `${who} withdrew the confirmed move`;
  if (line.action === "tv-link/withdraw") return `${who} withdrew the TV link and made a new one`;
  if (line.action === "players-link/withdraw") return `${who} withdrew the players' screen link and made a new one`;
  if (line.action === "players/announce") return `${who} announced on the players' screen: “${d.text}”`;
  if (line.action === "players/take-down") return `${who} took down the announcement “${d.text}”`;
  if (line.action === "chips/count") {
    const stacks = Object.entries(d.stacks || {}).map(([name, chips]) => `${name} ${Number(chips).toLocaleString()}`);
    return `${who} counted table ${d.table}'s stacks: ${stacks.join(", ") || "none"}`;
  }
  if (line.action === "break table" || line.action === "balance tables") {
    const moves = (d.moves || []).map(moveText).join("; ");
    return `${who} ${line.action === "break table" ? "broke a table" : "balanced the tables"}: ${moves || "no moves"}`;
  }
  if (line.action === "bust-out") {
    return `${who} busted ${d.player ? d.player + " at " : ""}table ${d.table} seat ${d.seat}` +
      (d.place ? ` (${ordinal(d.place)}${d.prize ? `, ${money(d.prize)}` : ""})` : "");  // money: payouts.js
  }
  if (line.action === "bust-out undone") {
    return `${who} undid the bust-out of ${d.player ? d.player + " at " : ""}table ${d.table} seat ${d.seat}`;
  }
  if (line.action === "seating") return `${who} set table ${d.table}'s seats to ${seatList(d.seats)}`;
  if (line.action === "tournament over") return `the tournament is over: ${d.winner} wins`;
  if (line.action === "tournament open again") return "the tournament is open again (the last bust-out undone)";
  if (line.action === "broadcast/feature") {
    return `${who} ${d.featured ? "featured" : "stopped featuring"} table ${d.table} on the broadcast feed`;
  }
  if (line.action === "broadcast/delay") return `${who} set the broadcast feed's security delay to ${d.seconds / 60} min`;
  if (line.action === "broadcast/fold") {
    return `${who} marked seat ${d.seat} ${d.folded ? "folded" : "not folded"} in hand ${d.hand} at table ${d.table} on the broadcast feed`;
  }
  if (line.action === "dealers/name") {
    return d.name ? `${who} named badge ${d.badge}: ${d.name}` : `${who} took the name off badge ${d.badge}`;
  }
  if (area === "payouts") return payoutLogSentence(line);  // payouts.js
  if (area === "roster") {
    if (name === "add") return `${who} entered ${d.name}`;
    if (name === "take-back") return `${who} took back ${d.name}'s ${d.what}`;
    if (name === "import") {
      return `${who} imported ${d.players} entrants from a CSV` +
        (d.ignored_columns ? ` (columns not read: ${d.ignored_columns.join(", ")})` : "");
    }
    if (name === "re-entry") return `${who} recorded a re-entry for ${d.name}`;
    if (name === "remove") return `${who} removed ${d.name}, entered by mistake`;
    if (name === "no-show") return `${who} removed ${d.name} as a no-show, refunded ${d.refund}`;
    if (name === "alternate") return `${who} added ${d.name} as alternate ${d.position}`;
    if (name === "alternate-seated") return `${d.name}, the first alternate, took table ${d.table} seat ${d.seat}`;
    if (name === "alternate-dropped") return `${who} took ${d.name} off the alternates list`;
    if (name === "add-on") return `${who} recorded an add-on for ${d.name}`;
    if (name === "clear") return `${who} cleared the roster (${d.players} players) for a new tournament`;
    if (name === "final-draw") return `${who} drew the final table at table ${d.table}: ${(d.seats || []).join(", ")}`;
    if (name === "draw") {
      return `${who} drew seats: ` + Object.entries(d.seats || {}).map(([table, seats]) =>
        `table ${table} ${seats.join(", ")}`).join("; ");
    }
  }
  if (area === "clock" && CLOCK_SAID[name]) {
    const said = `${who} ${CLOCK_SAID[name](d.value)}`;
    return d.reason ? `${said}: ${d.reason}` : said;
  }
  if (area === "cmd") {
    const at = `table ${d.table}`;
    if (name === "seating") return `${who} set ${at}'s seats to ${seatList(d.seats)}`;
    if (name === "deck-check") {
      return d.action === "start" ? `${who} started a deck check at ${at}${d.deck ? ` (deck ${d.deck})` : ""}`
        : `${who} ${d.action === "finish" ? "finished" : "cancelled"} the deck check at ${at}`;
    }
    if (name === "replay") return `${who} asked ${at} to send its events again from ${d.from_seq}`;
    if (name === "status") return `${who} asked ${at} for its status`;
    if (name === "hand-for-hand") return `${who} told ${at}: hand-for-hand ${d.state}`;
    if (name === "clock") return `${who} set ${at}'s clock (${d.action}${d.structure ? " " + d.structure : ""})`;
  }
  const rest = Object.entries(d).filter(([k]) => k !== "transaction")
    .map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
  return `${who}: ${line.action}${rest ? " (" + rest + ")" : ""}`;
}

function drawLog() {
  const list = $("#log");
  list.replaceChildren(...state.log.map((line) =>
    el("li", null, `${venueTime(line.ts)} ${logSentence(line)}`)));
  if (!state.log.length) list.textContent = "nothing yet";
}

function setUpDialog() {
  const dialog = $("#table-dialog");
  const value = (cls) => $(cls, dialog).value.trim();
  $(".close", dialog).addEventListener("click", () => { state.openTable = null; dialog.close(); });
  dialog.addEventListener("close", () => { $("#dialog-shade").hidden = true; });
  // Not modal (openTable): Escape closes it here, unless a question is asked on top of it.
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && dialog.open && !$("#confirm").open) $(".close", dialog).click();
  });
  $(".send-seating", dialog).addEventListener("click", async () => {
    const table = state.openTable;
    const seats = value(".seating").split(/[ ,]+/).filter(Boolean).map(Number);
    const now = (state.tables[table] || {}).seats || [];
    if (await confirmed(`Set table ${table}'s seats to ${seats.join(", ") || "none"} (now ` +
                        `${now.join(", ") || "none"})?`, "Set seating")) {
      tableCommand(table, "seating", { seats });
    }
  });
  $(".deck-start", dialog).addEventListener("click", () =>
    tableCommand(state.openTable, "deck-check", { action: "start", deck: value(".deck") }));
  $(".deck-finish", dialog).addEventListener("click", () =>
    tableCommand(state.openTable, "deck-check", { action: "finish" }));
  $(".deck-cancel", dialog).addEventListener("click", () =>
    tableCommand(state.openTable, "deck-check", { action: "cancel" }));
  $(".replay", dialog).addEventListener("click", () =>
    tableCommand(state.openTable, "replay", { from_seq: Number(value(".from-seq")) }));
  $(".status-cmd", dialog).addEventListener("click", () => tableCommand(state.openTable, "status", {}));
}

// Seconds before the page asks for its stream again after the hub refused it; doubled at each
// refusal in a row, up to RECONNECT_MOST.
const RECONNECT_FIRST = 1;
const RECONNECT_MOST = 15;
let reconnectIn = RECONNECT_FIRST;

function connect() {
  const source = new EventSource("/api/stream");
  source.addEventListener("snapshot", (m) => {
    reconnectIn = RECONNECT_FIRST;
    applySnapshot(JSON.parse(m.data));
    document.body.dataset.live = "1";
    draw();
  });
  source.addEventListener("update", (m) => { applyUpdate(JSON.parse(m.data)); draw(); });
  source.addEventListener("error", () => {
    document.body.dataset.live = "";
    drawLink();
    // A lost connection the browser tries again by itself; a refusal (a busy hub's 503, too
    // many tabs' 429, the session over) it never does: a tablet left showing "reconnecting"
    // for good, its alerts unheard. Asked again here, later each time; gone to the login
    // page once the session is over.
    if (source.readyState === EventSource.CLOSED) {
      setTimeout(reconnect, reconnectIn * 1000);
      reconnectIn = Math.min(reconnectIn * 2, RECONNECT_MOST);
    }
  });
}

async function reconnect() {
  try {
    const response = await fetch("/api/me", { signal: AbortSignal.timeout(10000) });
    if (response.status === 401) { window.location = "/login"; return; }
  } catch (e) {
    // The hub not answering: its stream is asked for all the same, and refused again if so.
  }
  connect();
}

// Back (the browser's, an Android tablet's) stays in the dashboard: it closes the dialog on
// top, if one is open, and otherwise does nothing (Log out leaves). A floor member who went
// Back mid-shift found the login page, or another site, with alerts going unheard.
function guardBack() {
  history.pushState({ dashboard: true }, "");
  window.addEventListener("popstate", () => {
    const open = [...document.querySelectorAll("dialog[open]")].pop();
    if (open) {
      const close = $(".close", open);
      if (close) close.click();
      else { open.dispatchEvent(new Event("cancel")); open.close(); }
    }
    history.pushState({ dashboard: true }, "");
  });
}

async function startDashboard() {
  try {
    state.me = await api("/api/me");
  } catch (e) { window.location = "/login"; return; }
  $("#me").textContent = `${state.me.user} (${state.me.role})`;
  useVenueLocale(state.me.locale, state.me.time_zone);
  for (const permission of state.me.may) document.body.classList.add(`may-${permission}`);
  for (const button of document.querySelectorAll("[data-clock]")) {
    button.addEventListener("click", async () => {
      const action = button.dataset.clock;
      let value = button.dataset.value ?? null;
      if (action === "add") value = Number(value);
      if (action === "start") value = $("#structure").value;
      if (action === "level") value = Number($("#level").value);
      const question = clockQuestion(action, value);
      if (question && !(await confirmed(question))) return;
      clockCommand(action, value);
    });
  }
  $("#structure").addEventListener("change", () => { $("#structure").dataset.picked = "1"; });
  setUpRoster();
  setUpAlternates();
  setUpDealers();
  setUpPayouts();  // payouts.js
  setUpChips();  // chips.js
  setUpBroadcast();
  loadStructures();
  if (state.me.may.includes("clock")) {
    loadTvLink();
    $("#tv-link-withdraw").addEventListener("click", withdrawTvLink);
  }
  $("#h4h-on").addEventListener("click", () => clockCommand("hand-for-hand", "on"));
  $("#h4h-off").addEventListener("click", () => clockCommand("hand-for-hand", "off"));
  $("#h4h-release").addEventListener("click", async () => {
    try { await api("/api/hand-for-hand/release", {}); } catch (e) { alert(e.message); }
  });
  $("#balance .confirm-move").addEventListener("click", confirmMove);
  $("#balance-refusal .dismiss").addEventListener("click", () => { $("#balance-refusal").hidden = true; });
  $("#log-refresh").addEventListener("click", loadLog);
  const sound = $("#sound");
  sound.value = localStorage.getItem("alertSound") || "all";
  sound.addEventListener("change", () => localStorage.setItem("alertSound", sound.value));
  $("#alert-filter").addEventListener("change", drawAlerts);
  $("#alert-table").addEventListener("input", drawAlerts);
  setUpDialog();
  setUpStats();
  guardBack();
  connect();
  if (state.me.may.includes("command")) loadLog();
  setInterval(() => { if (!pressing()) tick(); repeatSounds(); }, 1000);  // the clocks and "since" count on
}

if (document.body.classList.contains("login")) {
  const error = new URLSearchParams(window.location.search).get("error");
  if (error) { $("#error").textContent = shown(error); $("#error").hidden = false; }
} else {
  startDashboard();
}
