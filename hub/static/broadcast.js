// The broadcast operator's desk (issue 49): a broadcast login's page. The featured tables and
// the delay (/api/broadcast), the chosen table's hand as the feed shows it, behind the delay
// (its Server-Sent Events, read with fetch so that a refusal's status and words reach the
// operator), its earlier hands on the feed to replay one (the hub's JSON of the table's last
// hands, as of the feed's time the hub sets: never newer), a tap per seat for a fold, and the
// overlay links for OBS Studio. It holds no data
// of its own: everything comes from /api/broadcast..., which no floor role reaches. Everything
// is set with textContent: a player's name or a ruling is never markup.
"use strict";

const $ = (selector, root = document) => root.querySelector(selector);
const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const RETRY_MS = 3000;        // the stream lost: asked again this soon
const BUSY_RETRY_MS = 15000;  // too many streams for this login: asked again later
const OVERVIEW_MS = 10000;    // the featured tables, the delay and the links: the floor's
                              // or another operator's changes, looked at this often
const STORED = "broadcastDeskTable";
const HISTORY = 20;           // the earlier hands listed to replay (the hub gives at most 50)

// feed: the stream's newest event (the live hand); history: the table's last hands as the hub
// gave them last; replay: the hand being replayed instead of the live one (null: live);
// seenLive: the live deal the operator last had on screen, so that a newer one is announced.
const state = { me: null, overview: null, table: null, feed: null, feedAt: 0, links: [],
                stream: null, ended: false, history: null, historyFor: null, replay: null,
                seenLive: null };

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// Times as the venue writes them (the hub's --locale and --time-zone; the browser's own
// without them).
let venueTime = (ms) => new Date(ms).toLocaleTimeString();
function useVenueLocale(locale, timeZone) {
  try {
    const format = new Intl.DateTimeFormat(locale || undefined,
      { ...(timeZone ? { timeZone } : {}), timeStyle: "medium" });
    venueTime = (ms) => format.format(new Date(ms));
  } catch (e) { /* a tag this browser does not know: its own */ }
}

function duration(seconds) {
  if (!seconds) return "0 s";
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [h ? `${h} h` : "", m ? `${m} min` : "", s ? `${s} s` : ""].filter(Boolean).join(" ");
}

function drawDelay(seconds) {
  $("#delay").textContent = seconds ? `Delay ${duration(seconds)}` : "No delay: the feed is live";
}

const percent = (share) => `${(100 * share).toFixed(share > 0 && share < 0.01 ? 1 : 0)}%`;
const amount = (n) => Number(n).toLocaleString("en-US");

// ------------------------------------------------------------------ saying what went wrong
// Every refusal in words: whose doing it is and what to do about it, with the hub's own reason.
class Refusal extends Error {
  constructor(status, message, body) { super(message); this.status = status; this.body = body; }
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  let response;
  try {
    response = await fetch(path, { ...options, cache: "no-store" });
  } catch (e) {
    throw new Refusal(0, "no answer");
  }
  const value = await response.json().catch(() => ({}));
  if (!response.ok) throw new Refusal(response.status, value.error || response.statusText, value);
  return value;
}

function inWords(what, error) {
  const reason = String(error.message).replace(/[.\s]+$/, "");
  switch (true) {
    case error.status === 0:
      return `${what}: the hub did not answer (this device's network, or the hub is down). ` +
        "Check the network and try again.";
    case error.status === 401:
      return `${what}: this login's session has ended (logged out, timed out, or its password ` +
        "changed). Log in again.";
    case error.status === 403:
      return `${what}: the hub refused this login: ${reason}. Ask whoever runs the hub.`;
    case error.status === 429:
      return `${what}: ${reason} (another tab or device of this login holds them).`;
    case error.status >= 500:
      return `${what}: the hub failed (${error.status}: ${reason}), not you. Try again in a ` +
        "moment; if it goes on, tell whoever runs the hub.";
    default:  // the hub says what was wrong with what was asked
      return `${what}: refused by the hub: ${reason}.`;
  }
}

function say(text, ok) {
  const reply = $("#reply");
  reply.className = ok ? "reply ok" : "reply error";
  reply.textContent = text;
}

// A refusal that stops the desk (the session over, the role or the line refused) or holds
// its stream back stays up top until the same question is answered (the feed's overview and
// the table's stream each clear only their own); a 401 links to the login page.
let problemOf = null;
function problem(text, status, source) {
  problemOf = source;
  const shown = $("#problem");
  shown.replaceChildren(text);
  if (status === 401) {
    const again = el("a", "", "Log in again");
    again.href = "/login";
    shown.append(" ", again);
  }
  shown.hidden = false;
}

function noProblem(source) {
  if (problemOf === source) $("#problem").hidden = true;
}

// ------------------------------------------------------------------ the featured tables
async function loadOverview() {
  try {
    state.overview = await api("/api/broadcast");
  } catch (e) {
    problem(inWords("The feed", e), e.status, "overview");
    if (e.status === 401 || e.status === 403) stop();
    return;
  }
  noProblem("overview");
  const overview = state.overview;
  drawDelay(overview.delay_seconds);
  const names = overview.tables.map((t) => t.table);
  if (!names.includes(state.table)) {
    const kept = localStorage.getItem(STORED);
    choose(names.includes(kept) ? kept : names[0] || null);
  }
  drawTables();
  drawLinkChoices();
}

function drawTables() {
  const names = state.overview ? state.overview.tables.map((t) => t.table) : [];
  $("#tables").replaceChildren(...names.map((name) => {
    const tab = el("button", "tab", `Table ${name}`);
    tab.type = "button";
    tab.dataset.table = name;
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", String(name === state.table));
    tab.addEventListener("click", () => choose(name));
    return tab;
  }));
  $("#no-tables").hidden = names.length > 0;
}

function choose(table) {
  if (table === state.table) return;
  state.table = table;
  state.feed = null;
  state.history = null;
  state.historyFor = null;
  state.replay = null;
  state.seenLive = null;
  if (table) localStorage.setItem(STORED, table);
  drawTables();
  drawHand();
  drawHistory();
  listen();
}

// ------------------------------------------------------------------ the chosen table's stream
function listen() {
  if (state.stream) state.stream.abort();  // one stream at a time: a login has four
  state.stream = null;
  if (!state.table || state.ended) return;
  const controller = new AbortController();
  state.stream = controller;
  read(state.table, controller);
}

function handle(block, table) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length || name !== "feed" || table !== state.table) return;  // a keep-alive
  const before = liveHand();
  state.feed = JSON.parse(data.join("\n"));
  state.feedAt = Date.now();
  const now = liveHand();
  // A hand come on the feed or ended: the earlier hands' list has changed.
  if (!now || !before || now.deal !== before.deal || now.ended_at !== before.ended_at ||
      state.historyFor !== table) {
    loadHistory();
  }
  if (!state.replay) state.seenLive = now ? now.deal : null;
  drawHand();
}

async function read(table, controller) {
  let retry = RETRY_MS;
  try {
    const response = await fetch(`/api/broadcast/tables/${encodeURIComponent(table)}/stream`,
                                 { signal: controller.signal, cache: "no-store" });
    if (!response.ok || !response.body) {
      const value = await response.json().catch(() => ({}));
      const error = new Refusal(response.status, value.error || response.statusText);
      problem(inWords(`Table ${table}'s feed`, error), response.status, "stream");
      if (response.status === 401 || response.status === 403) {
        stop();
        return;
      }
      if (response.status === 429) retry = BUSY_RETRY_MS;
      throw error;
    }
    noProblem("stream");
    live(true);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let pending = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;  // its session ended, or the hub stopped: asked again below
      pending += decoder.decode(value, { stream: true });
      let end;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        handle(pending.slice(0, end), table);
        pending = pending.slice(end + 2);
      }
    }
  } catch (e) {
    if (controller.signal.aborted) return;  // another table chosen
  }
  if (controller.signal.aborted || state.ended) return;
  live(false);
  setTimeout(() => { if (state.stream === controller) read(table, controller); }, retry);
}

function live(yes) {
  document.body.dataset.live = yes ? "1" : "";
  $("#link").textContent = yes ? "live" : "reconnecting to the hub";
  $("#link").className = yes ? "link ok" : "link lost";
}

// The session is over, or this login may not read the feed: the desk stops asking and shows
// nothing of the tables it drew.
function stop() {
  state.ended = true;
  state.feed = null;
  state.history = null;
  state.historyFor = null;
  state.replay = null;
  drawHistory();
  if (state.stream) state.stream.abort();
  state.stream = null;
  drawHand();
  live(false);
  $("#link").textContent = "stopped";
}

// ------------------------------------------------------------------ the hand
function card(code) {
  if (typeof code !== "string" || code.length < 2) {
    const unknown = el("span", "card unknown", "?");
    unknown.title = "a card the shoe could not read";
    return unknown;
  }
  const face = el("span", `card suit-${code.slice(-1)}`);
  face.dataset.card = code;
  face.append(el("span", "rank", code.slice(0, -1).replace("T", "10")),
              el("span", "pip", SUITS[code.slice(-1)] || code.slice(-1)));
  return face;
}

function mark(status, why) {
  const note = el("div", `mark ${status}`);
  note.append(el("b", "", status));
  const reasons = el("ul", "why");
  reasons.append(...(why || []).map((reason) => el("li", "", reason)));
  note.append(reasons);
  return note;
}

function equityText(equity) {
  const parts = [`win ${percent(equity.win)}`, `tie ${percent(equity.tie)}`];
  if (equity.scoop !== undefined) parts.push(`scoop ${percent(equity.scoop)}`);
  return parts.join(" \u00b7 ");
}

function drawSeat(seat, hand, best) {
  const item = el("li", "seat");
  item.dataset.seat = String(seat.seat);
  item.dataset.status = seat.status;
  item.dataset.folded = seat.folded ? "1" : "";
  if (seat.folded) item.classList.add("folded");
  const head = el("div", "head");
  head.append(el("span", "number", `Seat ${seat.seat}`),
              el("span", "name", seat.player || "(no name on the roster)"));
  if (seat.seat === hand.button) head.append(el("span", "button-chip", "D"));
  const cards = el("div", "cards");
  cards.append(...seat.cards.map(card));
  const odds = el("div", "odds");
  if (seat.folded) odds.append(el("span", "equity", "folded"));
  else if (seat.equity) {
    odds.append(el("span", "equity", percent(seat.equity.equity)),
                el("span", "split", equityText(seat.equity)));
  }
  if (!seat.folded && best && best[String(seat.seat)] && best[String(seat.seat)].high_name) {
    odds.append(el("span", "made", best[String(seat.seat)].high_name));
  }
  const tap = el("button", seat.folded ? "fold undo" : "fold",
                 seat.folded ? "Folded: undo" : "Fold");
  tap.type = "button";
  tap.setAttribute("aria-pressed", String(seat.folded));
  tap.setAttribute("aria-label", seat.folded
    ? `Seat ${seat.seat} folded: tap to take the fold back`
    : `Seat ${seat.seat} folds`);
  tap.addEventListener("click", () => fold(hand, seat, !seat.folded, tap));
  item.append(head, cards, odds, tap);
  if (seat.status !== "dealt") item.append(mark(seat.status, seat.why));
  return item;
}

function liveHand() {
  const feed = state.feed;
  return feed && feed.hands.length ? feed.hands[feed.hands.length - 1] : null;
}

// The replay's banner: which hand, that it is not live, and a live hand come meanwhile.
function drawReplayBanner(hand) {
  const banner = $("#replay-banner");
  banner.hidden = !hand;
  document.body.dataset.mode = hand ? "replay" : "live";
  if (!hand) return;
  $("#replay-what").textContent = `Hand ${hand.hand}` +
    `${hand.redeal ? ` (redeal ${hand.redeal})` : ""}, dealt ${venueTime(hand.started_at)}: ` +
    "not live. The overlay shows the live hand.";
  const live = liveHand();
  const news = $("#replay-news");
  news.hidden = !live || live.deal === state.seenLive || live.deal === hand.deal;
  if (!news.hidden) {
    news.textContent = `Hand ${live.hand} is on the feed now` +
      `${live.ended_at == null ? " (being dealt)" : ""}: back to live to see it.`;
  }
}

function drawHand() {
  const feed = state.feed;
  const hand = state.replay || liveHand();
  const waiting = $("#waiting");
  $("#hand-title").textContent = !state.table ? "The hand on the feed"
    : state.replay ? `Table ${state.table}: replay of hand ${state.replay.hand}`
      : `Table ${state.table}: the hand on the feed`;
  if (feed) drawDelay(feed.delay_seconds);
  drawReplayBanner(state.replay);
  document.body.dataset.deal = hand ? hand.deal : "";
  $("#board-row").hidden = !hand;
  for (const id of ["#seats", "#irregularities", "#board"]) $(id).replaceChildren();
  for (const id of ["#equity-why", "#voided", "#board-mark"]) $(id).hidden = true;
  $("#hand-head").textContent = "";
  if (!hand) {
    waiting.hidden = !state.table || state.ended;
    waiting.textContent = !feed ? "Connecting to the feed\u2026"
      : `No hand of table ${state.table} on the feed yet: its first hand dealt since it was ` +
        `featured comes once it has ended and the delay (${duration(feed.delay_seconds)}) ` +
        "has passed.";
    return;
  }
  waiting.hidden = true;
  const b = hand.blinds;
  $("#hand-head").textContent = [
    `Hand ${hand.hand}`, hand.redeal ? `redeal ${hand.redeal}` : "",
    hand.game ? hand.game : "", hand.level != null ? `Level ${hand.level}` : "",
    b ? `${amount(b.sb)} / ${amount(b.bb)}${b.ante ? ` ante ${amount(b.ante)}` : ""}` : "",
    `dealt ${venueTime(hand.started_at)}`,
    hand.ended_at == null ? "being dealt" : `ended${hand.outcome ? ` (${hand.outcome})` : ""}`,
  ].filter(Boolean).join(" \u00b7 ");
  $("#board").replaceChildren(...(hand.board.length ? hand.board.map(card)
    : [el("span", "dim", "no card yet")]));
  if (hand.board_status !== "dealt") {
    $("#board-mark").replaceWith(Object.assign(mark(hand.board_status, hand.board_why),
                                               { id: "board-mark" }));
  }
  const best = hand.showdown ? hand.showdown.best : null;
  $("#seats").replaceChildren(...hand.seats.map((seat) => drawSeat(seat, hand, best)));
  if (hand.equity_why) {
    $("#equity-why").textContent = `No equities: ${hand.equity_why}`;
    $("#equity-why").hidden = false;
  }
  $("#irregularities").replaceChildren(...(hand.irregularities || []).map((irregular) => {
    const where = [irregular.card, irregular.seat != null ? `seat ${irregular.seat}` : ""]
      .filter(Boolean).join(", ");
    const item = el("li", "", `${String(irregular.kind || "irregularity").replace(/_/g, " ")}` +
                              `${where ? ` (${where})` : ""}`);
    if (irregular.ruling && irregular.ruling.text) item.append(el("q", "", irregular.ruling.text));
    return item;
  }));
  if (hand.voided && hand.voided.length) {
    $("#voided").textContent = `A misdeal voided ${hand.voided.length} deal` +
      `${hand.voided.length > 1 ? "s" : ""} before this one.`;
    $("#voided").hidden = false;
  }
}

async function fold(tapped, seat, folded, tap) {
  const table = state.table;
  const deal = tapped.deal;
  // No "at", live or replayed: the tap is kept at the feed's time now. The hub orders a
  // seat's taps by the feed's time each is kept at, so the newest tap holds; one kept at a
  // replayed hand's end would lose to a tap made live after that end (a hand stays the live
  // one until the next comes), and taking a mistaken fold back from a replay would not hold.
  const replayed = state.replay !== null && state.replay.deal === deal;
  const asked = { deal, seat: seat.seat, folded };
  const what = (folded ? `Seat ${seat.seat}'s fold` : `Taking seat ${seat.seat}'s fold back`) +
    (replayed ? ` in hand ${tapped.hand}` : "");
  tap.disabled = true;
  try {
    const done = await api(`/api/broadcast/tables/${encodeURIComponent(table)}/folds`, asked);
    say(replayed
      ? `${done.folded ? `Seat ${done.seat} folded` : `Seat ${done.seat}'s fold taken back`} ` +
        `in hand ${tapped.hand}, a replay: its record corrected (the overlay shows the live hand)`
      : done.folded ? `Seat ${done.seat} folded: the overlay dims it within a second`
        : `Seat ${done.seat}'s fold taken back`, true);
    // Shown at once; the stream's next event (live) or the hub's list (a replay) says the
    // same, with the equities moved.
    const shown = replayed ? state.replay : liveHand();
    if (table === state.table && shown && shown.deal === deal) {
      for (const s of shown.seats) if (s.seat === done.seat) s.folded = done.folded;
      drawHand();
    }
    if (table === state.table) loadHistory();
  } catch (e) {
    say(inWords(what, e), false);
    tap.disabled = false;
  }
}

// ------------------------------------------------------------------ earlier hands: a replay
// The table's last hands as the hub gives them: as of the feed's time the hub sets (this page
// asks no time of its own: nothing newer than the delay allows can come), each as its record
// stands now, the folds tapped since included.
let historyAsked = 0;
async function loadHistory() {
  const table = state.table;
  if (!table || state.ended) return;
  const asked = ++historyAsked;
  let feed;
  try {
    feed = await api(`/api/broadcast/tables/${encodeURIComponent(table)}?n=${HISTORY}`);
  } catch (e) {
    // The session's or the line's refusal is the stream's and the overview's to say.
    if (e.status !== 401 && e.status !== 403) say(inWords(`Table ${table}'s earlier hands`, e),
                                                  false);
    return;
  }
  if (asked !== historyAsked || table !== state.table || state.ended) return;  // overtaken
  state.history = feed.hands;
  state.historyFor = table;
  if (state.replay) {  // the replayed hand as the hub holds it now (a fold tapped, say)
    const again = feed.hands.find((h) => h.deal === state.replay.deal);
    if (again) state.replay = again;
  }
  drawHistory();
  drawHand();
}

// What marks a hand in the list: its seats' and board's marks, worst first, and a misdeal's
// redeal.
function marksOf(hand) {
  const statuses = new Set([hand.board_status, ...hand.seats.map((s) => s.status)]);
  const marks = ["void", "uncertain", "corrected"].filter((status) => statuses.has(status));
  if (hand.voided && hand.voided.length) marks.push("redealt");
  return marks;
}

function drawHistory() {
  const list = $("#history");
  const hands = state.history && state.historyFor === state.table ? state.history : [];
  const live = liveHand();
  list.replaceChildren(...[...hands].reverse().map((hand) => {
    const isLive = live !== null && hand.deal === live.deal;
    const item = el("li");
    const pick = el("button", "past quiet");
    pick.type = "button";
    pick.dataset.deal = hand.deal;
    pick.dataset.hand = String(hand.hand);
    pick.dataset.marks = marksOf(hand).join(" ");
    const chosen = state.replay ? state.replay.deal === hand.deal : isLive;
    pick.setAttribute("aria-pressed", String(chosen));
    const folds = hand.seats.filter((s) => s.folded).length;
    const words = [`Hand ${hand.hand}`, venueTime(hand.started_at),
                   hand.ended_at == null ? "being dealt" : hand.outcome || "ended"];
    pick.append(el("b", "number", words[0]), el("span", "when", words[1]),
                el("span", "outcome", words[2]));
    if (folds) pick.append(el("span", "folds", `${folds} folded`));
    for (const status of marksOf(hand)) pick.append(el("span", `chip ${status}`, status));
    if (isLive) pick.append(el("span", "chip live", "live"));
    words.push(...(folds ? [`${folds} folded`] : []), ...marksOf(hand),
               isLive ? "live: tap to go back to live" : "tap to replay it");
    pick.setAttribute("aria-label", words.join(", "));
    pick.addEventListener("click", () => (isLive ? backToLive() : replay(hand)));
    item.append(pick);
    return item;
  }));
  if (!hands.length && state.table && !state.ended) {
    list.append(el("li", "dim", state.historyFor === state.table
      ? "No hand of this table on the feed yet." : "Asking the hub\u2026"));
  }
}

function replay(hand) {
  if (!state.replay) {
    const live = liveHand();
    state.seenLive = live ? live.deal : null;
  }
  state.replay = hand;
  say(`Replaying hand ${hand.hand}: not live`, true);
  drawHistory();
  drawHand();
  // On a tablet the list is below the hand: the replay is brought into view.
  const top = $("#hand-panel").getBoundingClientRect().top;
  if (top < 0 || top > window.innerHeight / 2) $("#hand-panel").scrollIntoView();
  loadHistory();  // its record as the hub holds it this moment
}

function backToLive() {
  state.replay = null;
  const live = liveHand();
  state.seenLive = live ? live.deal : null;
  say("Back to live", true);
  drawHistory();
  drawHand();
}

// ------------------------------------------------------------------ the overlay links
const full = (path) => `${window.location.origin}${path}`;

function drawLinks() {
  $("#links").replaceChildren(...state.links.map((link) => {
    const item = el("li", "overlay-link");
    item.dataset.table = link.table;
    const head = el("div", "link-head");
    head.append(el("b", "", `Table ${link.table}`),
                el("span", "dim", `made by ${link.by} at ${venueTime(link.since)}`));
    const row = el("div", "link-row");
    const field = el("input", "url");
    field.readOnly = true;
    field.value = full(link.path);
    field.setAttribute("aria-label", `table ${link.table}'s overlay link`);
    field.addEventListener("focus", () => field.select());
    const copy = el("button", "copy", "Copy");
    copy.type = "button";
    copy.addEventListener("click", () => copyLink(link, field));
    const withdraw = el("button", "withdraw danger", "Withdraw");
    withdraw.type = "button";
    withdraw.addEventListener("click", () => withdrawLink(link));
    row.append(field, copy, withdraw);
    item.append(head, row);
    return item;
  }));
  if (!state.links.length) {
    $("#links").append(el("li", "dim", "No overlay link: make one for a table below."));
  }
}

function drawLinkChoices() {
  const select = $("#link-table");
  const names = new Set(state.overview ? state.overview.tables.map((t) => t.table) : []);
  const chosen = select.value || state.table;
  const options = [...names].map((name) => {
    const option = el("option", "", `Table ${name}`);
    option.value = name;
    return option;
  });
  select.replaceChildren(...options);
  if (names.has(chosen)) select.value = chosen;
  $("#make-link button").disabled = names.size === 0;
}

async function loadLinks() {
  try {
    state.links = await api("/api/broadcast/overlay-links");
  } catch (e) {
    if (e.status !== 401 && e.status !== 403) say(inWords("The overlay links", e), false);
    return;  // the session's or the line's refusal is up top already
  }
  drawLinks();
}

async function copyLink(link, field) {
  const text = full(link.path);
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {  // no clipboard for this page (plain HTTP to another machine): the old way
    field.focus();
    field.select();
    if (!document.execCommand("copy")) {
      say(`Table ${link.table}'s link: this browser would not copy it. It is selected: ` +
          "copy it with the keyboard (Ctrl+C).", false);
      return;
    }
  }
  say(`Table ${link.table}'s overlay link copied: paste it into the OBS Browser source's URL`,
      true);
}

async function makeLink(event) {
  event.preventDefault();
  const table = $("#link-table").value;
  if (!table) return;
  if (state.links.some((link) => link.table === table)) {
    const yes = await confirmed(`Table ${table} has an overlay link already. Make a new one? ` +
      "The one OBS shows now is withdrawn: its overlay blanks until the new link is pasted " +
      "into OBS.", "Make a new link");
    if (!yes) return;
  }
  try {
    state.links = await api("/api/broadcast/overlay-links", { table });
    drawLinks();
    say(`Table ${table}'s overlay link made: copy it into OBS`, true);
  } catch (e) {
    say(inWords(`Table ${table}'s overlay link`, e), false);
  }
}

async function withdrawLink(link) {
  const yes = await confirmed(`Withdraw table ${link.table}'s overlay link? Whatever shows it ` +
    "(OBS's browser source) blanks within a second and says the link was withdrawn. It cannot " +
    "be brought back: to show the table again, make a new link and paste it into OBS.",
  "Withdraw the link");
  if (!yes) return;
  try {
    state.links = await api("/api/broadcast/overlay-links/withdraw", { table: link.table });
    say(`Table ${link.table}'s overlay link withdrawn: its overlay is blank`, true);
  } catch (e) {
    say(inWords(`Withdrawing table ${link.table}'s overlay link`, e), false);
    loadLinks();  // what the hub holds now (another operator's withdrawal, say)
    return;
  }
  drawLinks();
}

// The page's own question (a tablet has no good native one): resolves true on its yes.
function confirmed(question, yes) {
  const dialog = $("#confirm");
  $(".question", dialog).textContent = question;
  $(".yes", dialog).textContent = yes;
  return new Promise((resolve) => {
    const answer = (value) => () => { dialog.close(); resolve(value); };
    $(".yes", dialog).onclick = answer(true);
    $(".no", dialog).onclick = answer(false);
    dialog.oncancel = () => resolve(false);
    dialog.showModal();
  });
}

// ------------------------------------------------------------------ the start
function tick() {
  if (!state.feed || state.ended) {
    $("#feed-time").textContent = "";
    return;
  }
  // The feed's time moves on with the hub's clock between events.
  const at = state.feed.feed_time + (Date.now() - state.feedAt);
  $("#feed-time").textContent = `Feed at ${venueTime(at)}`;
}

async function start() {
  try {
    state.me = await api("/api/me");
  } catch (e) {
    if (e.status === 401) { window.location = "/login"; return; }
    problem(inWords("Who this login is", e), e.status, "me");
    return;
  }
  $("#me").textContent = `${state.me.user} (${state.me.role})`;
  $("#venue").textContent = state.me.venue;
  useVenueLocale(state.me.locale, state.me.time_zone);
  $("#make-link").addEventListener("submit", makeLink);
  $("#back-to-live").addEventListener("click", backToLive);
  await loadOverview();
  await loadLinks();
  setInterval(() => {
    if (state.ended || document.visibilityState === "hidden") return;
    loadOverview();
    loadLinks();
  }, OVERVIEW_MS);
  setInterval(tick, 1000);
}

start();
