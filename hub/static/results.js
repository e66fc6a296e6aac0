// The printable results: every place with its player and prize, the winner first, and the
// players of a deal with what it gave them (GET /api/payouts/results). Text set with
// textContent only.
"use strict";

const $ = (selector) => document.querySelector(selector);

function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
  return `${n}${suffix}`;
}

function cell(text, cls) {
  const td = document.createElement("td");
  if (cls) td.className = cls;
  td.textContent = text;
  return td;
}

async function load() {
  const response = await fetch("/api/payouts/results");
  const r = await response.json().catch(() => ({}));
  if (!response.ok) {
    $("#results-problem").textContent = r.error || response.statusText;
    $("#results-problem").hidden = false;
    return;
  }
  const money = (n) => `${r.currency}${Number(n).toLocaleString("en-US")}`;
  $("#results-venue").textContent = r.venue;
  const summary = [];
  if (r.prize_pool != null) summary.push(`Prize pool ${money(r.prize_pool)}`);
  if (r.places_paid != null) summary.push(`${r.places_paid} place${r.places_paid === 1 ? "" : "s"} paid`);
  if (r.winner) summary.push(`Winner: ${r.winner}`);
  $("#results-summary").textContent = summary.join(" \u00b7 ");
  $("#results-deal").textContent = r.deal
    ? `Deal by ${r.deal.method === "icm" ? "ICM" : "chip chop"} among ${r.deal.shares.length} players, recorded by ${r.deal.by}`
    : "";
  $("#results tbody").replaceChildren(...r.places.map((row) => {
    const tr = document.createElement("tr");
    tr.dataset.place = row.place == null ? "" : String(row.place);
    tr.append(cell(row.place == null ? "in the deal" : ordinal(row.place), "place"),
              cell(row.name, "name"),
              cell(row.prize ? money(row.prize) + (row.dealt ? " (deal)" : "") : "", "prize"));
    return tr;
  }));
  document.body.dataset.loaded = "1";
}

$("#results-print").addEventListener("click", () => window.print());
load();
