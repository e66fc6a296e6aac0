// The room clock for a TV: the viewer link's key (after "#") asks the hub every few seconds;
// the seconds count down here between answers. A link refused (a wrong one, or one the floor
// withdrew) blanks the clock and says why. Everything is set with textContent.
"use strict";

const $ = (selector) => document.querySelector(selector);
const key = decodeURIComponent(window.location.hash.slice(1));
let reading = null;   // the hub's last answer
let offset = 0;       // the hub's clock minus this one (ms)
let readAt = 0;       // when that answer was taken, on the hub's clock

const amount = (n) => Number(n).toLocaleString("en-US");
function blindsText(b) {
  return `${amount(b.sb)} / ${amount(b.bb)}` + (b.ante ? `  ante ${amount(b.ante)}` : "");
}
function clockText(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = `${String(s % 60).padStart(2, "0")}`;
  return h ? `${h}:${String(m).padStart(2, "0")}:${rest}` : `${m}:${rest}`;
}

function secondsGone() {
  return reading && reading.running ? (Date.now() + offset - readAt) / 1000 : 0;
}

function blank() {
  for (const id of ["#time", "#blinds", "#next", "#break", "#players", "#field", "#prizes", "#money"]) $(id).textContent = "";
  $("#announcements").replaceChildren();
}

function draw() {
  if (!reading) return;
  const r = reading;
  $("#venue").textContent = r.venue;
  $("#title").textContent = r.title ? `\u00b7 ${r.title}` : "";
  if (!r.structure) {
    $("#level").textContent = "No clock running";
    blank();
    return;
  }
  if (r.winner) {  // the tournament is over: the result, not a paused clock
    blank();
    $("#level").textContent = "Tournament over";
    $("#time").className = "time winner";
    $("#time").textContent = r.winner;
    // The first prize (a deal's amounts are the results page's).
    $("#blinds").textContent = r.payouts && r.payouts.length && !r.deal
      ? `wins ${r.currency || ""}${amount(r.payouts[0])}` : "wins";
    return;
  }
  const gone = secondsGone();
  $("#level").textContent = r.on_break ? "Break" : `Level ${r.current.level}`;
  const time = $("#time");
  time.textContent = clockText(r.remaining - gone);
  time.className = r.running ? "time" : "time paused";
  if (!r.running) $("#level").textContent += " \u00b7 paused";
  $("#blinds").textContent = r.on_break ? "" : blindsText(r.current);
  const next = $("#next");
  next.replaceChildren();
  if (r.next) {
    next.append("Next ");
    const b = document.createElement("b");
    b.textContent = blindsText(r.next);
    next.append(b);
  }
  const brk = $("#break");
  brk.replaceChildren();
  if (r.break_in !== null && r.break_in !== undefined) {
    brk.append("Break in ");
    const b = document.createElement("b");
    b.textContent = clockText(r.break_in - gone);
    brk.append(b);
  }
  // With the hub's roster, players left are the roster's (one count on the screen, not two).
  const players = r.players_left != null ? r.players_left : r.players;
  const average = r.tables ? (players / r.tables).toFixed(1) : "-";
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  $("#players").textContent = `${plural(players, "player")}${r.players_left != null ? " left" : ""} \u00b7 ` +
    `${plural(r.tables, "table")} \u00b7 ${average} a table`;
  // With the hub's roster: the field and, where the structure sets a buy-in, the prizes.
  const field = [];
  if (r.entrants != null) field.push(`${amount(r.entrants)} entrants`);
  const again = r.entries - r.entrants;
  if (r.entries != null && again > 0) field.push(`${amount(again)} re-entr${again === 1 ? "y" : "ies"}`);
  if (r.add_ons) field.push(`${amount(r.add_ons)} add-on${r.add_ons === 1 ? "" : "s"}`);
  // The average says what it is worked out from: the floor's chip counts (the counted
  // players' own average) or the chips the entries and add-ons bought (hub/chip_cases.py).
  if (r.average_stack != null) {
    field.push(r.average_from === "counts"
      ? `average stack ${amount(r.average_stack)} (${r.counted} of ${amount(players)} stacks counted)`
      : `average stack ${amount(r.average_stack)} (from the starting stacks)`);
  }
  if (r.chip_leader) field.push(`chip leader ${r.chip_leader.name} ${amount(r.chip_leader.chips)}`);
  $("#field").textContent = field.join(" \u00b7 ");
  drawPrizes(r);

  const notes = [...r.announcements, ...r.next_announcements.map((a) => `Next level: ${a}`)];
  $("#announcements").replaceChildren(...notes.map((text) => {
    const li = document.createElement("li");
    li.textContent = String(text).slice(0, 200);
    return li;
  }));
}

// The prize money, from the tournament's payout table (hub/payout_cases.py): the pool and the
// places paid, then "In the money" once every player left wins a prize, the next pay jump,
// and the last bust-out in the money with its prize.
function drawPrizes(r) {
  const cash = (n) => `${r.currency || ""}${amount(n)}`;
  const prizes = [];
  if (r.prize_pool != null) prizes.push(`Prize pool ${cash(r.prize_pool)}`);
  if (r.payouts && r.payouts.length) {
    prizes.push(`${r.payouts.length} place${r.payouts.length === 1 ? "" : "s"} paid: ` +
                r.payouts.map((p, i) => `${i + 1}. ${cash(p)}`).join("  "));
  }
  $("#prizes").textContent = prizes.join(" \u00b7 ");
  const money = $("#money");
  money.replaceChildren();
  document.body.classList.toggle("paying", r.prize_pool != null);
  if (r.prize_pool == null) return;
  const said = [];
  if (r.in_the_money) said.push(Object.assign(document.createElement("span"), { className: "itm", textContent: "In the money" }));
  if (r.next_pay_jump) {
    const b = document.createElement("b");
    b.textContent = cash(r.next_pay_jump.prize);
    said.push([`Next pay jump at ${r.next_pay_jump.players_left} left: `, b]);
  }
  if (r.last_paid) {
    const b = document.createElement("b");
    b.textContent = cash(r.last_paid.prize);
    said.push([`${r.last_paid.player || "a player"} out ${ordinal(r.last_paid.place)}: `, b]);
  }
  said.forEach((part, i) => {
    if (i) money.append(" \u00b7 ");
    money.append(...(Array.isArray(part) ? part : [part]));
  });
}

function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
  return `${n}${suffix}`;
}

async function ask() {
  try {
    const response = await fetch("/api/tv", { headers: { "X-Room-Key": key } });
    const value = await response.json().catch(() => ({}));
    if (response.status === 403 || response.status === 400) {
      // This link will not work again: nothing of the clock stays up, and the page stops asking.
      clearInterval(asking);
      reading = null;
      blank();
      for (const id of ["#venue", "#title", "#level"]) $(id).textContent = "";
      $("#problem").textContent = value.error || "this link is not the room clock's";
      $("#problem").hidden = false;
      document.body.dataset.live = "";
      return;
    }
    if (!response.ok) throw new Error(value.error || response.statusText);
    offset = value.now - Date.now();
    readAt = value.now;
    reading = value;
    $("#problem").hidden = true;
    $("#link").textContent = "";
    $("#link").className = "link";
    document.body.dataset.live = "1";
  } catch (e) {
    $("#link").textContent = "reconnecting to the hub";
    $("#link").className = "link lost";
    document.body.dataset.live = "";
  }
  draw();
}

$("#fullscreen").addEventListener("click", () => document.documentElement.requestFullscreen().catch(() => {}));
window.addEventListener("hashchange", () => window.location.reload());  // another link's key
const asking = setInterval(ask, 3000);
ask();
setInterval(draw, 250);
