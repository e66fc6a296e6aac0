// The broadcast overlay for OBS Studio's browser source (1920x1080, transparent): a featured
// table's hand as the broadcast feed shows it, behind the hub's security delay. The overlay
// link's key (after "#") opens /api/overlay/stream (Server-Sent Events, read with fetch so
// that the key goes in a header, never in a URL); each "feed" event is drawn as it comes. A
// link refused or withdrawn blanks the graphics and says why. Everything is set with
// textContent.
"use strict";

const $ = (selector) => document.querySelector(selector);
const key = decodeURIComponent(window.location.hash.slice(1));
const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const RETRY_MS = 3000;
let stopped = false;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// A card face: "As" as A and a spade, red for hearts and diamonds; null (the shoe could not
// read it) as a question mark, never as a card.
function card(code) {
  if (typeof code !== "string" || code.length < 2) return el("span", "card unknown", "?");
  const rank = code.slice(0, -1).replace("T", "10");
  const suit = code.slice(-1);
  const face = el("span", `card suit-${suit}`);
  face.dataset.card = code;
  face.append(el("span", "rank", rank), el("span", "pip", SUITS[suit] || suit));
  return face;
}

function short(text, n) {
  const s = String(text || "");
  return s.length > n ? `${s.slice(0, n - 1)}\u2026` : s;
}

const amount = (n) => Number(n).toLocaleString("en-US");

function percent(share) {
  return `${(100 * share).toFixed(share > 0 && share < 0.01 ? 1 : 0)}%`;
}

function blank() {
  $("#bug").hidden = true;
  $("#lower").hidden = true;
  $("#seats").replaceChildren();
  $("#board").replaceChildren();
}

function drawSeat(seat) {
  const item = el("li", "seat");
  item.dataset.seat = String(seat.seat);
  item.dataset.status = seat.status;
  if (seat.folded) item.classList.add("folded");
  item.dataset.folded = seat.folded ? "1" : "";
  const head = el("div", "head");
  head.append(el("span", "name", short(seat.player || `Seat ${seat.seat}`, 22)));
  item.append(head);
  const cards = el("div", "cards");
  cards.append(...seat.cards.map(card));
  item.append(cards);
  const line = el("div", "line");
  if (seat.folded) {
    line.append(el("span", "equity folded-word", "FOLD"));
  } else if (seat.equity) {
    const share = seat.equity.equity;
    const bar = el("span", "bar");
    const fill = el("span", "fill");
    fill.style.width = `${Math.max(0, Math.min(100, 100 * share)).toFixed(1)}%`;
    bar.append(fill);
    line.append(el("span", "equity", percent(share)), bar);
  }
  item.append(line);
  if (seat.status !== "dealt") {
    const mark = el("div", `mark ${seat.status}`);
    mark.append(el("b", "", seat.status), " ", short((seat.why || [])[0], 48));
    mark.title = (seat.why || []).join("; ");
    item.append(mark);
  }
  return item;
}

function draw(feed) {
  const hand = feed.hands.length ? feed.hands[feed.hands.length - 1] : null;
  document.body.dataset.state = "live";
  document.body.dataset.feedTime = String(feed.feed_time);
  $("#problem").hidden = true;
  if (!hand) {
    blank();
    return;
  }
  document.body.dataset.deal = hand.deal;
  $("#bug").hidden = false;
  $("#table").textContent = `Table ${feed.table}`;
  $("#hand").textContent = `Hand ${hand.hand}`;
  $("#level").textContent = hand.level != null ? `Level ${hand.level}` : "";
  const b = hand.blinds;
  $("#blinds").textContent = b ? `${amount(b.sb)} / ${amount(b.bb)}` +
    (b.ante ? ` ante ${amount(b.ante)}` : "") : "";
  $("#lower").hidden = false;
  const board = $("#board");
  board.replaceChildren(...hand.board.map(card));
  const boardMark = $("#board-mark");
  boardMark.hidden = hand.board_status === "dealt";
  boardMark.className = `mark ${hand.board_status}`;
  boardMark.replaceChildren(el("b", "", hand.board_status), " ",
                            short((hand.board_why || [])[0], 60));
  $("#seats").replaceChildren(...hand.seats.map(drawSeat));
  const why = $("#equity-why");
  why.hidden = !hand.equity_why || hand.seats.length === 0;
  why.textContent = short(hand.equity_why, 90);
}

function refused(message) {
  stopped = true;
  blank();
  document.body.dataset.state = "refused";
  $("#problem").textContent = message || "this overlay link is refused";
  $("#problem").hidden = false;
}

// One Server-Sent Event ("event: NAME", "data: JSON" lines, a blank line after).
function handle(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return;  // a keep-alive
  const value = JSON.parse(data.join("\n"));
  if (name === "feed") draw(value);
  else if (name === "refused") refused(value.error);
}

async function read() {
  try {
    const response = await fetch("/api/overlay/stream", { headers: { "X-Overlay-Key": key },
                                                          cache: "no-store" });
    if (response.status === 403 || response.status === 400) {
      const value = await response.json().catch(() => ({}));
      refused(value.error);
      return;
    }
    if (!response.ok || !response.body) throw new Error(response.statusText);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let pending = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let end;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        handle(pending.slice(0, end));
        pending = pending.slice(end + 2);
      }
    }
  } catch (e) {
    // the hub away: try again, the graphics left as they were
  }
  if (!stopped) {
    document.body.dataset.state = "connecting";
    setTimeout(read, RETRY_MS);
  }
}

window.addEventListener("hashchange", () => window.location.reload());  // another link's key
if (key) read(); else refused("this page needs an overlay link: a broadcast login makes one");
