// The players' screen: the players' link's key (after "#") asks the hub every few seconds for
// the seating board and the announcements. Two modes (?show=seats, ?show=news) for a second
// screen; on a phone the same page looks a seat up by name. Everything is set with
// textContent: a name is never markup.
"use strict";

const $ = (selector) => document.querySelector(selector);
const key = decodeURIComponent(window.location.hash.slice(1));
const mode = new URLSearchParams(window.location.search).get("show") === "news" ? "news" : "seats";
const PAGE_SECONDS = 10;  // a board longer than the screen shows its pages in turn
let reading = null;   // the hub's last answer
let shownAs = "";     // that answer as drawn (a new one the same is not drawn again)
let page = 0;
let stopped = false;  // the link was refused: the page asks no more

const narrow = () => window.matchMedia("(max-width: 800px)").matches;
// A name as typed in the lookup matches without its accents or case: "zoe" finds "Zoë".
const plain = (text) => String(text).normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();

function element(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function where(player) {
  const span = element("span", "where");
  if (player.table === null || player.table === undefined) {
    span.textContent = "waiting for a seat";
    return span;
  }
  span.append(element("small", "", "table "), String(player.table), " ",
              element("small", "", "seat "), String(player.seat));
  return span;
}

function seatText(player) {
  return player.table == null ? `${player.name}: waiting for a seat`
    : `${player.name}: table ${player.table}, seat ${player.seat}`;
}

function ago(ts) {
  const minutes = Math.max(0, Math.floor((reading.now - ts) / 60000));
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min ago`;
}

function drawHeader(r) {
  $("#venue").textContent = r.venue;
  $("#title").textContent = r.title ? `\u00b7 ${r.title}` : "";
  $("#status").textContent = r.winner ? `Tournament over: ${r.winner} wins`
    : r.on_break ? "Break" : r.level ? `Level ${r.level}` : "";
}

function drawSeats(r) {
  const list = $("#seats");
  list.replaceChildren(...r.players.map((p) => {
    const li = element("li", p.table == null ? "waiting" : "");
    li.dataset.name = p.name;
    li.dataset.table = p.table == null ? "" : p.table;
    li.dataset.seat = p.seat == null ? "" : String(p.seat);
    li.append(element("span", "name", p.name), where(p));
    return li;
  }));
  if (!r.players.length) list.append(element("li", "waiting", "No players seated yet"));
  const latest = r.announcements[0];
  $("#latest").textContent = latest ? latest.text : "";
  lookUp();
}

// Who the lookup's text matches (every player while it is empty); one match is said in full.
function lookUp() {
  if (!reading) return;
  const wanted = plain($("#find").value.trim());
  const items = [...$("#seats").children].filter((li) => li.dataset.name !== undefined);
  let matches = [];
  for (const li of items) {
    const hit = !wanted || plain(li.dataset.name).includes(wanted);
    li.classList.toggle("match", hit);
    if (hit) matches.push(li);
  }
  const found = $("#found");
  if (!wanted) found.textContent = "";
  else if (!matches.length) found.textContent = "No player of that name is in the game";
  else if (matches.length === 1) {
    const li = matches[0];
    found.textContent = seatText({ name: li.dataset.name, table: li.dataset.table || null,
                                   seat: li.dataset.seat });
  } else found.textContent = `${matches.length} players match: type more of the name`;
  paginate();
}

// A board longer than the screen: the page shown, names down each column; a phone (or a
// name looked up) shows every match to scroll.
function paginate() {
  const list = $("#seats");
  const items = [...list.children];
  const looking = $("#find").value.trim() !== "";
  if (narrow() || looking) {
    list.style.gridAutoFlow = list.style.gridTemplateRows = list.style.gridTemplateColumns = "";
    for (const li of items) li.hidden = looking && !li.classList.contains("match");
    $("#page").textContent = "";
    return;
  }
  // A row's height as the style sheet sets it (--row, in vh): an item on another page has none.
  const rowStyle = getComputedStyle(document.documentElement).getPropertyValue("--row").trim();
  const row = Math.max(1, parseFloat(rowStyle) * (rowStyle.endsWith("vh") ? window.innerHeight / 100 : 1));
  const below = $("#page").offsetHeight + $("#latest").offsetHeight + 24;  // each one line, kept
  const rows = Math.max(1, Math.floor((window.innerHeight - list.getBoundingClientRect().top - below) / row));
  const columns = window.innerWidth >= 1200 ? 3 : 2;
  const size = rows * columns;
  const pages = Math.max(1, Math.ceil(items.length / size));
  page %= pages;
  list.style.gridAutoFlow = "column";
  list.style.gridTemplateRows = `repeat(${Math.min(rows, Math.ceil(Math.min(items.length, size) / columns))}, var(--row))`;
  list.style.gridTemplateColumns = `repeat(${columns}, minmax(0, 1fr))`;
  items.forEach((li, i) => { li.hidden = Math.floor(i / size) !== page; });
  $("#page").textContent = pages > 1 ? `Page ${page + 1} of ${pages} \u00b7 ${items.length} players` : "";
}

function drawNews(r) {
  const notes = r.announcements.map((a) => {
    const li = element("li", "", a.text);
    li.dataset.id = String(a.id);
    li.append(element("time", "", ago(a.ts)));
    return li;
  });
  if (!notes.length) notes.push(element("li", "none", "No announcements"));
  $("#announcements").replaceChildren(...notes);
  const clock = [...r.clock_announcements, ...r.next_announcements.map((a) => `Next level: ${a}`)];
  $("#clock-announcements").replaceChildren(...clock.map((text) => element("li", "", text)));
}

function draw() {
  if (!reading) return;
  drawHeader(reading);
  if (mode === "seats") drawSeats(reading); else drawNews(reading);
}

function refused(message) {
  // This link will not work again: nothing of the room stays up, and the page stops asking.
  stopped = true;
  clearInterval(asking);
  reading = null;
  for (const id of ["#venue", "#title", "#status", "#found", "#latest", "#page"]) $(id).textContent = "";
  for (const id of ["#seats", "#announcements", "#clock-announcements"]) $(id).replaceChildren();
  $("#problem").textContent = message;
  $("#problem").hidden = false;
  document.body.dataset.live = "";
}

async function ask() {
  try {
    const response = await fetch("/api/players-screen", { headers: { "X-Room-Key": key } });
    const value = await response.json().catch(() => ({}));
    if (response.status === 403 || response.status === 400) {
      refused(value.error || "this link is not the players' screen's");
      return;
    }
    if (!response.ok) throw new Error(value.error || response.statusText);
    reading = value;
    $("#problem").hidden = true;
    $("#link").textContent = "";
    $("#link").className = "link";
    document.body.dataset.live = "1";
    const now = JSON.stringify({ ...value, now: 0 });
    if (now !== shownAs || mode === "news") {  // the news's "ago" moves on
      shownAs = now;
      draw();
    }
  } catch (e) {
    $("#link").textContent = "reconnecting to the hub";
    $("#link").className = "link lost";
    document.body.dataset.live = "";
  }
}

$(mode === "seats" ? "#seats-view" : "#news-view").hidden = false;
document.body.dataset.mode = mode;
for (const [id, show] of [["#to-seats", "seats"], ["#to-news", "news"]]) {
  const a = $(id);
  a.href = `?show=${show}${window.location.hash}`;
  if (show === mode) a.setAttribute("aria-current", "page");
}
$("#lookup").addEventListener("submit", (e) => e.preventDefault());
$("#find").addEventListener("input", lookUp);
window.addEventListener("resize", paginate);
$("#fullscreen").addEventListener("click", () => document.documentElement.requestFullscreen().catch(() => {}));
window.addEventListener("hashchange", () => window.location.reload());  // another link's key
// A screen asks every 3 s. A phone every 15 s, and not while its page is hidden (in a pocket):
// a room of phones then holds no connection between questions (the hub keeps an idle one 5 s,
// and serves 256 at once, the staff's tablets among them); it asks at once when looked at.
const EVERY = narrow() ? 15000 : 3000;
const asking = setInterval(() => { if (document.visibilityState !== "hidden") ask(); }, EVERY);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && !stopped) ask();
});
setInterval(() => { page += 1; if (mode === "seats" && reading) paginate(); }, PAGE_SECONDS * 1000);
ask();
