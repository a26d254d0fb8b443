// The match page's debugger (the inspector beside the table): where the step is in the address,
// jumps to the next or previous fault, decision of a seat, trick or deal, autoplay, the view's
// fields in words and the decision's stderr. Plain functions over the page's data (the frames of
// /api/match); app.js's matchPage calls them and draws what they return with its h().
"use strict";

const ArenaDebugger = (() => {
  const DEAL_STARTS = new Set(["round_start", "deal_start", "hand_start", "redeal"]);
  const SPEEDS = [0.5, 1, 2, 4, 8]; // steps a second

  // What each jump looks for in a frame (the frame after the decision it shows).
  const JUMPS = {
    fault: { label: "fault", test: (f) => !!(f.decision && f.decision.faults.length) },
    trick: { label: "trick", test: (f) => f.events.some((e) => e.type === "trick") },
    deal: { label: "deal", test: (f) => f.events.some((e) => DEAL_STARTS.has(e.type)) },
  };

  // The nearest frame after (dir 1) or before (dir -1) ``from`` that ``test`` holds for; null: none.
  function find(frames, from, dir, test) {
    for (let i = from + dir; i >= 0 && i < frames.length; i += dir) if (test(frames[i])) return i;
    return null;
  }
  const seatTest = (seat) => (f) => !!(f.decision && f.decision.seat === seat);

  // The frame the address asks for: ``step=K`` (frame K), or ``decision=N`` with a seat: that
  // seat's decision N as `arena replay --decisions` numbers it (#N: what --ask N takes).
  function startFrame(data, params, seat) {
    const last = data.frames.length - 1;
    const step = params.get("step");
    if (step !== null && /^\d+$/.test(step)) return Math.min(Number(step), last);
    const number = params.get("decision");
    const s = Number(params.get("jump") ?? seat);
    if (number !== null && /^\d+$/.test(number) && Number.isInteger(s)) {
      const at = data.frames.findIndex((f) => f.decision && f.decision.seat === s && f.decision.number === Number(number));
      if (at >= 0) return at;
    }
    return null;
  }

  // The address of this step (kept in the address bar, so it can be copied and sent).
  function remember(id, seat, at) {
    const query = new URLSearchParams({ id, seat, step: String(at) });
    history.replaceState(null, "", "/match?" + query.toString());
  }

  // Autoplay: one step every 1/speed seconds until the last frame or a stop.
  let timer = null;
  function playing() { return timer !== null; }
  function stop() { if (timer !== null) { clearInterval(timer); timer = null; } }
  function play(speed, step, atEnd) {
    stop();
    timer = setInterval(() => { if (atEnd()) stop(); else step(1); }, 1000 / speed);
  }

  // The jump bar: previous/next fault, trick, deal, and decision of the chosen seat; autoplay.
  // ``ctx``: {h, frames, at, go, seats, jumpSeat, setJumpSeat, step, redraw}.
  function controls(ctx) {
    const { h, frames, at, go } = ctx;
    const jump = (key, test) => {
      const before = find(frames, at, -1, test), after = find(frames, at, 1, test);
      return h("span", { class: "jump", "data-jump": key },
        h("button", { id: `prev-${key}`, disabled: before === null, onclick: () => go(before), title: `previous ${key}` }, "◀"),
        h("span", { class: "jump-label" }, key),
        h("button", { id: `next-${key}`, disabled: after === null, onclick: () => go(after), title: `next ${key}` }, "▶"));
    };
    const seat = ctx.jumpSeat;
    const seatPick = h("select", { id: "jump-seat", "aria-label": "seat whose decisions to jump between",
      onchange: (e) => ctx.setJumpSeat(Number(e.target.value)) },
    ctx.seats.map((s) => h("option", { value: String(s.seat), selected: s.seat === seat }, `seat ${s.seat} (${s.bot})`)));
    const speed = h("select", { id: "speed", "aria-label": "autoplay speed (steps a second)" },
      SPEEDS.map((x) => h("option", { value: String(x), selected: x === ctx.speed }, `${x}/s`)));
    speed.addEventListener("change", (e) => {
      ctx.setSpeed(Number(e.target.value));
      if (playing()) play(Number(e.target.value), ctx.step, ctx.atEnd);
    });
    const toggle = h("button", { id: "autoplay", onclick: () => {
      if (playing()) stop(); else play(ctx.speed, ctx.step, ctx.atEnd);
      ctx.redraw();
    } }, playing() ? "❚❚ pause" : "▶ play");
    return h("div", { class: "panel controls jumps", id: "jumps" },
      jump("fault", JUMPS.fault.test), jump("trick", JUMPS.trick.test), jump("deal", JUMPS.deal.test),
      h("span", { class: "jump", "data-jump": "seat" },
        h("button", { id: "prev-seat", disabled: find(frames, at, -1, seatTest(seat)) === null,
          onclick: () => go(find(frames, at, -1, seatTest(seat))), title: "previous decision of the seat" }, "◀"),
        h("label", { for: "jump-seat", class: "jump-label" }, "decision of "), seatPick,
        h("button", { id: "next-seat", disabled: find(frames, at, 1, seatTest(seat)) === null,
          onclick: () => go(find(frames, at, 1, seatTest(seat))), title: "next decision of the seat" }, "▶")),
      h("span", { class: "jump" }, toggle, h("label", { for: "speed", class: "jump-label" }, " speed "), speed));
  }

  // The decision's stderr (SPEC.md 8: what the bot wrote before its reply), or null for none.
  function stderr(h, dec) {
    const said = (dec.replies || []).map((r) => r.stderr).filter((s) => typeof s === "string" && s);
    if (!said.length) return null;
    return h("div", { class: "stderr" }, h("b", {}, "stderr"), h("pre", { id: "stderr" }, said.join("")));
  }

  // The view's fields in words: per-seat values ("9 cards", "2 tricks", "bid 3"), names without
  // underscores, and nothing drawn for an empty list or a missing value.
  const PER_SEAT = {
    hand_counts: (n) => `${n} card${n === 1 ? "" : "s"}`,
    tricks: (n) => `${n} trick${n === 1 ? "" : "s"}`,
    tricks_won: (n) => `${n} trick${n === 1 ? "" : "s"}`,
    bids: (b) => (b === null ? "no bid yet" : `bid ${b}`),
    has_bid: (b) => (b ? "has bid" : "to bid"),
    declarations: (d) => (d === null ? "not declared" : `declared ${d}`),
    scores: (n) => `${n} point${n === 1 || n === -1 ? "" : "s"}`,
    passed: (b) => (b ? "passed" : null),
  };
  function words(key) { return key.replaceAll("_", " "); }
  function isEmpty(v) {
    return v === null || v === undefined || (Array.isArray(v) && (v.length === 0 || v.every((x) => x === null)));
  }
  // One seat's value of a per-seat field as a chip's text, or null when there is nothing to say.
  function seatField(key, v) {
    const say = PER_SEAT[key];
    if (say) return say(v);
    return isEmpty(v) ? null : undefined; // undefined: draw it the ordinary way
  }

  return { startFrame, remember, controls, stderr, words, isEmpty, seatField, stop, playing, find };
})();
