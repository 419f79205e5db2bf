// The hive's board: puts the server's HTML fragments in place as its events arrive.
// No framework and no build step; every text was escaped by the server.
"use strict";
(() => {
  const body = document.body;
  const live = document.getElementById("live");
  const say = (text, off) => { live.textContent = text; live.classList.toggle("off", !!off); };

  // Open an event stream; the browser reconnects by itself after a dropped connection
  // (sending Last-Event-ID), and this reopens it after a refusal (a 503, say).
  function stream(url, handlers, onOpen) {
    let source = null;
    const open = () => {
      source = new EventSource(url);
      source.onopen = () => { say("live"); if (onOpen) onOpen(); };
      source.onerror = () => {
        if (source.readyState === EventSource.CLOSED) {
          say("live updates stopped; trying again in 10 s", true);
          setTimeout(open, 10000);
        } else {
          say("reconnecting…", true);
        }
      };
      for (const [name, handle] of Object.entries(handlers)) {
        source.addEventListener(name, (e) => handle(e));
      }
    };
    open();
  }

  // Ages and "ago" times follow the clock.
  function ago(seconds) {
    seconds = Math.max(0, Math.floor(seconds));
    if (seconds < 60) return seconds + " s";
    if (seconds < 3600) return Math.floor(seconds / 60) + " min";
    if (seconds < 86400) return Math.floor(seconds / 3600) + " h";
    return Math.floor(seconds / 86400) + " d";
  }
  function tick(root) {
    const now = Date.now();
    for (const t of (root || document).querySelectorAll("time[data-age], time[data-ago]")) {
      const text = ago((now - Date.parse(t.dateTime)) / 1000);
      t.textContent = t.dataset.ago ? text + " ago" : text;
    }
  }
  setInterval(tick, 15000);

  const comb = Array.from(document.querySelectorAll("#comb .cell"));
  let next = 0;
  function flash() {
    if (!comb.length) return;
    const cell = comb[next++ % comb.length];
    cell.classList.remove("flash");
    void cell.offsetWidth; // restart the animation
    cell.classList.add("flash");
  }

  // Filters (label, column, runner, a search in the titles), kept in the URL.
  const form = document.getElementById("filters");
  const FIELDS = ["q", "label", "column", "runner"];
  function wanted() {
    const out = {};
    if (!form) return out;
    for (const name of FIELDS) {
      const field = form.elements[name];
      if (field && field.value.trim()) out[name] = field.value.trim().toLowerCase();
    }
    return out;
  }
  function shows(card, want) {
    if (want.q) {
      const title = (card.querySelector(".title") || card).textContent.toLowerCase();
      const number = "#" + card.dataset.issue;
      if (!title.includes(want.q) && number !== want.q && card.dataset.issue !== want.q) return false;
    }
    if (want.label) {
      const labels = JSON.parse(card.dataset.labels || "[]").map((l) => l.toLowerCase());
      if (!labels.includes(want.label)) return false;
    }
    if (want.runner && !(card.dataset.runner || "").toLowerCase().includes(want.runner)) return false;
    return true;
  }
  function filter() {
    const want = wanted();
    for (const section of document.querySelectorAll("section[data-column]")) {
      section.hidden = !!want.column && section.dataset.column !== want.column;
    }
    for (const card of document.querySelectorAll("[data-cards] > li")) {
      card.hidden = !shows(card, want);
    }
  }
  if (form) {
    const given = new URLSearchParams(location.search);
    for (const name of FIELDS) {
      if (form.elements[name] && given.has(name)) form.elements[name].value = given.get(name);
    }
    form.addEventListener("submit", (e) => e.preventDefault());
    form.addEventListener("input", () => {
      const query = new URLSearchParams();
      for (const name of FIELDS) {
        const field = form.elements[name];
        if (field && field.value.trim()) query.set(name, field.value.trim());
      }
      const search = query.toString();
      history.replaceState(null, "", location.pathname + (search ? "?" + search : ""));
      filter();
      count();
    });
    filter();
  }

  function count() {
    for (const list of document.querySelectorAll("[data-cards]")) {
      const badge = document.querySelector(`[data-count="${list.dataset.cards}"]`);
      if (badge) badge.textContent = list.querySelectorAll(":scope > li:not([hidden])").length;
    }
  }
  count();

  // A person's actions: each button posts to the API with the page's CSRF token and
  // shows the answer (the sentence `hive` prints, or why it was refused).
  const answer = document.getElementById("answer");
  // from the origin: a page opened as http://user:token@host/ resolves a relative
  // URL with the credentials in it, which fetch refuses
  const at = (path) => location.origin + path;
  document.addEventListener("click", async (e) => {
    const button = e.target.closest("button[data-act]");
    if (!button || !answer) return;
    const act = button.dataset.act;
    const issue = button.dataset.issue;
    let payload = "";
    if (act === "reject") {
      const note = button.closest("details").querySelector("textarea[data-note]");
      if (!note.value.trim()) { note.focus(); sayAnswer(`#${issue}: say what is wrong first`, true); return; }
      payload = JSON.stringify({ note: note.value });
    }
    button.disabled = true;
    try {
      const reply = await fetch(at(`/api/issues/${issue}/${act}`), {
        method: "POST",
        cache: "no-store",
        headers: { "Content-Type": "application/json", "X-Hive-CSRF": body.dataset.csrf || "" },
        body: payload,
      });
      let data = {};
      try { data = await reply.json(); } catch (_) { data = { error: reply.statusText }; }
      sayAnswer(data.said || `${reply.status}: ${data.error || "no answer"}`, !reply.ok);
    } catch (err) {
      sayAnswer(`#${issue} ${act}: the hive did not answer (${err})`, true);
    } finally {
      button.disabled = false;
    }
  });
  function sayAnswer(text, bad) {
    answer.textContent = text;
    answer.classList.toggle("bad", !!bad);
    answer.dataset.state = bad ? "refused" : "done";
  }

  // The header's figures, fetched again at most every few seconds while cards move.
  const pulse = document.getElementById("pulse");
  let pulseDue = null;
  function repulse() {
    if (!pulse || pulseDue) return;
    pulseDue = setTimeout(async () => {
      pulseDue = null;
      const reply = await fetch(at("/board/pulse"), { cache: "no-store" });
      if (reply.ok) pulse.innerHTML = await reply.text();
    }, 3000);
  }

  function fragment(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content.firstElementChild;
  }

  function placeCard(data) {
    const old = document.getElementById("card-" + data.issue);
    const focused = old && old.contains(document.activeElement);
    const note = old && old.querySelector("details[open] textarea[data-note]");
    const was = old && old.closest("[data-cards]").dataset.cards;
    if (old) old.remove();
    if (data.column) {
      const list = document.querySelector(`[data-cards="${data.column}"]`);
      const card = fragment(data.html);
      const key = (el) => [parseFloat(el.dataset.sort), parseInt(el.dataset.issue, 10)];
      const mine = key(card);
      const before = Array.from(list.children).find((el) => {
        const k = key(el);
        return k[0] > mine[0] || (k[0] === mine[0] && k[1] > mine[1]);
      });
      list.insertBefore(card, before || null);
      card.hidden = !shows(card, wanted());
      if (was && was !== data.column) card.classList.add("moved");
      const kept = note && card.querySelector("details.reject");
      if (kept) { kept.open = true; kept.querySelector("textarea").value = note.value; }
      if (focused) (kept ? kept.querySelector("textarea") : card.querySelector("a")).focus();
    }
    count();
  }

  if (body.dataset.page === "board") {
    const url = "/board/events?since=" + encodeURIComponent(body.dataset.since);
    stream(url, {
      snapshot: (e) => {
        const data = JSON.parse(e.data);
        for (const [name, html] of Object.entries(data.columns)) {
          document.querySelector(`[data-cards="${name}"]`).innerHTML = html;
        }
        filter();
        count();
        tick();
      },
      card: (e) => { placeCard(JSON.parse(e.data)); flash(); repulse(); },
    });
  }

  if (body.dataset.page === "issue") {
    const issue = body.dataset.issue;
    const summary = document.getElementById("summary");
    const lines = document.getElementById("lines");
    const follow = document.getElementById("follow");
    let busy = false;
    let again = false;
    const get = (path) => fetch(at(path), { cache: "no-store" });
    async function refresh() {
      const answer = await get(`/board/issues/${issue}/summary`);
      if (answer.ok) { summary.innerHTML = await answer.text(); tick(summary); }
    }
    // One fetch at a time; a hint that comes meanwhile fetches once more after it.
    async function more() {
      if (busy) { again = true; return; }
      busy = true;
      try {
        do {
          again = false;
          const after = encodeURIComponent(lines.dataset.after || "");
          const answer = await get(`/board/issues/${issue}/transcript?after=${after}`);
          if (!answer.ok) break;
          const html = await answer.text();
          lines.dataset.after = answer.headers.get("X-Hive-After") || lines.dataset.after;
          if (html) {
            lines.insertAdjacentHTML("beforeend", html);
            if (follow.checked) lines.scrollTop = lines.scrollHeight;
          }
        } while (again);
      } finally {
        busy = false;
      }
    }
    if (follow.checked) lines.scrollTop = lines.scrollHeight;
    let opened = false;
    stream(`/board/events?issue=${issue}`, {
      issue: () => refresh(),
      transcript: () => more(),
    }, () => {
      if (opened) { refresh(); more(); } // catch up after a reconnect
      opened = true;
    });
  }
})();
