// The floor dashboard's chip counts (loaded before dashboard.js, whose globals it uses when
// called: $, el, state, api, venueTime). The floor picks a table and enters its players'
// stacks (at a break, at the final table); the hub keeps each player's latest count and works
// out its M at the level in play, the counted average and the chip leader (hub/chip_cases.py).
// dashboard.js calls setUpChips() once and chipsMayHaveChanged() when the roster or the clock
// changed.
"use strict";

const chipsShown = { answer: null, level: undefined, entryKey: "" };

function chipNumber(n) {
  return Number(n).toLocaleString("en-US");
}

// The tables with players of the roster seated, for the entry's choice.
function chipTables() {
  const tables = new Set();
  for (const p of (state.roster || {}).players || []) {
    if (p.table && p.out_at == null && p.no_show_at == null) tables.add(p.table);
  }
  return [...tables].sort();
}

function chipsSummaryText(a) {
  if (!a || a.average_stack == null) return "No stack counted yet.";
  return `Average ${chipNumber(a.average_stack)} (${a.counted} of ${a.players_left} stacks counted) \u00b7 ` +
    `chip leader ${a.chip_leader.name} ${chipNumber(a.chip_leader.chips)} \u00b7 last counted ${venueTime(a.counted_at)}`;
}

function drawChips() {
  const a = chipsShown.answer;
  if (!a) return;
  $("#chips-summary").textContent = chipsSummaryText(a);
  const b = a.blinds;
  $("#chips-level").textContent = b ? `M at level ${b.level}: stack \u00f7 ${chipNumber(b.sb + b.bb + b.ante)} ` +
    `(${chipNumber(b.sb)} + ${chipNumber(b.bb)}${b.ante ? ` + ${chipNumber(b.ante)} big-blind ante` : ""})` : "No level in play: no M.";
  $("#chips-table tbody").replaceChildren(...a.players.map((p) => {
    const tr = el("tr");
    tr.dataset.player = String(p.player);
    for (const [cls, text] of [["name", p.name], ["seat", p.table ? `${p.table}/${p.seat}` : "-"],
                               ["chips", p.chips == null ? "-" : chipNumber(p.chips)],
                               ["m", p.m == null ? "-" : `M ${Number(p.m).toFixed(1)}`],
                               ["at", p.at == null ? "" : `${venueTime(p.at)}`]]) {
      tr.append(el("td", cls, text));
    }
    if (p.by) tr.lastChild.title = `entered by ${p.by}`;
    return tr;
  }));
}

// The entry form for the chosen table: one input a player seated there, with the count kept.
function drawChipEntry() {
  const select = $("#chips-table-choice");
  const tables = chipTables();
  const chosen = tables.includes(select.value) ? select.value : (tables[0] || "");
  if (select.options.length !== tables.length || [...select.options].some((o, i) => o.value !== tables[i])) {
    select.replaceChildren(...tables.map((t) => el("option", null, t)));
  }
  select.value = chosen;
  const players = ((state.roster || {}).players || [])
    .filter((p) => p.table === chosen && p.out_at == null && p.no_show_at == null)
    .sort((x, y) => x.seat - y.seat);
  const key = chosen + ":" + players.map((p) => p.id).join(",");
  if (key === chipsShown.entryKey) return;
  // The same table's players changed while the floor was typing (a bust-out, a move): what
  // was typed for those still there stays.
  const sameTable = (chipsShown.entryKey || "").startsWith(chosen + ":");
  const typed = new Map(sameTable ? [...document.querySelectorAll("#chips-stacks input")]
    .map((input) => [input.dataset.player, input.value]) : []);
  chipsShown.entryKey = key;
  $("#chips-stacks").replaceChildren(...players.map((p) => {
    const label = el("label", null, `Seat ${p.seat} ${p.name} `);
    const input = el("input");
    Object.assign(input, { type: "number", min: "0", step: "1", inputMode: "numeric" });
    input.dataset.player = String(p.id);
    input.value = typed.get(String(p.id)) || "";
    label.append(input);
    return el("li").appendChild(label).parentNode;
  }));
  $("#chips-enter").disabled = !players.length;
}

async function loadChips() {
  try {
    chipsShown.answer = await api("/api/chips");
    drawChips();
  } catch (e) {
    $("#chips-reply").textContent = e.message;
  }
}

async function enterChips(event) {
  event.preventDefault();
  const reply = $("#chips-reply");
  const table = $("#chips-table-choice").value;
  const inputs = [...document.querySelectorAll("#chips-stacks input")].filter((i) => i.value !== "");
  const stacks = inputs.map((input) => ({ player: Number(input.dataset.player), chips: Number(input.value) }));
  if (!stacks.length || stacks.some((s) => !Number.isInteger(s.chips) || s.chips < 0)) {
    reply.className = "reply refused";
    reply.textContent = "Enter the stacks counted (whole numbers of chips, 0 or more)";
    return;
  }
  try {
    chipsShown.answer = await api(`/api/chips/${encodeURIComponent(table)}`, { stacks });
  } catch (e) {
    reply.className = "reply refused";
    const problems = (e.body && e.body.problems) || [];
    reply.textContent = problems.length ? `Refused: ${problems.join("; ")}` : e.message;
    return;
  }
  reply.className = "reply";
  reply.textContent = `Table ${table}: ${stacks.length} stack${stacks.length === 1 ? "" : "s"} counted`;
  for (const input of inputs) input.value = "";
  drawChips();
}

// The roster or the clock changed: the entry follows the seats; the counts are asked again
// when the players or the level differ (a bust-out, a new level's M).
function chipsMayHaveChanged() {
  drawChipEntry();
  const level = state.clock ? state.clock.level : null;
  const players = ((state.roster || {}).players || []).filter((p) => p.out_at == null).length;
  const key = `${level}:${players}`;
  if (key !== chipsShown.level) {
    chipsShown.level = key;
    loadChips();
  }
}

function setUpChips() {
  $("#chips-form").addEventListener("submit", enterChips);
  $("#chips-table-choice").addEventListener("change", drawChipEntry);
  chipsMayHaveChanged();
}
