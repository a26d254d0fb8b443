//! A starter Trick Arena bot in Rust: the standard library only.
//!
//! It plays all four games legally, a little better than at random (README.md says how), and is
//! meant to be copied: `choose` at the bottom is where your own logic goes.
//!
//! Build and run:   cargo build --release && target/release/starter-bot
//!
//! Messages (SPEC.md section 4), one JSON object per line each way:
//!   hello -> answer ready;  request -> answer action;  bye or end of input -> exit.
//!   match_start, event, fault and match_end need no answer.
//! Only stdout carries protocol lines; write anything else to stderr (the organiser's log).

use std::io::{self, BufRead, Write};

// ---- a small JSON reader ----------------------------------------------------------------------

/// A JSON value. Objects keep their keys in order; `get` finds a key.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

static NULL: Json = Json::Null;

impl Json {
    /// The value of `key` in an object; null when it is missing or this is not an object.
    fn get(&self, key: &str) -> &Json {
        match self {
            Json::Object(fields) => fields
                .iter()
                .find(|(k, _)| k == key)
                .map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }

    fn str(&self) -> Option<&str> {
        match self {
            Json::Str(text) => Some(text),
            _ => None,
        }
    }

    fn int(&self) -> Option<i64> {
        match self {
            Json::Number(n) => Some(*n as i64),
            _ => None,
        }
    }

    /// The items of an array (none for anything else).
    fn items(&self) -> &[Json] {
        match self {
            Json::Array(items) => items,
            _ => &[],
        }
    }

    /// An array of strings, such as a hand or the legal actions.
    fn strings(&self) -> Vec<String> {
        self.items()
            .iter()
            .filter_map(|item| item.str().map(String::from))
            .collect()
    }
}

fn parse_json(text: &str) -> Result<Json, String> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let value = parser.value()?;
    parser.skip_space();
    if parser.pos != parser.bytes.len() {
        return Err(format!("unexpected text at byte {}", parser.pos));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.bytes.len() && b" \t\r\n".contains(&self.bytes[self.pos]) {
            self.pos += 1;
        }
    }

    fn next_byte(&mut self) -> Result<u8, String> {
        let byte = *self
            .bytes
            .get(self.pos)
            .ok_or("unexpected end of the line")?;
        self.pos += 1;
        Ok(byte)
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_space();
        if self.next_byte()? != byte {
            return Err(format!(
                "expected '{}' at byte {}",
                byte as char,
                self.pos - 1
            ));
        }
        Ok(())
    }

    fn value(&mut self) -> Result<Json, String> {
        self.skip_space();
        match self.bytes.get(self.pos) {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(_) => self.number(),
            None => Err("unexpected end of the line".into()),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if !self.bytes[self.pos..].starts_with(word.as_bytes()) {
            return Err(format!("unexpected text at byte {}", self.pos));
        }
        self.pos += word.len();
        Ok(value)
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        while self.pos < self.bytes.len() && b"+-0123456789.eE".contains(&self.bytes[self.pos]) {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("");
        text.parse()
            .map(Json::Number)
            .map_err(|_| format!("bad number at byte {start}"))
    }

    fn object(&mut self) -> Result<Json, String> {
        self.expect(b'{')?;
        let mut fields = Vec::new();
        self.skip_space();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Json::Object(fields));
        }
        loop {
            self.skip_space();
            let key = self.string()?;
            self.expect(b':')?;
            fields.push((key, self.value()?));
            self.skip_space();
            match self.next_byte()? {
                b',' => continue,
                b'}' => return Ok(Json::Object(fields)),
                _ => return Err(format!("expected ',' or '}}' at byte {}", self.pos - 1)),
            }
        }
    }

    fn array(&mut self) -> Result<Json, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_space();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_space();
            match self.next_byte()? {
                b',' => continue,
                b']' => return Ok(Json::Array(items)),
                _ => return Err(format!("expected ',' or ']' at byte {}", self.pos - 1)),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or("a cut \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|_| "a bad \\u escape")?;
        self.pos += 4;
        u32::from_str_radix(text, 16).map_err(|_| "a bad \\u escape".into())
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            match self.next_byte()? {
                b'"' => {
                    return String::from_utf8(out).map_err(|_| "a string that is not UTF-8".into())
                }
                b'\\' => {
                    let unescaped = match self.next_byte()? {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let mut code = self.hex4()?;
                            if (0xD800..0xDC00).contains(&code)
                                && self.bytes[self.pos..].starts_with(b"\\u")
                            {
                                self.pos += 2;
                                let low = self.hex4()?;
                                code = 0x10000
                                    + ((code - 0xD800) << 10)
                                    + (low.wrapping_sub(0xDC00) & 0x3FF);
                            }
                            char::from_u32(code).unwrap_or('\u{FFFD}')
                        }
                        other => other as char, // \" \\ \/
                    };
                    let mut buffer = [0; 4];
                    out.extend_from_slice(unescaped.encode_utf8(&mut buffer).as_bytes());
                }
                byte => out.push(byte),
            }
        }
    }
}

/// `text` as a JSON string, quoted and escaped.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---- cards (SPEC.md section 2) ----------------------------------------------------------------

/// The suit letter: always the last character (`10H` -> 'H').
fn suit(card: &str) -> char {
    card.chars().last().unwrap_or('?')
}

/// The rank as a number, higher is stronger: 2..10, J 11, Q 12, K 13, A 14 (Alles oder Nichts:
/// its values 1..12 as they are).
fn rank(card: &str) -> i32 {
    let rank = &card[..card.len().saturating_sub(1)];
    match rank {
        "J" => 11,
        "Q" => 12,
        "K" => 13,
        "A" => 14,
        number => number.parse().unwrap_or(0),
    }
}

/// How much a card is worth keeping: trumps above every other suit, then by rank.
fn strength(card: &str, trump: Option<char>) -> i32 {
    rank(card) + if Some(suit(card)) == trump { 100 } else { 0 }
}

/// Whether `card` beats `top`, the card winning the trick so far: higher in its suit, or a trump
/// on a card that is not one.
fn beats(card: &str, top: &str, trump: Option<char>) -> bool {
    if suit(card) == suit(top) {
        rank(card) > rank(top)
    } else {
        Some(suit(card)) == trump
    }
}

/// The strongest (`highest`) or weakest card of `cards`; the first one on a tie.
fn pick(cards: &[String], trump: Option<char>, highest: bool) -> String {
    let mut best = &cards[0];
    for card in cards {
        let (a, b) = (strength(card, trump), strength(best, trump));
        if (highest && a > b) || (!highest && a < b) {
            best = card;
        }
    }
    best.clone()
}

// ---- the decisions (SPEC.md section 9) --------------------------------------------------------

/// The action for a request: put your own logic here. `legal` is never empty, and answering
/// anything from it is always legal; whatever this returns is checked against it.
fn choose(decision: &str, view: &Json, legal: &[String]) -> String {
    if legal.len() == 1 {
        return legal[0].clone();
    }
    let hand = view.get("hand").strings();
    let trump = view.get("trump").str().map(suit);
    let choice = match decision {
        "bid" => bid(&hand, trump),
        "declare" => "declare:secret".to_string(), // open pays only when the bid is exact
        "trump" => format!("trump:{}", suit(&pick(&hand, None, true))), // the suit of our best card
        "exchange" => exchange(&hand, trump),
        "drop" => "stay".to_string(),
        "beg" | "give" => beg_or_give(decision, view, &hand),
        "patience" => patience(legal),
        "play" => play(view, legal, trump),
        _ => legal[0].clone(),
    };
    if legal.contains(&choice) {
        choice
    } else {
        eprintln!(
            "starter-bot: {choice} is not legal here; playing {} instead",
            legal[0]
        );
        legal[0].clone()
    }
}

/// Alles oder Nichts: bid the high trumps (9 and up) and the other colours' 12s.
fn bid(hand: &[String], trump: Option<char>) -> String {
    let likely = hand
        .iter()
        .filter(|c| (Some(suit(c)) == trump && rank(c) >= 9) || rank(c) == 12)
        .count();
    format!("bid:{likely}")
}

/// Vingt-down: tricks are what we want, so discard up to three side cards below the king,
/// lowest first (the action lists them in the hand's order).
fn exchange(hand: &[String], trump: Option<char>) -> String {
    let mut weak: Vec<&String> = hand
        .iter()
        .filter(|c| Some(suit(c)) != trump && rank(c) < 13)
        .collect();
    weak.sort_by_key(|c| rank(c)); // a stable sort: equal ranks keep the hand's order
    weak.truncate(3);
    let discard: Vec<&str> = hand
        .iter()
        .filter(|c| weak.contains(c))
        .map(|c| c.as_str())
        .collect();
    if discard.is_empty() {
        "discard:none".to_string()
    } else {
        format!("discard:{}", discard.join(","))
    }
}

/// All Fours: with three cards of the kick's suit, stand (as the beggar) or give (as the dealer).
fn beg_or_give(decision: &str, view: &Json, hand: &[String]) -> String {
    let kick = view.get("kick").str().map(suit);
    let strong = hand.iter().filter(|c| Some(suit(c)) == kick).count() >= 3;
    let answer = match (decision, strong) {
        ("beg", true) => "stand",
        ("beg", false) => "beg",
        (_, true) => "give",
        (_, false) => "run",
    };
    answer.to_string()
}

/// Eight Rounds' patience: get rid of cards, never pass by choice, keep the 7s for last.
fn patience(legal: &[String]) -> String {
    let cards: Vec<&String> = legal.iter().filter(|a| a.as_str() != "pass").collect();
    let not_seven = cards.iter().find(|c| rank(c) != 7);
    not_seven
        .or(cards.first())
        .map_or_else(|| legal[0].clone(), |c| c.to_string())
}

/// A card to a trick: when we want the trick, win it as cheaply as we can (else throw our
/// weakest card); when we do not, play our strongest card that loses it (else our weakest).
fn play(view: &Json, legal: &[String], trump: Option<char>) -> String {
    let trick: Vec<(i64, &str)> = view
        .get("trick")
        .items()
        .iter()
        .map(|entry| {
            (
                entry.get("seat").int().unwrap_or(-1),
                entry.get("card").str().unwrap_or(""),
            )
        })
        .collect();
    if trick.is_empty() {
        return pick(legal, trump, wants_trick(view, None));
    }
    let mut winner = trick[0];
    for &entry in &trick[1..] {
        if beats(entry.1, winner.1, trump) {
            winner = entry;
        }
    }
    let (winners, losers): (Vec<String>, Vec<String>) = legal
        .iter()
        .cloned()
        .partition(|c| beats(c, winner.1, trump));
    if wants_trick(view, Some(winner.0)) {
        pick(
            if winners.is_empty() { legal } else { &winners },
            trump,
            false,
        )
    } else if losers.is_empty() {
        pick(legal, trump, false)
    } else {
        pick(&losers, trump, true)
    }
}

/// Whether this seat wants the trick being played (`winning`: the seat winning it so far).
fn wants_trick(view: &Json, winning: Option<i64>) -> bool {
    let seat = view.get("seat").int().unwrap_or(0) as usize;
    match view.get("game").str().unwrap_or("") {
        "alles-oder-nichts" => {
            // only until our bid is made
            let bid = view.get("bids").items().get(seat).and_then(Json::int);
            let taken = view
                .get("tricks")
                .items()
                .get(seat)
                .and_then(Json::int)
                .unwrap_or(0);
            bid.is_some_and(|bid| taken < bid)
        }
        "eight-rounds" => view.get("contract").str() == Some("most-tricks"),
        "all-fours" => winning.is_none() || winning != view.get("partner").int(),
        _ => true, // Vingt-down: every trick brings the score down
    }
}

// ---- the protocol -----------------------------------------------------------------------------

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break }; // end of input: the referee has gone
        let message = match parse_json(&line) {
            Ok(message) => message,
            Err(error) => {
                eprintln!("starter-bot: cannot read a line ({error}), ignoring it");
                continue;
            }
        };
        let reply = match message.get("type").str().unwrap_or("") {
            "hello" => Some(r#"{"type":"ready","name":"starter-rust","version":"1"}"#.to_string()),
            "request" => {
                let legal = message.get("legal").strings();
                let decision = message.get("decision").str().unwrap_or("");
                let action = choose(decision, message.get("view"), &legal);
                let id = message.get("id").int().unwrap_or(0);
                Some(format!(
                    r#"{{"type":"action","id":{id},"action":{}}}"#,
                    quote(&action)
                ))
            }
            "fault" => {
                let kind = message.get("kind").str().unwrap_or("?");
                eprintln!(
                    "starter-bot: fault {kind}: {}",
                    message.get("message").str().unwrap_or("")
                );
                None
            }
            "bye" => break,
            _ => None, // match_start, event, match_end and any type added later
        };
        if let Some(reply) = reply {
            // The referee is waiting for this line: flush it at once.
            if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
                break;
            }
        }
    }
}
