"use strict";
// The league's pages: plain DOM, data from /api (no inline script or style: the CSP forbids them).

const main = document.getElementById("main");
let me = { author: null, organiser: false, csrf: null, registration: "closed" };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
  }
  return node;
}

function num(value, digits) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
}

function interval(iv, digits) {
  return iv ? `${num(iv.low, digits)} … ${num(iv.high, digits)}` : "–";
}

async function getJSON(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

async function post(url, body, json) {
  const headers = { "X-CSRF-Token": me.csrf || "" };
  if (json) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method: "POST", body: json ? JSON.stringify(body) : body, headers, credentials: "same-origin",
  });
  const data = await response.json();
  return { ok: response.ok, status: response.status, data };
}

function versionLink(version, text) {
  return el("a", { href: `/version?id=${version.id}`, text: text || version.label });
}

function table(headings, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, ...headings.map((h) => el("th", { text: h })))),
    el("tbody", {}, ...rows));
}

// A match's replay (text), the debugger (arena serve's match page) and its record (for
// `arena replay FILE --seat S --ask N --bot CMD`), once its deal-set is done.
function matchLinks(links, id) {
  if (!links) return el("span", { class: "sealed", text: "after its deal-set" });
  return el("span", { class: "links" },
    el("a", { href: links.debugger, class: "debugger-link", "aria-label": `debugger for ${id}`, text: "debugger" }), " · ",
    el("a", { href: links.replay, class: "replay-link", "aria-label": `replay of ${id}`, text: "replay" }), " · ",
    el("a", { href: links.record, class: "record-link", "aria-label": `record of ${id}`, download: "", text: "record" }));
}

function matchesTable(matches) {
  return table(["match", "seats (placing)", "status", "faults", "replay and debugger"], matches.map((m) =>
    el("tr", { class: "match" },
      el("td", { text: m.id }),
      el("td", { text: m.bots.map((b, i) => `${b} (${m.placings[i] ?? "–"})`).join(", ") }),
      el("td", { text: m.status === "completed" ? "completed" : `${m.status}: ${m.reason}` }),
      el("td", { text: m.faults.map((f) => `${f.bot}: ${f.kind}`).join("; ") || "none" }),
      el("td", {}, matchLinks(m.links, m.id)))));
}

function faultsTable(faults) {
  if (!faults.length) return el("p", { class: "faults-none", text: "no faults" });
  return table(["match", "seat", "version", "kind", "message", "replay and debugger"], faults.map((f) =>
    el("tr", { class: "fault-row" },
      el("td", { text: f.match }),
      el("td", { class: "num", text: String(f.seat) }),
      el("td", { text: f.bot }),
      el("td", { text: f.kind }),
      el("td", { text: f.withheld ? "(its author's)" : f.message || "" }),
      el("td", {}, matchLinks(f.links, f.match)))));
}

async function ladderPage() {
  const data = await getJSON("/api/ladder");
  const matches = await getJSON("/api/matches");
  main.replaceChildren(el("h1", { text: `${data.league}: the ladder` }),
    el("p", { id: "playing", text: `${data.versions.length} active versions; ${data.playing} deal-sets being played` }));
  const scopes = [...data.games, "overall"];
  for (const scope of scopes) {
    const t = data.tables[scope];
    if (!t) continue;
    main.append(el("h2", { text: `${scope} (${t.matches} matches${t.settled ? ", every rank separated" : ""})` }));
    main.append(table(["rank", "version", "author", "rating (95%)", "mean placing (95%)", "deals", "faults"],
      t.rows.map((r) => el("tr", { class: "ladder-row" },
        el("td", { text: `${r.shared_rank}${r.tied ? "=" : ""}` }),
        el("td", {}, r.version ? versionLink(r.version) : r.bot,
          r.version && r.version.status !== "active" ? ` (${r.version.status})` : ""),
        el("td", {}, r.version ? el("a", { href: `/author?name=${encodeURIComponent(r.version.author)}`, text: r.version.author }) : ""),
        el("td", { class: "num", text: `${num(r.mu, 1)} (${interval(r.rating_interval, 1)})` }),
        el("td", { class: "num", text: `${num(r.mean_placing, 2)} (${interval(r.placing_interval, 2)})` }),
        el("td", { class: "num", text: String(r.deals) }),
        el("td", { text: Object.entries(r.faults).map(([k, v]) => `${k} ${v}`).join(", ") || "none" })))));
  }
  main.append(el("h2", { text: "Latest matches" }), matchesTable(matches),
    el("h2", { text: "Latest faults" }), faultsTable(data.faults));
}

function versionRows(versions, yours) {
  return table(["version", "status", "submitted", "note", ""], versions.map((v) =>
    el("tr", { class: "version-row" },
      el("td", {}, versionLink(v)),
      el("td", { class: `status-${v.status}`, text: v.status }),
      el("td", { text: v.created }),
      el("td", { text: v.note }),
      el("td", {}, yours && v.status === "active" ? retireButton(v) : null))));
}

function retireButton(version) {
  const button = el("button", { type: "button", text: "retire" });
  button.addEventListener("click", async () => {
    const result = await post(`/api/versions/${version.id}/retire`, {}, true);
    if (result.ok) mePage(); else alert(result.data.error);
  });
  return button;
}

async function authorPage() {
  const name = new URLSearchParams(location.search).get("name") || "";
  const data = await getJSON(`/api/authors/${encodeURIComponent(name)}`);
  main.replaceChildren(el("h1", { text: `Author ${data.author}` }), versionRows(data.versions, data.yours));
}

async function versionPage() {
  const id = new URLSearchParams(location.search).get("id") || "";
  const v = await getJSON(`/api/versions/${encodeURIComponent(id)}`);
  main.replaceChildren(el("h1", { text: v.label }),
    el("p", {}, "by ", el("a", { href: `/author?name=${encodeURIComponent(v.author)}`, text: v.author }),
      ", status ", el("span", { id: "status", class: `status-${v.status}`, text: v.status }),
      v.note ? ` (${v.note})` : ""));
  if (v.log !== undefined) main.append(el("h2", { text: "Build and check (only you see this)" }), el("pre", { id: "log", text: v.log }));
  if (v.stderr) {
    main.append(el("h2", { text: "Its stderr (only you see this)" }),
      el("ul", {}, ...v.stderr.map((name) => el("li", {}, el("a", { href: `/api/versions/${v.id}/stderr/${name}`, text: name })))));
  }
  const counts = Object.entries(v.fault_counts).map(([scope, kinds]) =>
    `${scope}: ${Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`);
  main.append(el("h2", { text: "Rating history" }), history(v.history),
    el("h2", { text: "Latest matches" }), matchesTable(v.matches),
    el("h2", { text: "Faults" }), el("p", { id: "fault-counts", text: counts.join("; ") || "no matches yet" }),
    faultsTable(v.faults));
}

// -- the rating history: a chart (inline SVG) and the same numbers as a table --------------------

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, String(value));
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// About ``count`` round values spanning [low, high] (1, 2 or 5 times a power of ten apart).
function ticks(low, high, count) {
  const raw = (high - low) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((x) => x >= raw) || raw;
  const out = [];
  for (let t = Math.ceil(low / step) * step; t <= high + step / 1e6; t += step) out.push(Number(t.toFixed(6)));
  return out;
}

// One table's history as a line (the rating, mu) in its 95% interval (a shaded band with dashed
// edges): solid against dashed, so the chart reads without colour.
function ratingChart(scope, points, titleId) {
  const W = 520, H = 220, left = 44, right = 12, top = 12, bottom = 40;
  const lows = points.map((p) => p.low), highs = points.map((p) => p.high);
  let y0 = Math.min(...lows), y1 = Math.max(...highs);
  if (y1 - y0 < 1) { y0 -= 0.5; y1 += 0.5; }
  const pad = (y1 - y0) * 0.05;
  y0 -= pad; y1 += pad;
  const n = points.length;
  const x = (i) => (n === 1 ? (left + W - right) / 2 : left + (i * (W - left - right)) / (n - 1));
  const y = (v) => top + ((y1 - v) * (H - top - bottom)) / (y1 - y0);
  const line = (values) => values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const last = points[n - 1];
  const chart = svg("svg", { class: "rating-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": titleId },
    svg("title", { id: titleId, text: `${scope}: rating after each of ${n} deal-sets, from ${num(points[0].mu, 1)} to ${num(last.mu, 1)} (95% interval at the last ${interval(last, 1)})` }));
  for (const t of ticks(y0, y1, 4)) {
    chart.append(svg("line", { class: "grid", x1: left, x2: W - right, y1: y(t), y2: y(t) }),
      svg("text", { class: "tick", x: left - 4, y: y(t) + 4, "text-anchor": "end", text: String(t) }));
  }
  chart.append(
    svg("polygon", { class: "band", points: `${line(highs)} ${line(lows).split(" ").reverse().join(" ")}` }),
    svg("polyline", { class: "bound", points: line(highs) }),
    svg("polyline", { class: "bound", points: line(lows) }),
    svg("polyline", { class: "mu", points: line(points.map((p) => p.mu)) }),
    ...points.map((p, i) => svg("circle", { class: "mu-point", cx: x(i), cy: y(p.mu), r: 3 })),
    svg("line", { class: "axis", x1: left, x2: W - right, y1: H - bottom, y2: H - bottom }),
    svg("text", { class: "tick", x: x(0), y: H - bottom + 14, "text-anchor": "middle", text: "1" }),
    n > 1 ? svg("text", { class: "tick", x: x(n - 1), y: H - bottom + 14, "text-anchor": "middle", text: String(n) }) : null,
    svg("text", { class: "axis-title", x: (left + W - right) / 2, y: H - 6, "text-anchor": "middle", text: "deal-sets played" }));
  return chart;
}

function historyTable(scope, points) {
  return el("div", { class: "history-table", tabindex: "0", role: "region", "aria-label": `${scope}: the chart's numbers` },
    el("table", {},
      el("caption", { text: `${scope}: rating after each deal-set` }),
      el("thead", {}, el("tr", {}, ...["#", "deal-set", "done", "rating", "95% interval"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, ...points.map((p, i) => el("tr", { class: "history-row" },
        el("td", { class: "num", text: String(i + 1) }),
        el("td", { class: "num", text: String(p.dealset) }),
        el("td", { text: p.at }),
        el("td", { class: "num", text: num(p.mu, 2) }),
        el("td", { class: "num", text: interval(p, 2) }))))));
}

function history(scopes) {
  const names = Object.keys(scopes);
  if (!names.length) return el("p", { id: "history", text: "no deal-set done yet" });
  return el("div", { id: "history" },
    el("p", { class: "legend", text: "Solid line and dots: the rating (OpenSkill mu); dashed lines and the band: its 95% interval." }),
    ...names.map((scope, i) => el("section", { class: "history", "data-scope": scope },
      el("h3", { text: scope }),
      el("div", { class: "history-pair" }, ratingChart(scope, scopes[scope], `chart-title-${i}`), historyTable(scope, scopes[scope])))));
}

async function mePage() {
  me = await getJSON("/api/me");
  main.replaceChildren(el("h1", { text: "Your bots" }));
  if (!me.author) {
    const token = el("input", { type: "password", id: "token", autocomplete: "off", placeholder: "your token" });
    const form = el("form", { id: "login" }, el("label", {}, "Token ", token), " ", el("button", { type: "submit", text: "Log in" }));
    const message = el("p", { class: "error", id: "login-error" });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const result = await post("/api/session", { token: token.value }, true);
      if (result.ok) mePage(); else message.textContent = result.data.error;
    });
    main.append(form, message);
    if (me.registration === "open") main.append(registerForm());
    return;
  }
  const file = el("input", { type: "file", id: "archive", accept: ".tar.gz,.tgz,.zip" });
  const form = el("form", { id: "upload" }, el("label", {}, "Bot folder archive (tar.gz or zip with bot.toml) ", file), " ",
    el("button", { type: "submit", text: "Upload" }));
  const outcome = el("div", { id: "outcome" });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!file.files.length) return;
    outcome.replaceChildren(el("p", { text: "building and checking…" }));
    const result = await post("/api/submit", file.files[0], false);
    if (result.data.error) {
      outcome.replaceChildren(el("p", { class: "error", text: result.data.error }));
      return;
    }
    outcome.replaceChildren(
      el("p", { class: `status-${result.data.status}`, id: "outcome-status" }, versionLink(result.data), `: ${result.data.status}`),
      el("pre", { text: result.data.log || "" }));
    refreshVersions();
  });
  const list = el("div", { id: "versions" });
  async function refreshVersions() {
    const data = await getJSON(`/api/authors/${encodeURIComponent(me.author)}`);
    list.replaceChildren(versionRows(data.versions, true));
  }
  main.append(el("p", { text: `Logged in as ${me.author}.` }), form, outcome, el("h2", { text: "Versions" }), list);
  refreshVersions();
}

function registerForm() {
  const name = el("input", { type: "text", id: "register-name", placeholder: "a name" });
  const form = el("form", { id: "register" }, el("label", {}, "New author ", name), " ", el("button", { type: "submit", text: "Register" }));
  const message = el("p", { id: "register-result" });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await post("/api/register", { name: name.value }, true);
    message.textContent = result.ok ? `Your token (shown once, keep it): ${result.data.token}` : result.data.error;
  });
  return el("div", {}, form, message);
}

const pages = { ladder: ladderPage, author: authorPage, version: versionPage, me: mePage };
(pages[document.body.dataset.page] || ladderPage)().catch((error) => {
  main.replaceChildren(el("p", { class: "error", text: String(error.message || error) }));
});
