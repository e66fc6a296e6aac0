// The dashboard's players' screen panel (its own file, beside dashboard.js): the players'
// screen link (a supervisor may withdraw it and make another), the floor's announcements
// on it (put up, taken down: each in the floor log), and the seat cards' links (the draw,
// the latest moves, the final table, a table, one player). Everything is set with
// textContent: a name or an announcement is never markup.
"use strict";

const playersDesk = (() => {
  const $ = (selector) => document.querySelector(selector);
  let me = null;
  let link = null;  // the players' link shown: the highest generation seen

  // The hub's API as the dashboard calls it (dashboard.js's api: loaded before this file).
  const call = api;

  function say(text, ok) {
    const reply = $("#players-reply");
    reply.className = ok ? "reply ok" : "reply error";
    reply.textContent = text;
  }

  function showLink(shown) {
    if (link && shown.generation <= link.generation) return;
    link = shown;
    const [path, key] = shown.path.split("#");
    const screen = $("#players-link");
    screen.href = shown.path;
    screen.textContent = `Players' screen: ${window.location.origin}${path}#…`;
    $("#players-news-link").href = `${path}?show=news#${key}`;
    for (const id of ["#players-link", "#players-news-link", "#players-link-withdraw"]) $(id).hidden = false;
  }

  async function withdraw() {
    const generation = link.generation;
    const question = "Withdraw the players' screen link? Every screen and phone showing it " +
      "stops and says so; open the new link on the screens.";
    // The dashboard's own question (dashboard.js), where it is.
    const yes = typeof confirmed === "function" ? await confirmed(question, "Withdraw the link")
      : window.confirm(question);
    if (!yes) return;
    try {
      showLink(await call("/api/players-link/withdraw", { generation }));
      say("Players' link withdrawn: open the new one on the screens", true);
    } catch (e) {
      if (e.body && e.body.current) showLink(e.body.current);
      say(`Players' link: ${e.message}`, false);
    }
  }

  function drawAnnouncements(list) {
    $("#announcements-up").replaceChildren(...list.map((a) => {
      const li = document.createElement("li");
      li.dataset.id = String(a.id);
      const text = document.createElement("span");
      text.textContent = `${a.text} (${a.by})`;
      const down = document.createElement("button");
      down.type = "button";
      down.textContent = "Take down";
      down.addEventListener("click", async () => {
        try {
          drawAnnouncements(await call(`/api/announcements/${a.id}/take-down`, {}));
          say("Announcement taken down", true);
        } catch (e) { say(`Announcement: ${e.message}`, false); loadAnnouncements(); }
      });
      li.append(text, down);
      return li;
    }));
  }

  function loadAnnouncements() {
    call("/api/announcements").then(drawAnnouncements).catch(() => {});
  }

  async function announce(event) {
    event.preventDefault();
    const input = $("#announce-text");
    const text = input.value;
    try {
      drawAnnouncements(await call("/api/announcements", { text }));
      if (input.value === text) input.value = "";  // what was typed meanwhile stays
      say("Announcement up on the players' screen", true);
    } catch (e) { say(`Announcement: ${e.message}`, false); }
  }

  // The tables and players to print one card set of, from the roster as it is now.
  async function loadChoices() {
    let roster;
    try { roster = await call("/api/roster"); } catch (e) { return; }
    const seated = roster.players.filter((p) => p.out_at === null && p.table !== null);
    const tables = [...new Set(seated.map((p) => p.table))]
      .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const fill = (select, choices) => {
      const first = select.options[0];
      select.replaceChildren(first, ...choices.map(([value, text]) => {
        const option = document.createElement("option");
        option.value = value;
        option.textContent = text;
        return option;
      }));
    };
    fill($("#cards-table"), tables.map((t) => [t, `table ${t}`]));
    fill($("#cards-player"), seated.slice().sort((a, b) => a.name.localeCompare(b.name))
      .map((p) => [String(p.id), `${p.name} (table ${p.table} seat ${p.seat})`]));
  }

  function openCards(query) {
    window.open(`/seat-cards?${new URLSearchParams(query)}`, "_blank", "noopener");
  }

  async function start() {
    try { me = await call("/api/me"); } catch (e) { return; }
    if (me.may.includes("command")) {
      call("/api/players-link").then(showLink).catch(() => {});
      loadAnnouncements();
      setInterval(loadAnnouncements, 10000);  // another tablet's
      $("#announce-form").addEventListener("submit", announce);
    }
    if (me.may.includes("private")) $("#players-link-withdraw").addEventListener("click", withdraw);
    for (const id of ["#cards-table", "#cards-player"]) {
      $(id).addEventListener("focus", loadChoices);
      $(id).addEventListener("pointerdown", loadChoices);
    }
    $("#cards-table").addEventListener("change", (e) => {
      if (e.target.value) openCards({ what: "table", table: e.target.value });
      e.target.value = "";
    });
    $("#cards-player").addEventListener("change", (e) => {
      if (e.target.value) openCards({ what: "player", player: e.target.value });
      e.target.value = "";
    });
    loadChoices();
  }

  if (document.body.classList.contains("dashboard") || $("#players-panel")) start();
  return { showLink, loadAnnouncements };
})();
