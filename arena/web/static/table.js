// The card table: one seat's view drawn as players see it (arena play's page; SPEC.md 11).
// Plain functions from data to DOM: a view as the referee sends it to a seat (its own hand only,
// the others' as counts), the trick in the middle, the fields players look at. No game logic:
// every value comes from the view and the events, keyed by their names.
"use strict";

const Table = (() => {
  const CARD = /^(10|11|12|[1-9]|[JQKA])([CDHSRGBY])$/;
  const SUIT = { C: "♣", D: "♦", H: "♥", S: "♠", R: "●", G: "●", B: "●", Y: "●" };
  const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades", R: "red", G: "green", B: "blue", Y: "yellow" };
  // The fields of a view shown in the middle of the table (single values), with their labels.
  const CENTRE = [["round", "round"], ["deal", "deal"], ["hand_number", "hand"], ["contract", "contract"],
    ["trump", "trump"], ["trump_card", "trump card"], ["kick", "kick"], ["target", "target"], ["stock_count", "stock"]];
  // Per-seat fields shown on each seat (a list with one value per seat), with their labels.
  const PER_SEAT = [["bids", "bid"], ["declarations", "declared"], ["exchanged", "exchanged"], ["drops", "dropped"],
    ["tricks", "tricks"], ["round_points", "this round"], ["scores", "score"]];

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const isCard = (x) => typeof x === "string" && CARD.test(x);
  function cardName(c) {
    const m = CARD.exec(c);
    return m ? `${m[1]} of ${SUIT_NAME[m[2]]}` : c;
  }
  // A face-up card; ``tag`` "button" for one the person may click.
  function card(c, tag, attrs) {
    const m = CARD.exec(c);
    const face = m ? [m[1], SUIT[m[2]]] : [c];
    // (a span's name is only read through a role: an image of a card)
    const named = tag ? { "aria-label": cardName(c) } : { role: "img", "aria-label": cardName(c) };
    return h(tag || "span", { class: `card ${m ? "s-" + m[2] : ""}`, "data-card": c, ...named, ...(attrs || {}) }, face);
  }
  // Face-down cards: only a count is known (another seat's hand).
  function backs(count) {
    const shown = Math.min(count, 13);
    return h("span", { class: "backs", role: "img", "aria-label": `${count} cards, face down`, "data-count": count },
      Array.from({ length: shown }, () => h("span", { class: "back", "aria-hidden": "true" })),
      count > shown ? h("span", { class: "muted" }, ` +${count - shown}`) : null);
  }
  function show(v) {
    if (v === null || v === undefined) return "–";
    if (isCard(v)) return card(v);
    if (typeof v === "string" && SUIT[v]) return h("span", { class: `card small s-${v}`, role: "img", "aria-label": SUIT_NAME[v] }, SUIT[v]);
    if (Array.isArray(v)) return v.map((x, i) => [i ? " " : "", show(x)]);
    if (typeof v === "object") return Object.entries(v).map(([k, x]) => h("span", { class: "chip" }, `${k}: `, show(x)));
    return String(v);
  }

  // The middle of the table: the trick (who played what), or the last one; trump, contract
  // and the other single values of the view; the patience layout; the teams' points.
  function middle(v, trick, lastTrick, name, fresh) {
    return h("section", { class: "centre", "aria-label": "the table" },
      h("div", { class: "trick", id: "trick", "aria-live": "polite" },
        trick.length ? trick.map((p) => h("figure", { class: "played" + (fresh && fresh.has(p.card) ? " fresh" : ""), "data-seat": p.seat }, card(p.card), h("figcaption", {}, name(p.seat))))
          : lastTrick && lastTrick.cards ? h("div", { class: "muted" }, "last trick: ", lastTrick.cards.map((c) => card(c)), ` won by ${name(lastTrick.winner)}`)
            : h("span", { class: "muted" }, "no card on the table")),
      h("div", { class: "kv" }, CENTRE.filter(([k]) => v[k] !== null && v[k] !== undefined).map(([k, label]) => h("span", { "data-field": k }, h("b", {}, label + " "), show(v[k])))),
      v.patience ? h("div", { class: "kv", "data-field": "patience" }, h("b", {}, "patience "), Object.entries(v.patience).map(([suit, run]) =>
        h("span", { class: "chip", "data-suit": suit }, show(suit), " ", run && typeof run === "object" ? Object.values(run).map((c, i) => [i ? "–" : "", show(c)]) : "–"))) : null,
      Array.isArray(v.team_scores) ? h("div", { class: "kv" }, h("span", { "data-field": "team_scores" }, h("b", {}, "teams "), v.team_scores.map((x, t) => `team ${t}: ${x}`).join(" · ")),
        Array.isArray(v.card_points) ? h("span", {}, h("b", {}, "card points "), v.card_points.join(" · ")) : null,
        Array.isArray(v.tricks_won) ? h("span", {}, h("b", {}, "tricks "), v.tricks_won.join(" · ")) : null) : null);
  }

  // The seats around the table, the trick in the middle, the person's own hand below.
  // opts: {seats: [{seat, name, team}], me, view, trick: [{seat, card}], lastTrick, legal, onPick}
  function draw(opts) {
    const { seats, me, view } = opts;
    const v = view || {};
    const n = seats.length;
    const order = Array.from({ length: n }, (_, i) => (me + 1 + i) % n).filter((s) => s !== me);
    const name = (s) => (s === me ? "you" : (seats[s] ? seats[s].name : `seat ${s}`));
    const seatBox = (s) => h("section", { class: "seat" + (v.to_move === s ? " tomove" : ""), "data-seat": s, "aria-label": `seat ${s}: ${name(s)}` },
      h("div", { class: "who" }, h("b", {}, name(s)), seats[s] && seats[s].team !== null && seats[s].team !== undefined ? ` · team ${seats[s].team}` : "",
        v.dealer === s ? " · dealer" : "", v.to_move === s ? h("span", { class: "mover" }, " · to move") : ""),
      s === me ? null : backs(v.hand_counts ? v.hand_counts[s] : 0),
      h("div", { class: "facts" }, PER_SEAT.filter(([k]) => Array.isArray(v[k]) && v[k].length === n && v[k][s] !== null && v[k][s] !== undefined)
        .map(([k, label]) => h("span", { class: "chip", "data-field": k }, `${label} `, show(v[k][s])))));
    const centre = middle(v, opts.trick || [], opts.lastTrick, name);
    const legal = opts.legal || [];
    const pickable = new Set(legal);
    const hand = v.hand || [];
    const mine = h("section", { class: "seat me" + (v.to_move === me ? " tomove" : ""), "data-seat": me, "aria-label": "your hand" },
      h("div", { class: "who" }, h("b", {}, `you (seat ${me})`), v.to_move === me && legal.length ? h("span", { class: "mover" }, " · your move") : "",
        h("span", { class: "facts" }, PER_SEAT.filter(([k]) => Array.isArray(v[k]) && v[k].length === n && v[k][me] !== null && v[k][me] !== undefined)
          .map(([k, label]) => h("span", { class: "chip", "data-field": k }, `${label} `, show(v[k][me]))))),
      h("div", { class: "hand", id: "hand" }, hand.map((c) => pickable.has(c)
        ? card(c, "button", { class: `card legal ${CARD.exec(c) ? "s-" + CARD.exec(c)[2] : ""}`, onclick: () => opts.onPick(c), title: `play ${cardName(c)}` })
        : card(c, "button", { disabled: true, class: `card ${CARD.exec(c) ? "s-" + CARD.exec(c)[2] : ""}`, title: `${cardName(c)}: not playable now` }))),
      v.discarded && v.discarded.length ? h("div", { class: "muted" }, "you discarded ", v.discarded.map((c) => card(c))) : null);
    const choices = legal.filter((a) => !hand.includes(a));
    const ask = choices.length ? h("div", { class: "choices", id: "choices", role: "group", "aria-label": "your choices" },
      choices.map((a) => h("button", { class: "choice", "data-action": a, onclick: () => opts.onPick(a) }, a))) : null;
    return h("div", { class: `table players-${n}` },
      h("div", { class: "others" }, order.map(seatBox)), centre, ask, mine);
  }

  // The score sheet: one row per scoring event (the end of a round, deal or hand; awards).
  function scoreSheet(events, seats, me) {
    const rows = events.filter((e) => /(_end|match_won)$/.test(e.type || ""));
    if (!rows.length) return null;
    const n = seats.length;
    const label = (e) => `${(e.type || "").replace("_", " ")} ${e.round ?? e.deal ?? e.hand ?? ""}`.trim();
    const totals = (e) => e.totals || e.scores || [];
    const teamGame = rows.some((e) => totals(e).length && totals(e).length !== n);
    const columns = teamGame ? [0, 1].map((t) => `team ${t}`) : seats.map((s) => (s.seat === me && me !== null ? "you" : s.name));
    return h("section", { class: "panel", id: "scoresheet" }, h("h2", {}, "Score sheet"),
      h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": "score sheet" }, h("table", {},
        h("tr", {}, h("th", { class: "l" }, "after"), columns.map((c) => h("th", {}, c))),
        rows.map((e) => h("tr", {}, h("td", { class: "l" }, label(e)),
          columns.map((_, i) => h("td", {}, e.points && e.points[i] !== undefined ? `${e.points[i] >= 0 ? "+" : ""}${e.points[i]} → ` : "", totals(e)[i] ?? "")))))));
  }


  // What players of each game look at, besides the trick: the decisions and awards of the deal
  // being played (bids, declarations, exchanges, drops, beg and stand, kicks, the points of
  // high, low, jack and game), as they were told at the table.
  const NOTED = new Set(["bid", "declare", "trump", "exchange", "drop", "beg", "stand", "give", "run", "kick", "award", "redeal", "pass", "uncontested"]);
  function note(ev, name) {
    const who = ev.seat !== undefined ? name(ev.seat) : "";
    const rest = Object.entries(ev).filter(([k]) => !["type", "seat", "_audience"].includes(k))
      .map(([k, x]) => h("span", { class: "chip" }, `${k.replaceAll("_", " ")} `, show(x)));
    return h("li", { "data-kind": ev.type }, who ? `${who}: ` : "", h("b", {}, ev.type), " ", rest);
  }

  // A match's table for spectators (the match page), at frame ``at`` of the page's data ``d``.
  // A hand is face up only where it is the viewed seat's own, or with all hands of a match that
  // is over; every other hand is face down (its count), and so is every hand of a running match
  // seen with all hands. Events meant for some seats only are left out while it runs.
  function spectate(d, at) {
    const f = d.frames[at], v = f.view || {}, n = d.players;
    const me = d.seat === null || d.seat === undefined ? null : Number(d.seat);
    const seats = d.seats.map((s) => ({ seat: s.seat, name: s.bot, team: s.team }));
    const name = (s) => (seats[s] ? seats[s].name : `seat ${s}`);
    const open = me === null && !d.running && Array.isArray(v.hands);
    const faceUp = (s) => (me === s && Array.isArray(v.hand) ? v.hand : open ? v.hands[s] : null);
    const count = (s) => (v.hand_counts ? v.hand_counts[s] : Array.isArray(v.hands) ? v.hands[s].length : 0);
    const discards = (s) => (me === s ? v.discarded : open && Array.isArray(v.discards) ? v.discards[s] : null);
    const fresh = new Set(f.events.filter((e) => e.type === "play").map((e) => e.card));
    const events = d.frames.slice(0, at + 1).flatMap((fr) => fr.events)
      .filter((e) => !(d.running && e._audience));
    let start = 0;
    events.forEach((e, i) => { if (/_start$/.test(e.type || "")) start = i; });
    // (seen from above, the others' reduced copy of an event, "bid" after "bid 3", adds nothing)
    const covers = (a, b) => a && a.type === b.type && Object.entries(b).every(([k, x]) => k === "_audience" || JSON.stringify(a[k]) === JSON.stringify(x));
    const notes = events.slice(start).filter((e) => NOTED.has(e.type))
      .filter((e, i, list) => !(e._audience && covers(list[i - 1], e)));
    const seatBox = (s) => h("section", { class: "seat" + (v.to_move === s ? " tomove" : ""), "data-seat": s, "aria-label": `seat ${s}: ${name(s)}` },
      h("div", { class: "who" }, h("b", {}, `${s} · ${name(s)}`), seats[s] && seats[s].team !== null && seats[s].team !== undefined ? ` · team ${seats[s].team}` : "",
        v.dealer === s ? " · dealer" : "", v.to_move === s ? h("span", { class: "mover" }, " · to move") : ""),
      h("div", { class: "hand" }, faceUp(s) ? faceUp(s).map((c) => card(c)) : backs(count(s))),
      discards(s) && discards(s).length ? h("div", { class: "muted" }, "discarded ", discards(s).map((c) => card(c))) : null,
      h("div", { class: "facts" }, PER_SEAT.filter(([k]) => Array.isArray(v[k]) && v[k].length === n && v[k][s] !== null && v[k][s] !== undefined)
        .map(([k, label]) => h("span", { class: "chip", "data-field": k }, `${label} `, show(v[k][s])))));
    const all = Array.from({ length: n }, (_, i) => i);
    const top = all.slice(0, Math.ceil(n / 2)), bottom = all.slice(Math.ceil(n / 2)).reverse();
    return h("div", { class: "table spectate", id: "matchtable" },
      h("div", { class: "others" }, top.map(seatBox)),
      middle(v, v.trick || [], v.last_trick, name, fresh),
      h("div", { class: "others" }, bottom.map(seatBox)),
      notes.length ? h("section", { class: "panel", id: "dealnotes" }, h("h2", {}, "This deal"), h("ul", { class: "events" }, notes.map((e) => note(e, name)))) : null,
      scoreSheet(events, seats, me));
  }

  return { h, card, backs, draw, spectate, scoreSheet, isCard };
})();
