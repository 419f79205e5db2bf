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

  function count() {
    for (const list of document.querySelectorAll("[data-cards]")) {
      const badge = document.querySelector(`[data-count="${list.dataset.cards}"]`);
      if (badge) badge.textContent = list.children.length;
    }
  }

  function fragment(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content.firstElementChild;
  }

  function placeCard(data) {
    const old = document.getElementById("card-" + data.issue);
    const focused = old && old.contains(document.activeElement);
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
      if (was && was !== data.column) card.classList.add("moved");
      if (focused) card.querySelector("a").focus();
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
        count();
        tick();
      },
      card: (e) => { placeCard(JSON.parse(e.data)); flash(); },
    });
  }

  if (body.dataset.page === "issue") {
    const issue = body.dataset.issue;
    const summary = document.getElementById("summary");
    const lines = document.getElementById("lines");
    const follow = document.getElementById("follow");
    let busy = false;
    let again = false;
    // from the origin: a page opened as http://user:token@host/ resolves a relative
    // URL with the credentials in it, which fetch refuses
    const get = (path) => fetch(location.origin + path, { cache: "no-store" });
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
