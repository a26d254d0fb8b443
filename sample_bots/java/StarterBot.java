// A starter Trick Arena bot in Java 17: the standard library only.
//
// It plays all four games legally, a little better than at random (README.md says how), and is
// meant to be copied: `choose` below is where your own logic goes.
//
// Build and run:   javac -d classes StarterBot.java && java -cp classes StarterBot
//
// Messages (SPEC.md section 4), one JSON object per line each way:
//   hello -> answer ready;  request -> answer action;  bye or end of input -> exit.
//   match_start, event, fault and match_end need no answer.
// Only stdout carries protocol lines; write anything else to stderr (the organiser's log).

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class StarterBot {

    // ---- the decisions (SPEC.md section 9) ------------------------------------------------------

    /** The action for a request: put your own logic here. {@code legal} is never empty, and
     * answering anything from it is always legal; whatever this returns is checked against it. */
    static String choose(String decision, Json view, List<String> legal) {
        if (legal.size() == 1) {
            return legal.get(0);
        }
        List<String> hand = view.get("hand").strings();
        char trump = view.get("trump").isNull() ? 0 : suit(view.get("trump").str());
        String choice = switch (decision) {
            case "bid" -> bid(hand, trump);
            case "declare" -> "declare:secret"; // open pays only when the bid is exact
            case "trump" -> "trump:" + suit(pick(hand, (char) 0, true)); // the suit of our best card
            case "exchange" -> exchange(hand, trump);
            case "drop" -> "stay";
            case "beg", "give" -> begOrGive(decision, view, hand);
            case "patience" -> patience(legal);
            case "play" -> play(view, legal, trump);
            default -> legal.get(0);
        };
        if (legal.contains(choice)) {
            return choice;
        }
        System.err.println("starter-bot: " + choice + " is not legal here; playing " + legal.get(0) + " instead");
        return legal.get(0);
    }

    /** Alles oder Nichts: bid the high trumps (9 and up) and the other colours' 12s. */
    static String bid(List<String> hand, char trump) {
        long likely = hand.stream().filter(c -> (suit(c) == trump && rank(c) >= 9) || rank(c) == 12).count();
        return "bid:" + likely;
    }

    /** Vingt-down: tricks are what we want, so discard up to three side cards below the king,
     * lowest first (the action lists them in the hand's order). */
    static String exchange(List<String> hand, char trump) {
        List<String> weak = new ArrayList<>();
        for (String c : hand) {
            if (suit(c) != trump && rank(c) < 13) {
                weak.add(c);
            }
        }
        weak.sort(Comparator.comparingInt(StarterBot::rank)); // stable: equal ranks keep the hand's order
        List<String> discard = new ArrayList<>();
        for (String c : hand) {
            if (weak.subList(0, Math.min(3, weak.size())).contains(c)) {
                discard.add(c);
            }
        }
        return discard.isEmpty() ? "discard:none" : "discard:" + String.join(",", discard);
    }

    /** All Fours: with three cards of the kick's suit, stand (as the beggar) or give (as the dealer). */
    static String begOrGive(String decision, Json view, List<String> hand) {
        char kick = suit(view.get("kick").str());
        boolean strong = hand.stream().filter(c -> suit(c) == kick).count() >= 3;
        if (decision.equals("beg")) {
            return strong ? "stand" : "beg";
        }
        return strong ? "give" : "run";
    }

    /** Eight Rounds' patience: get rid of cards, never pass by choice, keep the 7s for last. */
    static String patience(List<String> legal) {
        List<String> cards = legal.stream().filter(a -> !a.equals("pass")).toList();
        for (String c : cards) {
            if (rank(c) != 7) {
                return c;
            }
        }
        return cards.isEmpty() ? legal.get(0) : cards.get(0);
    }

    /** A card to a trick: when we want the trick, win it as cheaply as we can (else throw our
     * weakest card); when we do not, play our strongest card that loses it (else our weakest). */
    static String play(Json view, List<String> legal, char trump) {
        List<Json> trick = view.get("trick").items;
        if (trick.isEmpty()) {
            return pick(legal, trump, wantsTrick(view, -1));
        }
        Json winner = trick.get(0);
        for (Json entry : trick) {
            if (beats(entry.get("card").str(), winner.get("card").str(), trump)) {
                winner = entry;
            }
        }
        String top = winner.get("card").str();
        List<String> winners = new ArrayList<>();
        List<String> losers = new ArrayList<>();
        for (String c : legal) {
            (beats(c, top, trump) ? winners : losers).add(c);
        }
        if (wantsTrick(view, winner.get("seat").integer())) {
            return pick(winners.isEmpty() ? legal : winners, trump, false);
        }
        return losers.isEmpty() ? pick(legal, trump, false) : pick(losers, trump, true);
    }

    /** Whether this seat wants the trick being played ({@code winning}: the seat winning it so
     * far, -1 before the lead). */
    static boolean wantsTrick(Json view, long winning) {
        int seat = (int) view.get("seat").integer();
        switch (view.get("game").str()) {
            case "alles-oder-nichts": { // only until our bid is made
                List<Json> bids = view.get("bids").items;
                List<Json> tricks = view.get("tricks").items;
                if (seat >= bids.size() || bids.get(seat).isNull() || seat >= tricks.size()) {
                    return false;
                }
                return tricks.get(seat).integer() < bids.get(seat).integer();
            }
            case "eight-rounds":
                return view.get("contract").str().equals("most-tricks");
            case "all-fours":
                return winning < 0 || winning != view.get("partner").integer();
            default:
                return true; // Vingt-down: every trick brings the score down
        }
    }

    // ---- cards (SPEC.md section 2) --------------------------------------------------------------

    /** The suit letter: always the last character ("10H" -> 'H'); '?' for an empty string. */
    static char suit(String card) {
        return card.isEmpty() ? '?' : card.charAt(card.length() - 1);
    }

    /** The rank as a number, higher is stronger: 2..10, J 11, Q 12, K 13, A 14 (Alles oder
     * Nichts: its values 1..12 as they are). */
    static int rank(String card) {
        String rank = card.isEmpty() ? "" : card.substring(0, card.length() - 1);
        switch (rank) {
            case "J": return 11;
            case "Q": return 12;
            case "K": return 13;
            case "A": return 14;
            default:
                try {
                    return Integer.parseInt(rank);
                } catch (NumberFormatException e) {
                    return 0;
                }
        }
    }

    /** How much a card is worth keeping: trumps (0: none) above every other suit, then by rank. */
    static int strength(String card, char trump) {
        return rank(card) + (trump != 0 && suit(card) == trump ? 100 : 0);
    }

    /** Whether {@code card} beats {@code top}, the card winning the trick so far: higher in its
     * suit, or a trump on a card that is not one. */
    static boolean beats(String card, String top, char trump) {
        if (suit(card) == suit(top)) {
            return rank(card) > rank(top);
        }
        return trump != 0 && suit(card) == trump;
    }

    /** The strongest ({@code highest}) or weakest card of {@code cards}; the first one on a tie. */
    static String pick(List<String> cards, char trump, boolean highest) {
        String best = cards.get(0);
        for (String card : cards) {
            int a = strength(card, trump);
            int b = strength(best, trump);
            if (highest ? a > b : a < b) {
                best = card;
            }
        }
        return best;
    }

    // ---- the protocol ---------------------------------------------------------------------------

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) { // end of input: the referee has gone
            Json message;
            try {
                message = Json.parse(line);
            } catch (IllegalArgumentException error) {
                System.err.println("starter-bot: cannot read a line (" + error.getMessage() + "), ignoring it");
                continue;
            }
            switch (message.get("type").str()) {
                case "hello" -> {
                    out.println("{\"type\":\"ready\",\"name\":\"starter-java\",\"version\":\"1\"}");
                    out.flush(); // the referee is waiting for this line: never leave it in a buffer
                }
                case "request" -> {
                    String action = choose(message.get("decision").str(), message.get("view"),
                            message.get("legal").strings());
                    out.println("{\"type\":\"action\",\"id\":" + message.get("id").integer()
                            + ",\"action\":" + Json.quote(action) + "}");
                    out.flush();
                }
                case "fault" -> System.err.println("starter-bot: fault " + message.get("kind").str() + ": "
                        + message.get("message").str());
                case "bye" -> {
                    return;
                }
                default -> { } // match_start, event, match_end and any type added later
            }
        }
    }

    // ---- a small JSON reader --------------------------------------------------------------------

    /** A JSON value. {@code get} finds an object's key (a null value when it is missing). */
    static final class Json {
        enum Kind { NULL, BOOLEAN, NUMBER, STRING, ARRAY, OBJECT }

        static final Json NULL = new Json();

        Kind kind = Kind.NULL;
        Object value; // a Boolean, Double or String; arrays and objects use the two fields below
        final List<Json> items = new ArrayList<>();
        final Map<String, Json> fields = new LinkedHashMap<>();

        Json get(String key) {
            return fields.getOrDefault(key, NULL);
        }

        boolean isNull() {
            return kind == Kind.NULL;
        }

        /** The text of a string ("" for anything else). */
        String str() {
            return value instanceof String text ? text : "";
        }

        /** The value of a number (0 for anything else). */
        long integer() {
            return value instanceof Double number ? number.longValue() : 0;
        }

        /** An array of strings, such as a hand or the legal actions. */
        List<String> strings() {
            List<String> out = new ArrayList<>();
            for (Json item : items) {
                if (item.value instanceof String text) {
                    out.add(text);
                }
            }
            return out;
        }

        static Json parse(String text) {
            Reader reader = new Reader(text);
            Json value = reader.value();
            reader.skipSpace();
            if (reader.pos != text.length()) {
                throw reader.error("unexpected text");
            }
            return value;
        }

        /** {@code text} as a JSON string, quoted and escaped. */
        static String quote(String text) {
            StringBuilder out = new StringBuilder("\"");
            for (char c : text.toCharArray()) {
                if (c == '"' || c == '\\') {
                    out.append('\\').append(c);
                } else if (c < 0x20) {
                    out.append(String.format("\\u%04x", (int) c));
                } else {
                    out.append(c);
                }
            }
            return out.append('"').toString();
        }
    }

    /** Reads one JSON value from a line. Java strings are UTF-16, so a \\u escape is one char. */
    static final class Reader {
        final String s;
        int pos = 0;

        Reader(String s) {
            this.s = s;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at character " + pos);
        }

        void skipSpace() {
            while (pos < s.length() && " \t\r\n".indexOf(s.charAt(pos)) >= 0) {
                pos++;
            }
        }

        char next() {
            if (pos >= s.length()) {
                throw error("unexpected end of the line");
            }
            return s.charAt(pos++);
        }

        void expect(char c) {
            skipSpace();
            if (next() != c) {
                throw error("expected '" + c + "'");
            }
        }

        boolean peekIs(char c) {
            skipSpace();
            return pos < s.length() && s.charAt(pos) == c;
        }

        Json value() {
            skipSpace();
            Json json = new Json();
            if (peekIs('{')) {
                json.kind = Json.Kind.OBJECT;
                expect('{');
                if (peekIs('}')) {
                    next();
                    return json;
                }
                for (;;) {
                    skipSpace();
                    String key = string();
                    expect(':');
                    json.fields.put(key, value());
                    if (!peekIs(',')) {
                        break;
                    }
                    next();
                }
                expect('}');
            } else if (peekIs('[')) {
                json.kind = Json.Kind.ARRAY;
                expect('[');
                if (peekIs(']')) {
                    next();
                    return json;
                }
                for (;;) {
                    json.items.add(value());
                    if (!peekIs(',')) {
                        break;
                    }
                    next();
                }
                expect(']');
            } else if (peekIs('"')) {
                json.kind = Json.Kind.STRING;
                json.value = string();
            } else if (s.startsWith("true", pos) || s.startsWith("false", pos)) {
                json.kind = Json.Kind.BOOLEAN;
                json.value = s.startsWith("true", pos);
                pos += (Boolean) json.value ? 4 : 5;
            } else if (s.startsWith("null", pos)) {
                pos += 4;
                return Json.NULL;
            } else {
                int start = pos;
                while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0) {
                    pos++;
                }
                try {
                    json.kind = Json.Kind.NUMBER;
                    json.value = Double.parseDouble(s.substring(start, pos));
                } catch (NumberFormatException e) {
                    pos = start;
                    throw error("bad number");
                }
            }
            return json;
        }

        String string() {
            if (next() != '"') {
                throw error("expected a string");
            }
            StringBuilder out = new StringBuilder();
            for (;;) {
                char c = next();
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        if (pos + 4 > s.length()) {
                            throw error("a cut \\u escape");
                        }
                        try {
                            out.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        } catch (NumberFormatException bad) {
                            throw error("a bad \\u escape");
                        }
                        pos += 4;
                    }
                    default -> out.append(e); // \" \\ \/
                }
            }
        }
    }
}
