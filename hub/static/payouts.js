// The floor dashboard's prize money (loaded before dashboard.js, whose globals it uses when
// called: $, el, state, api, confirmed, ordinal, venueTime). The hub works the figures out
// (hub/payout_cases.py); this draws them: the payout table, the prize pool, places paid, each
// place's prize with who won it, the next pay jump, "in the money", the freeze; a supervisor's
// choice or edit of the table; a deal at the final table, chip chop and ICM side by side.
// dashboard.js calls setUpPayouts() once, drawPayouts() when the figures change, and
// payoutLogSentence / bustoutPrizeText for its floor log and bust-out lines.
"use strict";

function money(amount, currency) {
  const c = currency === undefined ? ((state.payouts || {}).currency || "") : currency;
  return `${c}${Number(amount).toLocaleString("en-US")}`;
}

// "wins $120" on a bust-out in the money, "" otherwise.
function bustoutPrizeText(b) {
  return b.prize ? `, wins ${money(b.prize)}` : "";
}

function payoutLogSentence(line) {
  const d = line.detail || {};
  const who = line.user;
  const name = line.action.split("/")[1];
  if (name === "table") {
    return `${who} ${d.edited ? "set an edited" : "chose the"} payout table ${d.table}` +
      (d.refrozen ? " (the figures worked out again and frozen)" : "");
  }
  if (name === "frozen") {
    return `payouts frozen: ${d.why}: prize pool ${money(d.prize_pool)}, ${d.places_paid} paid`;
  }
  if (name === "registration-closed") return `${who} closed registration (${d.entries} entries)`;
  if (name === "deal") {
    return `${who} recorded a deal (${d.method === "icm" ? "ICM" : "chip chop"}): ` +
      Object.entries(d.shares || {}).map(([player, amount]) => `${player} ${money(amount)}`).join(", ");
  }
  return `${who}: ${line.action}`;
}

function payoutSummaryText(p) {
  if (p.problem) return p.problem;
  if (p.prize_pool == null) return "No prize pool: start a structure that sets a buy-in, and enter players.";
  const parts = [`Prize pool ${money(p.prize_pool)}`, `${p.places_paid} place${p.places_paid === 1 ? "" : "s"} paid`,
                 `${p.entries} entr${p.entries === 1 ? "y" : "ies"}`];
  if (p.add_ons) parts.push(`${p.add_ons} add-on${p.add_ons === 1 ? "" : "s"}`);
  if (p.fee) parts.push(`fee ${money(p.fee)}`);
  return parts.join(" \u00b7 ");
}

function payoutStatusText(p) {
  if (p.prize_pool == null) return "";
  const parts = [];
  if (p.in_the_money) parts.push(`In the money: ${p.players_left} left`);
  if (p.next_pay_jump) {
    parts.push(`Next pay jump at ${p.next_pay_jump.players_left} left: ${money(p.next_pay_jump.prize)}`);
  }
  if (p.frozen) parts.push(`Frozen ${venueTime(p.frozen.at)}: ${p.frozen.why}`);
  if (p.deal) parts.push(`Deal recorded (${p.deal.method === "icm" ? "ICM" : "chip chop"}) by ${p.deal.by}`);
  return parts.join(" \u00b7 ");
}

function drawPayouts() {
  const p = state.payouts;
  if (!p) return;
  $("#payouts-table").textContent = `(${p.table}${p.edited ? ", edited" : ""})`;
  $("#payouts-summary").textContent = payoutSummaryText(p);
  $("#payouts-status").textContent = payoutStatusText(p);
  $("#payouts-status").classList.toggle("in-the-money", !!p.in_the_money);
  // Each place paid, with who finished there (the roster's places) or what a deal gave.
  const placed = new Map();
  for (const player of (state.roster || {}).players || []) if (player.place) placed.set(player.place, player.name);
  $("#payouts-prizes").replaceChildren(...(p.prizes || []).map((prize, i) => {
    const who = placed.get(i + 1);
    const li = el("li", who ? "paid" : null, `${ordinal(i + 1)} ${money(prize)}${who ? ` \u2014 ${who}` : ""}`);
    li.dataset.place = String(i + 1);
    return li;
  }));
  $("#payouts-close").disabled = !!p.registration_closed || !((state.roster || {}).players || []).length;
  drawDealPlayers();
}

// ------------------------------------------------------------------ the payout table
async function loadPayoutTables() {
  try {
    const answer = await api("/api/payouts/table");
    const select = $("#payouts-choice");
    select.replaceChildren(...answer.builtin.map((name) => el("option", null, name)));
    if (answer.builtin.includes(answer.table)) select.value = answer.table;
    $("#payouts-data").value = JSON.stringify(answer.data, null, 2);
  } catch (e) {
    $("#payouts-reply").textContent = e.message;
  }
}

async function sendPayoutTable(body, said) {
  const reply = $("#payouts-reply");
  body.refreeze = $("#payouts-refreeze").checked;
  try {
    const answer = await api("/api/payouts/table", body);
    state.payouts = answer.figures;
    $("#payouts-data").value = JSON.stringify(answer.data, null, 2);
    reply.className = "reply";
    reply.textContent = said;
    drawPayouts();
  } catch (e) {
    reply.className = "reply refused";
    const problems = (e.body && e.body.problems) || [];
    reply.textContent = problems.length ? `Refused: ${problems.join("; ")}` : e.message;
  }
}

// ------------------------------------------------------------------ a deal
// One stack input a player left, kept while the same players are left (what was typed stays).
let dealPlayersKey = "";
function drawDealPlayers() {
  const left = ((state.roster || {}).players || []).filter((player) => player.out_at == null);
  const key = left.map((player) => player.id).join(",");
  if (key === dealPlayersKey) return;
  dealPlayersKey = key;
  const rows = $("#deal-stacks");
  rows.replaceChildren(...left.map((player) => {
    const label = el("label", null, `${player.name} `);
    const input = el("input");
    Object.assign(input, { type: "number", min: "1", step: "1", inputMode: "numeric" });
    input.dataset.player = String(player.id);
    label.append(input);
    return el("li").appendChild(label).parentNode;
  }));
  $("#deal-work").disabled = left.length < 2 || left.length > 10;
  $("#deal-table tbody").replaceChildren();
  $("#deal-accept").hidden = true;
}

function dealStacks() {
  return [...document.querySelectorAll("#deal-stacks input")].map((input) => ({
    player: Number(input.dataset.player), chips: Number(input.value) }));
}

let dealShown = null;
async function workOutDeal(event) {
  event.preventDefault();
  const reply = $("#deal-reply");
  const stacks = dealStacks();
  if (stacks.some((s) => !Number.isInteger(s.chips) || s.chips < 1)) {
    reply.textContent = "Enter every player's stack (a whole number of chips)";
    return;
  }
  try {
    dealShown = { stacks, view: await api("/api/payouts/deal", { stacks }) };
  } catch (e) {
    reply.textContent = e.message;
    return;
  }
  const v = dealShown.view;
  reply.textContent = `Places 1 to ${v.prizes.length}: ${money(v.total, v.currency)} to share`;
  $("#deal-table tbody").replaceChildren(...v.shares.map((s) => {
    const tr = el("tr");
    tr.dataset.player = String(s.player);
    for (const [cls, text] of [["name", s.name], ["stack", Number(s.stack).toLocaleString("en-US")],
                               ["chip-chop", money(s.chip_chop, v.currency)], ["icm", money(s.icm, v.currency)]]) {
      tr.append(el("td", cls, text));
    }
    return tr;
  }));
  $("#deal-accept").hidden = false;
}

async function acceptDeal(method) {
  if (!dealShown) return;
  const v = dealShown.view;
  const key = method === "icm" ? "icm" : "chip_chop";
  const said = v.shares.map((s) => `${s.name} ${money(s[key], v.currency)}`).join(", ");
  if (!await confirmed(`Record the deal by ${method === "icm" ? "ICM" : "chip chop"}: ${said}?`, "Record the deal")) return;
  try {
    await api("/api/payouts/deal/accept", { stacks: dealShown.stacks, method });
    $("#deal-reply").textContent = `Deal recorded: ${said}`;
    $("#deal-accept").hidden = true;
  } catch (e) {
    $("#deal-reply").textContent = e.message;
  }
}

async function closeRegistration() {
  const p = state.payouts || {};
  const money_ = p.prize_pool != null
    ? ` The prize money is frozen as it is: ${money(p.prize_pool)}, ${p.places_paid} paid.` : "";
  if (!await confirmed(`Close registration? No more entries or re-entries.${money_}`, "Close registration")) return;
  try {
    state.payouts = await api("/api/payouts/close-registration", {});
    $("#payouts-reply").textContent = "Registration closed";
    drawPayouts();
  } catch (e) {
    $("#payouts-reply").textContent = e.message;
  }
}

function setUpPayouts() {
  $("#payouts-close").addEventListener("click", closeRegistration);
  $("#deal-form").addEventListener("submit", workOutDeal);
  $("#deal-accept-chop").addEventListener("click", () => acceptDeal("chip-chop"));
  $("#deal-accept-icm").addEventListener("click", () => acceptDeal("icm"));
  if (!state.me.may.includes("payouts")) return;
  loadPayoutTables();
  $("#payouts-use").addEventListener("click", () => {
    const name = $("#payouts-choice").value;
    sendPayoutTable({ name }, `Payout table ${name} chosen`);
  });
  $("#payouts-save").addEventListener("click", () => {
    let table;
    try { table = JSON.parse($("#payouts-data").value); } catch (e) {
      $("#payouts-reply").textContent = `Not JSON: ${e.message}`;
      return;
    }
    const name = $("#payouts-name").value.trim() || "edited";
    sendPayoutTable({ name, table }, `Payout table ${name} saved`);
  });
}
