// Trick Arena's pages: plain JS, no build step, no network beyond this server.
// Every text from the results (bot names, fault messages) goes in through textContent.
"use strict";

const app = document.getElementById("app");
const crumbs = document.getElementById("crumbs");
const liveBadge = document.getElementById("live");
const params = new URLSearchParams(location.search);

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") Object.assign(el.style, v);  // through the DOM: the CSP forbids inline styles
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const shown = (nodes) => nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false);
const put = (...nodes) => app.replaceChildren(...shown(nodes));
// A table wider than a phone scrolls sideways: a region a keyboard can reach (tab, then arrows),
// named after what it holds.
function scroller(label, child, extra) {
  return h("div", { class: "scroll" + (extra ? " " + extra : ""), tabindex: 0, role: "region", "aria-label": label }, child);
}

// A live update brings the page's nodes in place to the new ones (the same elements stay), so
// what the reader opened (a <details>), scrolled or focused stays as it was. For pages whose
// elements have no handlers (the tournament and comparison pages): the old nodes keep theirs.
function morph(old, fresh) {
  if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName) { old.replaceWith(fresh); return; }
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.nodeValue !== fresh.nodeValue) old.nodeValue = fresh.nodeValue;
    return;
  }
  for (const { name } of [...old.attributes]) {
    if (!fresh.hasAttribute(name) && !(name === "open" && old.nodeName === "DETAILS")) old.removeAttribute(name);
  }
  for (const { name, value } of fresh.attributes) {
    if (old.getAttribute(name) === value) continue;
    if (name === "style") old.style.cssText = fresh.style.cssText;  // (through the DOM: the CSP)
    else old.setAttribute(name, value);
  }
  morphChildren(old, [...fresh.childNodes]);
}
// Children are matched by key where they have one (an id, a table's scope, a classed
// <details>), else by position among the unkeyed: a block that comes or goes above (a note, the
// "folding" line) does not shift an opened <details> onto another element.
function keyOf(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return "";
  if (node.id) return "#" + node.id;
  if (node.hasAttribute("data-scope")) return "scope:" + node.getAttribute("data-scope");
  if (node.nodeName === "DETAILS" && node.className) return "details." + node.className;
  return "";
}
function morphChildren(parent, fresh) {
  const keyed = new Map();
  for (const node of parent.childNodes) {
    const key = keyOf(node);
    if (key && !keyed.has(key)) keyed.set(key, node);
  }
  fresh.forEach((node, i) => {
    const key = keyOf(node);
    const here = parent.childNodes[i] || null;
    let match = key ? keyed.get(key) : here;
    if (key) keyed.delete(key);
    else if (match && keyOf(match)) match = undefined;  // (kept for the fresh node of its key)
    if (!match) { parent.insertBefore(node, here); return; }
    if (match !== here) parent.insertBefore(match, here);
    morph(match, node);
  });
  while (parent.childNodes.length > fresh.length) parent.lastChild.remove();
}
const update = (...nodes) => morphChildren(app, shown(nodes));
const link = (href, text, attrs) => h("a", { href, ...(attrs || {}) }, text);
const q = (o) => new URLSearchParams(o).toString();
const matchHref = (id, seat) => "/match?" + q(seat === undefined ? { id } : { id, seat });
const botHref = (name) => "/bot?" + q({ name });
const dealHref = (m) => "/deal?" + q({ game: m.game, table: m.table, deal: m.deal });

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw Object.assign(new Error(body.error || r.statusText), { status: r.status, body });
  return body;
}

function fmt(v, digits = 2) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(digits);
  if (Array.isArray(v)) return v.map((x) => fmt(x, digits)).join(", ");
  if (typeof v === "object") {
    const parts = Object.entries(v).map(([k, x]) => `${x} ${k}`);
    return parts.length ? parts.join(", ") : "–";
  }
  return String(v);
}
function duration(s) {
  if (s === null || s === undefined) return "–";
  s = Math.round(s);
  const m = Math.floor(s / 60), hh = Math.floor(m / 60);
  return hh ? `${hh} h ${m % 60} min` : m ? `${m} min ${s % 60} s` : `${s} s`;
}

// ---- cards -----------------------------------------------------------------------------------
const CARD = /^(10|11|12|[1-9]|[JQKA])([CDHSRGBY])$/;
const SUIT = { C: "♣", D: "♦", H: "♥", S: "♠", R: "●", G: "●", B: "●", Y: "●" };
const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades", R: "red", G: "green", B: "blue", Y: "yellow" };
function isCard(x) { return typeof x === "string" && CARD.test(x); }
function card(c, extra) {
  const m = CARD.exec(c);
  if (!m) return h("span", { class: "chip" }, c);
  return h("span", { class: `card s-${m[2]} ${extra || ""}`, title: `${m[1]} of ${SUIT_NAME[m[2]]}`, "data-card": c },
    m[1], SUIT[m[2]]);
}
function cards(list, chosen) {
  return (list || []).map((c) => card(c, c === chosen ? "chosen" : ""));
}
// A value that may hold cards: drawn as cards where it does.
function value(v, key) {
  if (isCard(v)) return card(v);
  if ((key === "trump" || key === "suit") && typeof v === "string" && SUIT[v]) return h("span", { class: `card small s-${v}`, title: SUIT_NAME[v] }, SUIT[v]);
  if (Array.isArray(v) && v.length && v.every(isCard)) return cards(v);
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if ("card" in v && "seat" in v) return h("span", {}, `seat ${v.seat}: `, value(v.card));
    return h("span", {}, Object.entries(v).map(([k, x]) => h("span", { class: "chip" }, `${k}: `, value(x))));
  }
  if (Array.isArray(v)) return v.length ? h("span", {}, v.map((x, i) => [i ? ", " : "", value(x)])) : "none";
  return fmt(v);
}

// ---- standings ---------------------------------------------------------------------------------
const COLUMNS = {
  rank: ["#", "rank: by rating − 3σ, best first; = : not separated from a neighbour; 1 + the rows above separated from it"],
  bot: ["bot", ""],
  played: ["played", "seats played (completed matches)"],
  wins: ["wins", "placing 1 (shared wins count)"],
  mean_placing: ["place", "mean placing (1 = best)"],
  mean_score: ["score", "mean score"],
  duplicate: ["dup", "duplicate: score minus the mean score the same cards got in the deal's other rotations (positive = better)"],
  mu: ["μ", "OpenSkill (Plackett-Luce) skill estimate"],
  sigma: ["σ", "uncertainty of μ (one standard deviation)"],
  ordinal: ["rating", "μ − 3σ of the OpenSkill rating μ ± σ (hover a value): the sort key, as arena standings shows it"],
  faults: ["faults", "faults by kind"],
  forfeits: ["forfeits", "seats forfeited"],
  median_ms: ["ms", "median decision time (ms)"],
};
// Shown inside other cells (SPEC 10.6): the by-deal intervals as "±h", ties as "=" on the rank.
const FOLDED = new Set(["tied", "shared_rank", "p_better_than_next", "placing_interval",
  "score_interval", "duplicate_interval", "rating_interval", "mu", "sigma"]);  // (μ, σ: the rating's title)
const INTERVAL_OF = { mean_placing: "placing_interval", mean_score: "score_interval", duplicate: "duplicate_interval" };
function withInterval(r, k, digits) {
  const iv = r[INTERVAL_OF[k]];
  const text = fmt(r[k], digits);
  if (r[k] === null || !iv || iv.low === null || iv.high === null) return text;
  return `${text} ±${((iv.high - iv.low) / 2).toFixed(digits)}`;
}
function pairsBlock(scope, table) {
  const pairs = table.pairs || [];
  if (!pairs.length) return null;
  const bots = (table.rows || []).map((r) => r.bot).filter((b) => pairs.some((p) => p.row === b || p.column === b));
  const cell = (a, b) => {
    const p = pairs.find((x) => x.row === a && x.column === b);
    if (!p || p.mean === null) return a === b ? "" : "–";
    const digits = p.metric === "placing" ? 2 : 1;
    return `${p.mean >= 0 ? "+" : ""}${p.mean.toFixed(digits)} (${p.p_better === null ? "?" : Math.round(100 * p.p_better) + "%"})`;
  };
  const what = scope === "overall" ? "placing" : "dup";
  return h("details", { class: "pairs" },
    h("summary", {}, `pairs: row minus column, mean ${what} difference per deal (P(row better))`),
    scroller(`${scope}: pairs`, h("table", {},
      h("tr", {}, h("th", { class: "l" }, "row \\ column"), bots.map((b) => h("th", {}, b))),
      bots.map((a) => h("tr", {}, h("td", { class: "l" }, a), bots.map((b) => h("td", {}, cell(a, b))))))));
}
function standingsTable(scope, table) {
  const rows = table.rows || [];
  const keys = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!keys.includes(k) && !FOLDED.has(k)) keys.push(k);
  const cols = keys.filter((k) => !(scope === "overall" && rows.every((r) => r[k] === null)));
  const head = h("tr", {}, cols.map((k) => h("th", { class: k === "bot" ? "l" : "", title: (COLUMNS[k] || [k, k])[1] }, (COLUMNS[k] || [k])[0])));
  const body = rows.map((r) => h("tr", { "data-bot": r.bot },
    cols.map((k) => h("td", { class: k === "bot" || k === "faults" ? "l" : "", "data-col": k },
      k === "bot" ? link(botHref(r.bot), r.bot) :
      k === "rank" ? `${r.shared_rank ?? r.rank}${r.tied ? "=" : ""}` :
      k === "ordinal" ? h("span", { title: `μ ${fmt(r.mu, 2)} ± σ ${fmt(r.sigma, 2)}` }, fmt(r.ordinal, 1)) :
      k in INTERVAL_OF ? withInterval(r, k, k === "mean_placing" ? 2 : 1) :
      fmt(r[k], k === "mean_score" || k === "duplicate" ? 1 : 2)))));
  const shown = ["rows", "matches", "unrated", "pairs", "confidence", "settled"];
  const extra = Object.entries(table).filter(([k]) => !shown.includes(k));
  const level = table.confidence ? `${Math.round(100 * table.confidence)}%` : "95%";
  const notes = [];
  if (rows.some((r) => r.placing_interval && r.placing_interval.low !== null)) notes.push(`±: ${level} interval by deal`);
  if (rows.some((r) => r.tied)) notes.push(`=: not separated from a neighbour at ${level}`);
  return h("section", { class: "panel", "data-scope": scope },
    h("h2", {}, scope === "overall" ? "Overall" : scope, " ",
      h("span", { class: "muted", "data-matches": table.matches }, `(${table.matches} matches`,
        table.unrated ? `, ${table.unrated} unrated: a bot sat on both teams` : "", ")")),
    scroller(`${scope}: standings`, h("table", { class: "standings" }, h("thead", {}, head), h("tbody", {}, body))),
    notes.length ? h("p", { class: "muted" }, notes.join("; ")) : null,
    pairsBlock(scope, table),
    extra.map(([k, v]) => genericBlock(k, v)));
}
// Fields the standings may grow (intervals, pairwise tables...): shown as they come.
function genericBlock(name, v) {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const inner = Object.values(v);
    if (inner.length && inner.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
      const cols = [...new Set(inner.flatMap((x) => Object.keys(x)))];
      return h("details", {}, h("summary", {}, name), scroller(name, h("table", {},
        h("tr", {}, h("th", {}), cols.map((c) => h("th", {}, c))),
        Object.entries(v).map(([k, x]) => h("tr", {}, h("td", { class: "l" }, k), cols.map((c) => h("td", {}, fmt(x[c]))))))));
    }
  }
  return h("div", { class: "kv" }, h("span", {}, h("b", {}, name + ": "), fmt(v)));
}

// ---- the tournament page ------------------------------------------------------------------------
function tournamentPage() {
  crumbs.textContent = "";
  let es = null;
  const render = (s) => {
    document.title = `${s.name} · Trick Arena`;
    const p = s.progress;
    const pct = p.total ? Math.min(100, (100 * p.completed) / p.total) : 0;
    const tables = s.standings || {};
    const order = ["overall", ...Object.keys(tables).filter((k) => k !== "overall")];
    liveBadge.hidden = !(p.running && es && es.readyState === EventSource.OPEN);
    update(
      h("h1", {}, s.name, " ", h("span", { class: "muted" }, p.running ? "running" : "not running")),
      s.compare ? h("p", { class: "panel", id: "compare-link" }, "A comparison (arena compare): ", link("/compare", "its verdict and intervals per game")) : null,
      h("div", { class: "panel", id: "progress" },
        h("div", { class: "bar" }, h("span", { style: { width: `${pct.toFixed(1)}%` } })),
        h("div", { class: "kv" },
          h("span", {}, h("b", {}, "completed "), h("span", { id: "completed" }, p.completed), p.total ? ` of ${p.total}` : ""),
          p.aborted ? h("span", { class: "fault" }, `${p.aborted} aborted (replayed on the next run)`) : null,
          h("span", {}, h("b", {}, "rate "), p.rate ? `${p.rate.toFixed(2)} matches/s` : "–"),
          h("span", {}, h("b", {}, "ETA "), p.running ? duration(p.eta_s) : "–"),
          h("span", { class: "muted" }, s.exact ? "standings: final order (same as arena standings)" : "standings: live (matches still arriving; rated in schedule order, as arena standings does)"))),
      h("p", { class: "help" }, "Rating: OpenSkill (Plackett-Luce), μ is the skill estimate and σ its uncertainty; rows are sorted by μ − 3σ, ",
        "a skill the bot very likely has at least. σ shrinks as a bot plays more, so early differences smaller than a few σ mean little. ",
        "dup compares each score with what the same cards scored in the deal's other seat rotations."),
      s.running && s.running.length ? h("div", { class: "panel" }, h("h2", {}, "Being played now"),
        h("ul", {}, s.running.map((m) => h("li", {}, link(matchHref(m.id || m.match_id), m.match_id), " ", h("span", { class: "muted" }, m.bots.join(", ")))))) : null,
      s.computing ? h("p", { class: "panel muted", id: "computing" }, `Folding the standings over ${p.completed} matches…`) : null,
      h("div", { id: "standings" }, order.filter((k) => tables[k]).map((k) => standingsTable(k, tables[k]))),
      latencyPanel(s.latency),
      playPanel(null),
      h("div", { class: "grid" },
        h("div", { class: "panel", id: "latest" }, h("h2", {}, "Latest matches"),
          s.latest.length ? scroller("latest matches", h("table", {}, s.latest.map((m) => h("tr", {},
            h("td", { class: "l" }, m.record ? link(matchHref(m.match_id), m.match_id) : m.match_id),
            h("td", { class: "l" }, m.status === "completed" ? m.bots.map((b, i) => [i ? ", " : "", `${b} ${m.scores[i]}`]) : h("span", { class: "fault" }, m.reason),
              m.strained ? [" ", h("span", { class: "chip strained", title: m.strained }, "strained")] : null),
            h("td", {}, link(dealHref(m), "dup")))))) : h("p", { class: "muted" }, "none yet")),
        h("div", { class: "panel", id: "faults" }, h("h2", {}, "Latest faults"),
          s.faults.length ? h("ul", {}, s.faults.map((f) => h("li", {},
            link(matchHref(f.match_id), f.match_id), " ", f.bot ? link(botHref(f.bot), f.bot) : "", " ",
            h("span", { class: "fault" }, f.kind), ": ", f.withheld ? h("span", { class: "muted" }, WITHHELD) : h("span", { class: "msg", title: f.message }, f.message)))) : h("p", { class: "muted" }, "none"))));
  };
  es = new EventSource("/api/stream");
  playOffer.then(() => getJSON("/api/summary")).then(render).catch(showError);
  es.addEventListener("summary", (e) => render(JSON.parse(e.data)));
  es.onerror = () => { liveBadge.hidden = true; };
}

// The referee's latency (SPEC 10.6): the tournament's own verdict on each match, as stored.
function latencyPanel(l) {
  if (!l || !l.matches) return null;
  const more = (listed, count) => (count > listed.length ? ` and ${count - listed.length} more` : "");
  const named = l.suspect.length ? l.suspect : l.strained;
  return h("section", { class: "panel", id: "latency" }, h("h2", {}, "Referee latency"),
    h("p", {}, `Per decision over ${l.matches} matches: median ${fmt(l.p50_ms, 3)} ms, worst p99 ${fmt(l.p99_ms, 3)} ms, max ${fmt(l.max_ms, 3)} ms `,
      `(margin ${fmt(l.margin_ms)} ms); highest load ${fmt(l.max_load_per_core)} per core.`),
    l.warning ? h("p", { class: "warning", id: "latency-warning" }, l.warning) : h("p", { class: "muted" }, "No match came near the margin."),
    named.length ? h("p", {}, l.suspect.length ? "With a timeout that may be the arena's: " : "Strained: ",
      named.map((id, i) => [i ? ", " : "", link(matchHref(id), id)]),
      more(named, l.suspect.length ? l.suspect_count : l.strained_count)) : null);
}

// A person's match (arena serve --allow-play, SPEC 11): a button per game starts one against the
// tournament's bots (or a bot's copies) and opens its seat's page; none when the server says no.
let offered = { games: [] };
const playOffer = getJSON("/api/play").then((o) => { offered = o; }).catch(() => {});
function playPanel(against) {
  if (!offered.games || !offered.games.length) return null;
  return h("section", { class: "panel", id: "play" }, h("h2", {}, against ? `Play against ${against}` : "Play"),
    h("p", { class: "help" }, against ? `Take a seat; ${against} plays every other seat.` : "Take a seat against the tournament's bots (drawn at random)."),
    h("p", {}, offered.games.map((g) => [h("button", { type: "button", class: "play", "data-game": g, onclick: () => startPlay(g, against) },
      against ? `play ${g} against ${against}` : `play ${g}`), " "])),
    h("p", { class: "bad", id: "play-error", "aria-live": "polite" }));
}
async function startPlay(game, against) {
  const answer = await fetch("/api/play/start", { method: "POST", headers: { "Content-Type": "application/json", "X-Arena-Play": "1" },
    body: JSON.stringify({ game, against }) });
  const body = await answer.json().catch(() => ({}));
  if (answer.ok) location.href = body.url;
  else document.getElementById("play-error").textContent = body.error || answer.statusText;
}

// ---- a bot's page -------------------------------------------------------------------------------
async function botPage() {
  const name = params.get("name") || "";
  crumbs.replaceChildren(" / ", h("span", {}, `bot ${name}`));
  const b = await getJSON("/api/bot?" + q({ name }));
  await playOffer;
  document.title = `${b.bot} · Trick Arena`;
  const t = b.times;
  const peak = Math.max(1, ...t.counts);
  const labels = t.bounds_ms.map((x) => `≤ ${x}`).concat([`> ${t.bounds_ms[t.bounds_ms.length - 1]}`]);
  const rowsOf = Object.entries(b.tables);
  const cols = ["played", "wins", "mean_placing", "mean_score", "duplicate", "ordinal", "faults", "forfeits", "median_ms"];
  put(
    h("h1", {}, b.bot),
    playPanel(b.bot),
    h("section", { class: "panel" }, h("h2", {}, "Results per game"),
      scroller("results per game", h("table", {},
        h("tr", {}, h("th", { class: "l" }, "table"), h("th", {}, "rank"), cols.map((c) => h("th", { title: (COLUMNS[c] || [c, ""])[1] }, (COLUMNS[c] || [c])[0]))),
        rowsOf.map(([scope, r]) => h("tr", {}, h("td", { class: "l" }, scope), h("td", {}, r.rank), cols.map((c) => h("td", {}, fmt(r[c], c === "ordinal" ? 1 : 2)))))))),
    h("section", { class: "panel", id: "times" }, h("h2", {}, "Decision times"),
      h("p", { class: "muted" }, `${t.count} decisions; median ${fmt(t.p50, 3)} ms, 90% ${fmt(t.p90, 3)} ms, 99% ${fmt(t.p99, 3)} ms, slowest ${fmt(t.max, 3)} ms`),
      h("table", {}, t.counts.map((n, i) => h("tr", {}, h("td", {}, labels[i] + " ms"),
        h("td", { style: { width: "60%" } }, h("div", { class: "bar" }, h("span", { style: { width: `${(100 * n) / peak}%` } }))), h("td", {}, n))))),
    h("section", { class: "panel", id: "bot-faults" }, h("h2", {}, `Faults (${b.fault_count})`),
      b.faults.length ? scroller("faults", h("table", {}, h("tr", {}, h("th", { class: "l" }, "match"), h("th", {}, "seat"), h("th", { class: "l" }, "kind"), h("th", { class: "l" }, "reason")),
        b.faults.map((f) => h("tr", { class: "fault-row" }, h("td", { class: "l" }, link(matchHref(f.match_id, f.seat), f.match_id)), h("td", {}, f.seat),
          h("td", { class: "l fault" }, f.kind), h("td", { class: "l wrap" }, f.withheld ? h("span", { class: "muted" }, WITHHELD) : f.message))))) : h("p", { class: "muted" }, "none")),
    h("section", { class: "panel", id: "worst" }, h("h2", {}, "Worst matches by duplicate score"),
      h("p", { class: "help" }, "Each: the score minus the mean score the same cards got over the deal's rotations (lower = worse than the other bots did with those cards)."),
      b.worst.length ? scroller("worst matches", h("table", {}, h("tr", {}, h("th", { class: "l" }, "match"), h("th", {}, "seat"), h("th", {}, "score"), h("th", {}, "dup"), h("th", {}, "deal")),
        b.worst.map((w) => h("tr", {}, h("td", { class: "l" }, link(matchHref(w.match_id, w.seat), w.match_id)), h("td", {}, w.seat), h("td", {}, w.score),
          h("td", { class: w.dup < 0 ? "bad" : "" }, fmt(w.dup, 1)),
          h("td", {}, link("/deal?" + q(dealOf(w.match_id)), "same deal")))))) : h("p", { class: "muted" }, "no deal played in two rotations yet")));
}
function dealOf(matchId) {
  const m = /^(.*)\/t(\d+)\/d(\d+)\/r(\d+)$/.exec(matchId);
  return m ? { game: m[1], table: m[2], deal: m[3] } : {};
}

// ---- the duplicate view -------------------------------------------------------------------------
async function dealPage() {
  const game = params.get("game"), table = params.get("table"), deal = params.get("deal");
  crumbs.replaceChildren(" / ", `${game} table ${table} deal ${deal}`);
  const d = await getJSON("/api/deal?" + q({ game, table, deal }));
  const rotations = d.seats[0].rotations;
  put(
    h("h1", {}, `${d.game} · table ${d.table} · deal ${d.deal}: every seat rotation`),
    d.sealed && !d.hands ? h("p", { class: "panel muted", id: "sealed" }, "The cards are shown once every rotation of this deal is over: they are still in play.") : null,
    h("p", { class: "help" }, "Each row is one seat's cards (the first deal's hand, the same in every rotation); each column one rotation: ",
      "which bot held those cards and what it scored with them. dup: the score minus the row's mean", d.higher_is_better ? "" : " (sign flipped: low scores win)", "."),
    scroller("every seat rotation", h("table", { id: "duplicate" },
      h("tr", {}, h("th", { class: "l" }, "seat · cards"), rotations.map((r) => h("th", {}, link(matchHref(r.match_id), `rotation ${r.rotation}`))), h("th", {}, "mean")),
      d.seats.map((s) => h("tr", {},
        h("td", { class: "l wrap" }, h("b", {}, `seat ${s.seat} `), d.hands ? cards(d.hands[s.seat]).map((c) => (c.classList.add("small"), c)) : ""),
        s.rotations.map((r) => h("td", {}, link(botHref(r.bot), r.bot), h("br"), h("b", {}, r.score), r.dup === null ? "" : h("span", { class: r.dup < 0 ? "bad" : "good" }, ` (${r.dup >= 0 ? "+" : ""}${fmt(r.dup, 1)})`), r.forfeited ? h("span", { class: "fault" }, " forfeit") : "")),
        h("td", {}, fmt(s.mean, 1))))), "panel"));
}

// ---- a comparison (arena compare, SPEC 10.10) ----------------------------------------------------
// As Python's format prints it (arena compare's lines): an exact half rounds to even, where
// toFixed rounds it away from zero (9 / 8 = 1.125: "1.12", not "1.13").
function fixedEven(v, digits) {  // (v >= 0)
  const scaled = v * 10 ** digits;
  const floor = Math.floor(scaled);
  return scaled - floor === 0.5 && floor % 2 === 0 ? (floor / 10 ** digits).toFixed(digits) : v.toFixed(digits);
}
function signed(v) {
  return v === null || v === undefined ? "–" : `${v >= 0 ? "+" : "-"}${fixedEven(Math.abs(v), 2)}`;
}
function comparePage() {
  crumbs.replaceChildren(" / ", "comparison");
  let es = null;
  const render = (c) => {
    const l = c.look;
    document.title = `${c.new} against ${c.old} · Trick Arena`;
    const head = h("h1", {}, `${c.new} against ${c.old} `, h("span", { class: "muted" }, `(field: ${c.field.join(", ")})`));
    if (!l) { update(head, h("p", { class: "panel muted", id: "no-look" }, c.why)); return; }
    const pct = `${Math.round(100 * l.confidence)}%`;
    const interval = (g) => (g.low === null || g.high === null ? "–" : `[${signed(g.low)}, ${signed(g.high)}]`);
    const deals = (g) => (g.per_table === l.deals ? `${g.deals}` : `${g.deals} (${g.per_table} per table)`);
    update(head,
      h("section", { class: "panel", id: "verdict" }, h("h2", {}, "Verdict"),
        h("p", { class: `verdict v-${l.verdict.replace(" ", "-")}`, id: "overall" }, l.said),
        h("p", {}, `After ${l.deals} deals per table; `,
          l.fixed ? `${l.most} deals per table, judged once.` : `at most ${l.most} deals per table.`),
        h("p", { class: "help" }, `Per game: better (worse) when t ≥ ${l.floor} (≤ −${l.floor}) standard errors from ${l.e0} sd, `,
          `no change when the ${pct} interval lies within ±${l.e1} sd; alpha ${l.alpha}, beta ${l.beta}. `,
          "Better overall: better in a game and better or no change in every other; not better: worse in a game, or no game able to gain ",
          `${l.e1} sd (SPEC 10.10).`)),
      h("section", { class: "panel", id: "games" }, h("h2", {}, "Per game"),
        scroller("per game", h("table", { id: "per-game" },
          h("thead", {}, h("tr", {}, h("th", { class: "l" }, "game"), h("th", { class: "l" }, "verdict"), h("th", {}, "deals"),
            h("th", {}, "t"), h("th", {}, "needs |t| ≥"), h("th", {}, "NEW − OLD per deal"), h("th", {}, `${pct} interval`), h("th", { class: "l" }, "why"))),
          h("tbody", {}, l.games.map((g) => h("tr", { "data-game": g.label },
            h("td", { class: "l" }, g.label), h("td", { class: "l verdict-cell" }, g.verdict), h("td", { class: "deals" }, deals(g)),
            h("td", { class: "t" }, signed(g.t)), h("td", { class: "bound" }, g.bound.toFixed(2)),
            h("td", { class: "mean" }, signed(g.mean)), h("td", { class: "interval" }, interval(g)), h("td", { class: "l wrap why" }, g.why)))))),
        h("p", { class: "help" }, "Per deal: NEW's mean score over its seats minus OLD's over the same seats, with the same cards against the same field ",
          "(negated where a low score wins); t: the mean in standard errors above e0 sd; a game that is decided plays no more deals.")));
  };
  const load = () => getJSON("/api/compare").then(render);
  es = new EventSource("/api/stream");  // a look is kept as the comparison plays: follow it
  es.addEventListener("summary", (e) => {
    liveBadge.hidden = !JSON.parse(e.data).progress.running;
    load().catch(showError);
  });
  es.onerror = () => { liveBadge.hidden = true; };
  return load();
}

// ---- the match page -----------------------------------------------------------------------------
const EVENT_HIDE = new Set(["type"]);
function eventLine(ev, seats) {
  const kind = ev.type || "?";
  const who = (s) => (seats[s] ? `seat ${s} (${seats[s].bot})` : `seat ${s}`);
  const aud = ev._audience ? h("span", { class: "aud" }, ` [seen by ${ev._audience.join(", ")}]`) : null;
  if (kind === "play") return h("li", {}, `${who(ev.seat)} plays `, card(ev.card), aud);
  if (kind === "trick") return h("li", {}, h("b", {}, "trick "), cards(ev.cards), ` → won by ${who(ev.winner)}`,
    "points" in ev ? ` (${ev.points} points)` : "", aud);
  const rest = Object.entries(ev).filter(([k]) => !EVENT_HIDE.has(k) && k !== "_audience");
  return h("li", {}, h("b", {}, kind.replaceAll("_", " ")), " ", rest.map(([k, v]) => h("span", { class: "chip" }, `${k}: `, value(v, k))), aud);
}
const WITHHELD = "(withheld: it can name cards still in play)";

async function matchPage() {
  const id = params.get("id") || "";
  let seat = params.get("seat") ?? "all";
  let data = null, at = 0, follow = false, es = null;
  let jumpSeat = seat === "all" ? 0 : Number(seat), speed = 2;  // the debugger's (debugger.js)
  crumbs.replaceChildren(" / ", `match ${id}`);

  const load = async () => {
    if (es) { es.close(); es = null; }
    let d;
    try {
      d = await getJSON("/api/match?" + q({ id, seat }));
    } catch (err) {
      // sealed (its cards still in play): shown as a seat this viewer's token shows, if any
      const allowed = (err.status === 403 && err.body && err.body.seats_allowed) || [];
      if (!allowed.length || allowed.includes(Number(seat))) throw err;
      seat = String(allowed[0]);
      d = await getJSON("/api/match?" + q({ id, seat }));
    }
    if (d.running) {
      es = new EventSource("/api/match/stream?" + q({ id, seat }));
      es.addEventListener("match", (e) => { liveBadge.hidden = false; setData(JSON.parse(e.data)); });
      es.addEventListener("failed", (e) => showError(new Error(JSON.parse(e.data).error)));
    }
    follow = d.running;
    setData(d, true);
  };
  const setData = (d, first) => {
    const wasLast = data && data.frames && at >= data.frames.length - 1;
    data = d;
    if (!d.frames) { drawEmpty(); return; }
    if (first) at = ArenaDebugger.startFrame(d, params, seat) ?? (d.running ? d.frames.length - 1 : 0);
    else if (wasLast || follow) at = d.frames.length - 1;
    at = Math.min(at, d.frames.length - 1);
    draw();
  };
  const drawEmpty = () => put(h("h1", {}, id), h("p", { class: "muted" }, data.why || "no record"),
    data.stored ? h("p", {}, "scores: ", data.stored.bots.map((b, i) => `${b} ${data.stored.scores[i]}`).join(", ")) : null);
  const step = (n) => { if (!data || !data.frames) return; at = Math.max(0, Math.min(data.frames.length - 1, at + n)); follow = false; draw(); };
  const go = (n) => { if (n === null || n === undefined) return; at = n; follow = false; draw(); };
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" && e.target.type !== "range") return;
    if (e.key === "ArrowRight") { step(e.shiftKey ? 10 : 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { step(e.shiftKey ? -10 : -1); e.preventDefault(); }
    else if (e.key === "Home") go(0);
    else if (e.key === "End" && data && data.frames) go(data.frames.length - 1);
  });

  const draw = () => {
    const d = data, f = d.frames[at], v = f.view || {}, last = d.frames.length - 1;
    if (!d.running) ArenaDebugger.remember(id, seat, at);
    const seats = d.seats;
    const seatName = (s) => (seats[s] ? seats[s].bot : `seat ${s}`);
    const perSeat = Object.entries(v).filter(([k, x]) => Array.isArray(x) && x.length === d.players && k !== "hands" && k !== "trick");
    const scalars = Object.entries(v).filter(([k, x]) => !Array.isArray(x) && (x === null || typeof x !== "object") && !["game", "players", "seat"].includes(k));
    const objects = Object.entries(v).filter(([k, x]) => x && typeof x === "object" && !perSeat.some(([p]) => p === k) && !["hands", "hand", "trick"].includes(k));
    const hands = v.hands || null;
    const dec = f.decision;
    const scoring = [], scores = new Set(d.scoring_events || []);  // the game's SCORING_EVENTS
    for (const fr of d.frames.slice(0, at + 1)) for (const ev of fr.events) if (scores.has(ev.type)) scoring.push(ev);
    const seatLabel = h("label", { for: "seat" }, " view ");
    const seatSelect = h("select", { id: "seat", "aria-label": "whose view of the match", onchange: (e) => { seat = e.target.value; history.replaceState(null, "", "/match?" + q({ id, seat })); load().catch(showError); } },
      d.all_hands_allowed ? h("option", { value: "all", selected: seat === "all" }, "all hands") : null,
      seats.filter((s) => d.all_hands_allowed || (d.seats_allowed || []).includes(s.seat)).map((s) => h("option", { value: String(s.seat), selected: String(s.seat) === String(seat) }, `as seat ${s.seat} (${s.bot}) saw it`)));
    put(
      h("h1", {}, `${d.game_name || d.game} · ${id}`, d.running ? h("span", { class: "live" }, " being played") : ""),
      h("div", { class: "kv" }, h("span", {}, h("b", {}, "options "), fmt(d.options)),
        seats.map((s) => h("span", {}, h("b", {}, `seat ${s.seat} `), link(botHref(s.bot), s.bot), s.team !== null && s.team !== undefined ? ` (team ${s.team})` : "")),
        d.stored ? link(dealHref(d.stored), "same deal, every rotation") : null,
        d.referee ? h("span", { id: "referee" }, h("b", {}, "referee latency "), `median ${fmt(d.referee.p50_ms, 3)} ms, max ${fmt(d.referee.max_ms, 3)} ms`,
          d.strained ? h("span", { class: "warning" }, ` · strained: ${d.strained}; a timeout here may be the arena's`) : "") : null),
      h("div", { class: "panel controls" },
        h("button", { onclick: () => go(0), title: "Home" }, "|◀"),
        h("button", { id: "prev", onclick: () => step(-1), title: "←" }, "◀"),
        h("input", { type: "range", id: "scrub", min: 0, max: last, value: at, "aria-label": "decision",
          oninput: (e) => go(Number(e.target.value)) }),
        h("button", { id: "next", onclick: () => step(1), title: "→" }, "▶"),
        h("button", { id: "end", onclick: () => go(last), title: "End" }, "▶|"),
        h("span", { id: "frame" }, `${at} / ${last}`), seatLabel, seatSelect),
      ArenaDebugger.controls({ h, frames: d.frames, at, go, seats, jumpSeat, speed, step,
        setJumpSeat: (s) => { jumpSeat = s; draw(); }, setSpeed: (x) => { speed = x; },
        atEnd: () => at >= data.frames.length - 1, redraw: () => draw() }),
      // The card table (table.js), then the state inspector below it, one click away.
      Table.spectate(d, at),
      h("p", {}, h("a", { href: "#decision", id: "to-inspector" }, "the state inspector ↓")),
      dec ? h("div", { class: `panel decision ${dec.by === "autopilot" ? "autopilot" : ""} ${dec.faults.length ? "faulted" : ""}`, id: "decision" },
        h("div", {}, h("b", {}, `Decision ${at}: seat ${dec.seat} (${seatName(dec.seat)})`,
          dec.number ? h("span", { id: "seat-decision" }, ` #${dec.number}`) : "", ` · ${dec.decision}`), " · ",
          dec.by === "autopilot" ? h("span", { class: "autopilot" }, "autopilot") : "by bot",
          dec.ms !== null && dec.ms !== undefined ? ` · ${dec.ms} ms` : ""),
        dec.legal ? h("div", {}, "legal: ", dec.legal.map((a) => (isCard(a) ? card(a, a === dec.action ? "chosen" : "") : h("span", { class: "chip" + (a === dec.action ? " chosen" : "") }, a))),
          " → chose ", h("b", { id: "chosen" }, dec.action)) : h("div", { class: "muted" }, "(another seat's decision: its options and choice are hidden from this seat)"),
        dec.faults.map((x) => h("div", { class: "fault" }, `fault (${x.kind}) seat ${x.seat}`, x.message ? `: ${x.message}` : "", x.forfeited ? " — forfeited" : "")),
        dec.replies && dec.replies.some((r) => r.verdict !== "ok") ? h("details", {}, h("summary", {}, "replies"),
          dec.replies.map((r) => h("div", { class: "muted" }, `${r.verdict} ${r.ms ?? "–"} ms: `, h("code", {}, r.text)))) : null,
        ArenaDebugger.stderr(h, dec))
        : h("div", { class: "panel", id: "decision" }, h("b", {}, "The deal"), " — step with ▶ or the → key"),
      h("div", { class: "panel", id: "table" },
        seats.map((s) => h("div", { class: "seatrow" + (v.to_move === s.seat ? " tomove" : ""), "data-seat": s.seat },
          h("span", { class: "who" }, `seat ${s.seat} · ${s.bot}`),
          hands ? cards(hands[s.seat]) : v.hand && v.seat === s.seat ? cards(v.hand) : v.hand_counts ? h("span", { class: "muted" }, `${v.hand_counts[s.seat]} cards`) : "",
          perSeat.map(([k, x]) => {
            if (k === "hand_counts" && !hands && !(v.hand && v.seat === s.seat)) return null;  // (said just before)
            const said = ArenaDebugger.seatField(k, x[s.seat]);
            if (said === null) return null;
            return h("span", { class: "chip" }, said === undefined ? [`${ArenaDebugger.words(k)}: `, value(x[s.seat])] : said);
          }))),
        v.trick !== undefined ? h("div", {}, h("b", {}, "trick: "), (v.trick || []).length ? (v.trick || []).map((t) => (t && t.card ? h("span", {}, card(t.card), h("sub", {}, t.seat)) : value(t))) : h("span", { class: "muted" }, "empty")) : null,
        h("div", { class: "kv" }, scalars.filter(([, x]) => !ArenaDebugger.isEmpty(x)).map(([k, x]) => h("span", {}, h("b", {}, ArenaDebugger.words(k) + " "), value(x, k)))),
        objects.filter(([, x]) => !ArenaDebugger.isEmpty(x)).map(([k, x]) => h("div", { class: "kv" }, h("span", {}, h("b", {}, ArenaDebugger.words(k) + " "), value(x))))),
      h("div", { class: "panel", id: "happened" }, h("h2", {}, "What happened"), f.events.length ? h("ul", { class: "events" }, f.events.map((e) => eventLine(e, seats))) : h("p", { class: "muted" }, "nothing visible")),
      scoring.length ? h("div", { class: "panel", id: "scoring" }, h("h2", {}, "Scoring so far"), h("ul", { class: "events" }, scoring.map((e) => eventLine(e, seats)))) : null,
      d.result && at === last ? h("div", { class: "panel", id: "result" }, h("h2", {}, "Result"),
        h("table", {}, h("tr", {}, h("th", { class: "l" }, "seat"), h("th", { class: "l" }, "bot"), h("th", {}, "score"), h("th", {}, "place")),
          seats.map((s) => h("tr", {}, h("td", { class: "l" }, s.seat), h("td", { class: "l" }, s.bot),
            h("td", { class: "final-score", "data-seat": s.seat }, d.result.scores[s.seat]), h("td", {}, d.result.placings[s.seat],
              d.result.forfeited.includes(s.seat) ? " (forfeited)" : ""))))) : null);
  };
  await load();
}

function showError(err) {
  put(h("p", { class: "bad", id: "error" }, String(err.message || err)));
}

const routes = { "/": tournamentPage, "/bot": botPage, "/match": matchPage, "/deal": dealPage, "/compare": comparePage };
Promise.resolve((routes[location.pathname] || tournamentPage)()).catch(showError);
