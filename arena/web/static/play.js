// The person's page of arena play --web (SPEC.md 11): everything drawn comes from the messages
// the referee wrote to this seat, in order (window.arenaMessages keeps them, for the tests).
"use strict";

(() => {
  const { h, card, draw, scoreSheet } = Table;
  const app = document.getElementById("app");
  const messages = (window.arenaMessages = []);
  const state = { game: "", seats: [], me: 0, view: null, trick: [], lastTrick: null, log: [], scoring: [], request: null, end: null, sent: false, error: "" };

  const name = (s) => (s === state.me ? "you" : state.seats[s] ? state.seats[s].name : `seat ${s}`);
  function line(ev) {
    const who = name(ev.seat);
    switch (ev.type) {
      case "play": return [`${who} played `, card(ev.card)];
      case "trick": return ["trick ", ev.cards.map((c) => card(c)), ` won by ${name(ev.winner)}`, "points" in ev ? ` (${ev.points} points)` : ""];
      case "bid": return [`${who} bid ${"bid" in ev ? ev.bid : "(secret)"}`];
      case "deal": return [`dealt to ${who}: `, ev.cards.map((c) => card(c))];
      default: return [h("b", {}, (ev.type || "?").replaceAll("_", " ")), " ",
        Object.entries(ev).filter(([k]) => k !== "type").map(([k, x]) => h("span", { class: "chip" }, `${k}: `, Array.isArray(x) ? x.join(" ") : typeof x === "object" && x ? JSON.stringify(x) : String(x)))];
    }
  }

  function take(m) {
    messages.push(m);
    if (m.type === "match_start") {
      state.game = m.game; state.me = m.seat;
      state.seats = m.seats.map((s) => ({ seat: s.seat, name: s.name, team: s.team }));
    } else if (m.type === "event") {
      const ev = m.event;
      state.log.push(ev);
      if (/(_end|match_won)$/.test(ev.type || "")) state.scoring.push(ev);
      if (ev.type === "play") {
        state.trick.push({ seat: ev.seat, card: ev.card });
        if (state.view) {
          if (ev.seat === state.me && state.view.hand) state.view.hand = state.view.hand.filter((c) => c !== ev.card);
          if (state.view.hand_counts && ev.seat !== state.me) state.view.hand_counts[ev.seat] -= 1;
        }
      } else if (ev.type === "trick") {
        state.lastTrick = ev; state.trick = [];
      } else if (/_start$/.test(ev.type || "")) {
        state.trick = []; state.lastTrick = null;
      }
    } else if (m.type === "request") {
      state.view = m.view; state.trick = (m.view.trick || []).slice(); state.request = m; state.sent = false; state.error = "";
    } else if (m.type === "fault") {
      state.log.push({ type: "fault", message: m.message });
      if (state.request && m.id === state.request.id) state.request = null;
    } else if (m.type === "error") {
      state.error = m.message; state.end = { reason: "not played", scores: [], placings: [] };
    } else if (m.type === "match_end") {
      state.end = m; state.request = null;
    }
  }

  async function pick(action) {
    const r = state.request;
    if (!r || state.sent) return;
    state.sent = true;
    render();
    const answer = await fetch("api/play/action", { method: "POST", headers: { "Content-Type": "application/json", "X-Arena-Play": "1" }, body: JSON.stringify({ id: r.id, action }) });
    if (!answer.ok) {
      const body = await answer.json().catch(() => ({}));
      state.error = body.error || answer.statusText; state.sent = false;
    } else if (state.request === r) {
      state.request = null;
    }
    render();
  }

  function render() {
    const r = state.request && !state.sent ? state.request : null;
    const recent = state.log.slice(-12);
    app.replaceChildren(...[
      h("h1", {}, `${state.game} · you are seat ${state.me}`),
      state.end ? h("section", { class: "panel", id: "result" }, h("h2", {}, `Match over (${state.end.reason})`),
        h("table", {}, state.seats.map((s) => h("tr", {}, h("td", { class: "l" }, name(s.seat)), h("td", { class: "final-score", "data-seat": s.seat }, state.end.scores[s.seat]), h("td", {}, `place ${state.end.placings[s.seat]}`))))) : null,
      h("p", { class: "prompt", id: "prompt", "aria-live": "polite" },
        r ? `Your ${r.decision}: choose ${r.legal.length > 1 ? "one of the highlighted" : "the highlighted"}` : state.end ? "" : "Waiting for the others…",
        state.error ? h("span", { class: "bad" }, ` ${state.error}`) : ""),
      state.view ? draw({ seats: state.seats, me: state.me, view: state.view, trick: state.trick, lastTrick: state.lastTrick, legal: r ? r.legal : [], onPick: pick }) : null,
      h("section", { class: "panel", id: "log" }, h("h2", {}, "What happened"), h("ul", { class: "events" }, recent.map((ev) => h("li", {}, line(ev))))),
      scoreSheet(state.scoring, state.seats, state.me)].filter((node) => node));
  }

  const source = new EventSource("api/play/stream");
  source.addEventListener("message", (e) => {
    take(JSON.parse(e.data));
    render();
    if (state.end) source.close();
  });
})();
