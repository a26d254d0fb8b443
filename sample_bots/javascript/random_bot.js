#!/usr/bin/env node
// A random Trick Arena bot in JavaScript: Node.js only, no packages.
//
// It plays every game: each request lists every legal action, so the bot picks one at random and
// never needs to know a rule. Copy this file to start your own bot.
//
// Run it:   node random_bot.js [SEED]      (or set BOT_SEED; the default seed is 0)
//
// Seeding: for each match the generator is SplitMix64 (SPEC.md section 3) seeded with
// SEED xor FNV-1a-64("<match_id>:<seat>"), so a match replays exactly whatever came before it.
// The Python and C random bots use the same scheme and make the same choices.
//
// Messages (SPEC.md section 4), one JSON object per line each way:
//   hello -> answer ready;  request -> answer action;  bye or end of input -> exit.
//   match_start, event, fault and match_end need no answer.
// Only stdout carries protocol lines; write anything else to stderr (the organiser's log).
"use strict";

const readline = require("readline");

const MASK64 = (1n << 64n) - 1n;

class SplitMix64 {
  constructor(seed) {
    this.state = BigInt.asUintN(64, seed);
  }
  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }
  below(n) {
    const bound = BigInt(n);
    const limit = (1n << 64n) - ((1n << 64n) % bound); // reject the top sliver: every index equally likely
    for (;;) {
      const x = this.next();
      if (x < limit) return Number(x % bound);
    }
  }
}

function fnv1a64(text) {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8")) {
    h = ((h ^ BigInt(byte)) * 0x100000001b3n) & MASK64;
  }
  return h;
}

function send(message) {
  // process.stdout.write to a pipe is synchronous on Linux, so the line leaves at once.
  process.stdout.write(JSON.stringify(message) + "\n");
}

function log(text) {
  process.stderr.write(`random_bot.js: ${text}\n`);
}

const seedText = process.argv[2] ?? process.env.BOT_SEED ?? "0";
const baseSeed = BigInt.asUintN(64, BigInt(seedText));
let rng = new SplitMix64(baseSeed);

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });

input.on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      send({ type: "ready", name: "random-javascript", version: "1" });
      break;
    case "match_start":
      rng = new SplitMix64(baseSeed ^ fnv1a64(`${message.match_id}:${message.seat}`));
      break;
    case "request": {
      const legal = message.legal;
      send({ type: "action", id: message.id, action: legal[rng.below(legal.length)] });
      break;
    }
    case "fault":
      log(`fault ${message.kind}: ${message.message}`);
      break;
    case "match_end":
      log(`match ${message.match_id} over: scores ${JSON.stringify(message.scores)}`);
      break;
    case "bye":
      input.close();
      process.exit(0);
      break;
    default:
      // "event" and any message type added later: nothing to do
      break;
  }
});

input.on("close", () => process.exit(0)); // end of input: the referee has gone
