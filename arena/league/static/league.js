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

function matchesTable(matches) {
  return table(["match", "seats (placing)", "status", "faults", "replay"], matches.map((m) =>
    el("tr", { class: "match" },
      el("td", { text: m.id }),
      el("td", { text: m.bots.map((b, i) => `${b} (${m.placings[i] ?? "–"})`).join(", ") }),
      el("td", { text: m.status === "completed" ? "completed" : `${m.status}: ${m.reason}` }),
      el("td", { text: m.faults.map((f) => `${f.bot}: ${f.kind}`).join("; ") || "none" }),
      el("td", {}, m.replay ? el("a", { href: m.replay, text: "replay" }) : "after its deal-set"))));
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
  main.append(el("h2", { text: "Latest matches" }), matchesTable(matches));
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
  const last = v.history[v.history.length - 1];
  main.append(el("h2", { text: "History" }),
    el("p", { id: "history", text: last ? `${v.history.length} matches; mean placing ${last.mean_placing}` : "no matches yet" }),
    el("h2", { text: "Latest matches" }), matchesTable(v.matches));
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
