// Seat cards to print: this page's query (?what=draw|moves|table|final|player, with
// &table= or &player=) asks /api/seat-cards; one card a player, each its own printed page.
// Everything is set with textContent: a name is never markup.
"use strict";

const $ = (selector) => document.querySelector(selector);
const HEADINGS = { draw: "The draw", moves: "The latest moves", table: "Table", final: "The final table",
                   player: "One player" };

function element(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function card(c, answer, made) {
  const div = element("article", "card");
  div.dataset.name = c.name;
  div.dataset.table = c.table;
  div.dataset.seat = String(c.seat);
  const event = element("div", "event");
  event.append(element("span", "", answer.title || "Tournament"), element("span", "", answer.venue));
  div.append(event, element("div", "name", c.name));
  if (c.from_table != null) {
    div.append(element("p", "from", `Moves from table ${c.from_table} seat ${c.from_seat}`));
  }
  const place = element("div", "place");
  for (const [label, value] of [["Table", c.table], ["Seat", c.seat]]) {
    const box = element("div");
    box.append(element("small", "", label), element("b", "", String(value)));
    place.append(box);
  }
  div.append(place, element("p", "made", made));
  return div;
}

// A time as the venue writes it (the hub's locale and time zone), else as this browser does.
async function venueTime(ms) {
  let me = {};
  try { me = await (await fetch("/api/me")).json(); } catch (e) { /* the browser's own */ }
  try {
    return new Intl.DateTimeFormat(me.locale || undefined, {
      dateStyle: "medium", timeStyle: "short", timeZone: me.time_zone || undefined }).format(new Date(ms));
  } catch (e) {
    return new Date(ms).toLocaleString();
  }
}

async function load() {
  const query = new URLSearchParams(window.location.search);
  const what = query.get("what") || "draw";
  let heading = HEADINGS[what] || "Seat cards";
  if (what === "table" && query.get("table")) heading = `Table ${query.get("table")}`;
  $("#heading").textContent = `Seat cards: ${heading}`;
  document.title = `Seat cards: ${heading}`;
  let answer;
  try {
    const response = await fetch(`/api/seat-cards?${query}`);
    if (response.status === 401) { window.location = "/login"; return; }
    answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.error || response.statusText);
  } catch (e) {
    $("#problem").textContent = `No seat cards: ${e.message}`;
    $("#problem").hidden = false;
    document.body.dataset.ready = "1";
    return;
  }
  const made = `Printed ${await venueTime(answer.made_at)}`;
  $("#cards").replaceChildren(...answer.cards.map((c) => card(c, answer, made)));
  const n = answer.cards.length;
  $("#summary").textContent = `${n} card${n === 1 ? "" : "s"}, one a page`;
  $("#print").disabled = false;
  document.body.dataset.ready = "1";
}

$("#print").addEventListener("click", () => window.print());
load();
