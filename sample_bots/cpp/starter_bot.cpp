// A starter Trick Arena bot in C++17: the standard library only.
//
// It plays all four games legally, a little better than at random (README.md says how), and is
// meant to be copied: `choose` at the bottom is where your own logic goes.
//
// Build and run:   make && ./starter_bot
//
// Messages (SPEC.md section 4), one JSON object per line each way:
//   hello -> answer ready;  request -> answer action;  bye or end of input -> exit.
//   match_start, event, fault and match_end need no answer.
// Only stdout carries protocol lines; write anything else to stderr (the organiser's log).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

// ---- a small JSON reader -------------------------------------------------------------------------

// A JSON value. `get` finds an object's key (a null value when it is missing).
struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool boolean = false;
    double number = 0;
    std::string text;
    std::vector<Json> items;
    std::map<std::string, Json> fields;

    const Json& get(const std::string& key) const {
        static const Json null;
        auto found = fields.find(key);
        return found == fields.end() ? null : found->second;
    }
    bool is_null() const { return kind == Null; }
    const std::string& str() const { return text; }  // "" unless a string
    long long integer() const { return static_cast<long long>(number); }  // 0 unless a number
    std::vector<std::string> strings() const {  // an array of strings: a hand, the legal actions
        std::vector<std::string> out;
        for (const Json& item : items) {
            if (item.kind == String) out.push_back(item.text);
        }
        return out;
    }
};

class Parser {
  public:
    explicit Parser(const std::string& text) : s_(text) {}

    Json parse() {
        Json value = parse_value();
        skip_space();
        if (pos_ != s_.size()) fail("unexpected text");
        return value;
    }

  private:
    const std::string& s_;
    size_t pos_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error(what + " at byte " + std::to_string(pos_));
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n')) pos_++;
    }
    char next() {
        if (pos_ >= s_.size()) fail("unexpected end of the line");
        return s_[pos_++];
    }
    void expect(char c) {
        skip_space();
        if (next() != c) fail(std::string("expected '") + c + "'");
    }
    bool peek_is(char c) {
        skip_space();
        return pos_ < s_.size() && s_[pos_] == c;
    }

    Json parse_value() {
        skip_space();
        if (pos_ >= s_.size()) fail("unexpected end of the line");
        Json value;
        char c = s_[pos_];
        if (c == '{') {
            value.kind = Json::Object;
            expect('{');
            if (peek_is('}')) {
                next();
                return value;
            }
            for (;;) {
                skip_space();
                std::string key = parse_string();
                expect(':');
                value.fields[key] = parse_value();
                if (!peek_is(',')) break;
                next();
            }
            expect('}');
        } else if (c == '[') {
            value.kind = Json::Array;
            expect('[');
            if (peek_is(']')) {
                next();
                return value;
            }
            for (;;) {
                value.items.push_back(parse_value());
                if (!peek_is(',')) break;
                next();
            }
            expect(']');
        } else if (c == '"') {
            value.kind = Json::String;
            value.text = parse_string();
        } else if (s_.compare(pos_, 4, "true") == 0 || s_.compare(pos_, 5, "false") == 0) {
            value.kind = Json::Bool;
            value.boolean = c == 't';
            pos_ += value.boolean ? 4 : 5;
        } else if (s_.compare(pos_, 4, "null") == 0) {
            pos_ += 4;
        } else {
            size_t used = 0;
            try {
                value.number = std::stod(s_.substr(pos_, 40), &used);
            } catch (const std::exception&) {
                fail("bad number");
            }
            value.kind = Json::Number;
            pos_ += used;
        }
        return value;
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("a cut \\u escape");
        unsigned code = std::stoul(s_.substr(pos_, 4), nullptr, 16);
        pos_ += 4;
        return code;
    }

    static void put_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }

    std::string parse_string() {
        if (next() != '"') fail("expected a string");
        std::string out;
        for (;;) {
            char c = next();
            if (c == '"') return out;
            if (c != '\\') {
                out += c;
                continue;
            }
            char e = next();
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    unsigned code = hex4();
                    if (code >= 0xD800 && code < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
                        pos_ += 2;
                        code = 0x10000 + ((code - 0xD800) << 10) + ((hex4() - 0xDC00) & 0x3FF);
                    }
                    put_utf8(out, code);
                    break;
                }
                default: out += e;  // \" \\ \/
            }
        }
    }
};

// `text` as a JSON string, quoted and escaped.
std::string quote(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// ---- cards (SPEC.md section 2) -------------------------------------------------------------------

using Cards = std::vector<std::string>;

// The suit letter: always the last character ("10H" -> 'H'); '?' for an empty string.
char suit(const std::string& card) { return card.empty() ? '?' : card.back(); }

// The rank as a number, higher is stronger: 2..10, J 11, Q 12, K 13, A 14 (Alles oder Nichts:
// its values 1..12 as they are).
int rank(const std::string& card) {
    std::string r = card.substr(0, card.empty() ? 0 : card.size() - 1);
    if (r == "J") return 11;
    if (r == "Q") return 12;
    if (r == "K") return 13;
    if (r == "A") return 14;
    return std::atoi(r.c_str());
}

// How much a card is worth keeping: trumps (trump 0: none) above every other suit, then by rank.
int strength(const std::string& card, char trump) { return rank(card) + (suit(card) == trump ? 100 : 0); }

// Whether `card` beats `top`, the card winning the trick so far: higher in its suit, or a trump on
// a card that is not one.
bool beats(const std::string& card, const std::string& top, char trump) {
    if (suit(card) == suit(top)) return rank(card) > rank(top);
    return trump != 0 && suit(card) == trump;
}

// The strongest (`highest`) or weakest card of `cards`; the first one on a tie.
std::string pick(const Cards& cards, char trump, bool highest) {
    const std::string* best = &cards[0];
    for (const std::string& card : cards) {
        int a = strength(card, trump), b = strength(*best, trump);
        if (highest ? a > b : a < b) best = &card;
    }
    return *best;
}

// ---- the decisions (SPEC.md section 9) -----------------------------------------------------------

// Alles oder Nichts: bid the high trumps (9 and up) and the other colours' 12s.
std::string bid(const Cards& hand, char trump) {
    size_t likely = 0;
    for (const std::string& c : hand) {
        if ((suit(c) == trump && rank(c) >= 9) || rank(c) == 12) likely++;
    }
    return "bid:" + std::to_string(likely);
}

// Vingt-down: tricks are what we want, so discard up to three side cards below the king, lowest
// first (the action lists them in the hand's order).
std::string exchange(const Cards& hand, char trump) {
    Cards weak;
    for (const std::string& c : hand) {
        if (suit(c) != trump && rank(c) < 13) weak.push_back(c);
    }
    // a stable sort: equal ranks keep the hand's order
    std::stable_sort(weak.begin(), weak.end(), [](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    if (weak.size() > 3) weak.resize(3);
    std::string action;
    for (const std::string& c : hand) {
        if (std::find(weak.begin(), weak.end(), c) != weak.end()) action += (action.empty() ? "" : ",") + c;
    }
    return action.empty() ? "discard:none" : "discard:" + action;
}

// All Fours: with three cards of the kick's suit, stand (as the beggar) or give (as the dealer).
std::string beg_or_give(const std::string& decision, const Json& view, const Cards& hand) {
    char kick = suit(view.get("kick").str());
    bool strong = std::count_if(hand.begin(), hand.end(), [&](const std::string& c) { return suit(c) == kick; }) >= 3;
    if (decision == "beg") return strong ? "stand" : "beg";
    return strong ? "give" : "run";
}

// Eight Rounds' patience: get rid of cards, never pass by choice, keep the 7s for last.
std::string patience(const Cards& legal) {
    Cards cards;
    for (const std::string& a : legal) {
        if (a != "pass") cards.push_back(a);
    }
    for (const std::string& c : cards) {
        if (rank(c) != 7) return c;
    }
    return cards.empty() ? legal[0] : cards[0];
}

// Whether this seat wants the trick being played (`winning`: the seat winning it so far, -1
// before the lead).
bool wants_trick(const Json& view, long long winning) {
    const std::string& game = view.get("game").str();
    size_t seat = static_cast<size_t>(view.get("seat").integer());
    if (game == "alles-oder-nichts") {  // only until our bid is made
        const Json& bids = view.get("bids");
        const Json& tricks = view.get("tricks");
        if (seat >= bids.items.size() || bids.items[seat].is_null() || seat >= tricks.items.size()) return false;
        return tricks.items[seat].integer() < bids.items[seat].integer();
    }
    if (game == "eight-rounds") return view.get("contract").str() == "most-tricks";
    if (game == "all-fours") return winning < 0 || winning != view.get("partner").integer();
    return true;  // Vingt-down: every trick brings the score down
}

// A card to a trick: when we want the trick, win it as cheaply as we can (else throw our weakest
// card); when we do not, play our strongest card that loses it (else our weakest).
std::string play(const Json& view, const Cards& legal, char trump) {
    const std::vector<Json>& trick = view.get("trick").items;
    if (trick.empty()) return pick(legal, trump, wants_trick(view, -1));
    const Json* winner = &trick[0];
    for (const Json& entry : trick) {
        if (beats(entry.get("card").str(), winner->get("card").str(), trump)) winner = &entry;
    }
    const std::string& top = winner->get("card").str();
    Cards winners, losers;
    for (const std::string& c : legal) (beats(c, top, trump) ? winners : losers).push_back(c);
    if (wants_trick(view, winner->get("seat").integer())) return pick(winners.empty() ? legal : winners, trump, false);
    return losers.empty() ? pick(legal, trump, false) : pick(losers, trump, true);
}

// The action for a request: put your own logic here. `legal` is never empty, and answering
// anything from it is always legal; whatever this returns is checked against it.
std::string choose(const std::string& decision, const Json& view, const Cards& legal) {
    if (legal.size() == 1) return legal[0];
    Cards hand = view.get("hand").strings();
    char trump = view.get("trump").is_null() ? 0 : suit(view.get("trump").str());
    std::string choice;
    if (decision == "bid") {
        choice = bid(hand, trump);
    } else if (decision == "declare") {
        choice = "declare:secret";  // open pays only when the bid is exact
    } else if (decision == "trump") {
        choice = std::string("trump:") + suit(pick(hand, 0, true));  // the suit of our best card
    } else if (decision == "exchange") {
        choice = exchange(hand, trump);
    } else if (decision == "drop") {
        choice = "stay";
    } else if (decision == "beg" || decision == "give") {
        choice = beg_or_give(decision, view, hand);
    } else if (decision == "patience") {
        choice = patience(legal);
    } else if (decision == "play") {
        choice = play(view, legal, trump);
    }
    if (std::find(legal.begin(), legal.end(), choice) != legal.end()) return choice;
    std::cerr << "starter-bot: " << choice << " is not legal here; playing " << legal[0] << " instead" << std::endl;
    return legal[0];
}

// ---- the protocol --------------------------------------------------------------------------------

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {  // end of input: the referee has gone
        Json message;
        try {
            message = Parser(line).parse();
        } catch (const std::exception& error) {
            std::cerr << "starter-bot: cannot read a line (" << error.what() << "), ignoring it" << std::endl;
            continue;
        }
        const std::string& type = message.get("type").str();
        if (type == "hello") {
            // std::endl flushes: the referee is waiting for this line
            std::cout << R"({"type":"ready","name":"starter-cpp","version":"1"})" << std::endl;
        } else if (type == "request") {
            std::string action = choose(message.get("decision").str(), message.get("view"), message.get("legal").strings());
            std::cout << R"({"type":"action","id":)" << message.get("id").integer() << R"(,"action":)" << quote(action) << "}"
                      << std::endl;
        } else if (type == "fault") {
            std::cerr << "starter-bot: fault " << message.get("kind").str() << ": " << message.get("message").str() << std::endl;
        } else if (type == "bye") {
            break;
        }
        // match_start, event, match_end and any type added later: nothing to do
    }
    return 0;
}
