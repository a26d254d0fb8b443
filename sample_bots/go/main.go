// A starter Trick Arena bot in Go: the standard library only (encoding/json reads the messages).
//
// It plays all four games legally, a little better than at random (README.md says how), and is
// meant to be copied: choose below is where your own logic goes.
//
// Build and run:   go build -o starter_bot . && ./starter_bot
//
// Messages (SPEC.md section 4), one JSON object per line each way:
//
//	hello -> answer ready;  request -> answer action;  bye or end of input -> exit.
//	match_start, event, fault and match_end need no answer.
//
// Only stdout carries protocol lines; write anything else to stderr (the organiser's log).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Message holds the fields of the referee's messages that this bot reads; encoding/json skips
// the others (and fields added by later protocol versions).
type Message struct {
	Type     string   `json:"type"`
	ID       int64    `json:"id"`
	Decision string   `json:"decision"`
	View     View     `json:"view"`
	Legal    []string `json:"legal"`
	Kind     string   `json:"kind"`    // of a fault
	Message  string   `json:"message"` // of a fault
}

// View is the part of a request's view this bot reads (SPEC.md section 9 lists every field).
// A field another game does not have stays at its zero value; nil pointers are JSON nulls.
type View struct {
	Game     string       `json:"game"`
	Seat     int          `json:"seat"`
	Hand     []string     `json:"hand"`
	Trump    *string      `json:"trump"`    // null until named; Eight Rounds has none
	Trick    []TrickEntry `json:"trick"`    // the current trick, in play order
	Bids     []*int       `json:"bids"`     // Alles oder Nichts: null where unknown
	Tricks   []int        `json:"tricks"`   // tricks taken this deal, per seat
	Contract string       `json:"contract"` // Eight Rounds
	Kick     string       `json:"kick"`     // All Fours
	Partner  *int         `json:"partner"`  // All Fours
}

// TrickEntry is one card of the current trick and the seat that played it.
type TrickEntry struct {
	Seat int    `json:"seat"`
	Card string `json:"card"`
}

// ---- the decisions (SPEC.md section 9) ---------------------------------------------------------

// choose is the action for a request: put your own logic here. legal is never empty, and
// answering anything from it is always legal; whatever this returns is checked against it.
func choose(decision string, view View, legal []string) string {
	if len(legal) == 1 {
		return legal[0]
	}
	trump := byte(0)
	if view.Trump != nil {
		trump = suit(*view.Trump)
	}
	choice := legal[0]
	switch decision {
	case "bid":
		choice = bid(view.Hand, trump)
	case "declare":
		choice = "declare:secret" // open pays only when the bid is exact
	case "trump":
		choice = "trump:" + string(suit(pick(view.Hand, 0, true))) // the suit of our best card
	case "exchange":
		choice = exchange(view.Hand, trump)
	case "drop":
		choice = "stay"
	case "beg", "give":
		choice = begOrGive(decision, view)
	case "patience":
		choice = patience(legal)
	case "play":
		choice = play(view, legal, trump)
	}
	for _, action := range legal {
		if action == choice {
			return choice
		}
	}
	fmt.Fprintf(os.Stderr, "starter-bot: %s is not legal here; playing %s instead\n", choice, legal[0])
	return legal[0]
}

// bid, in Alles oder Nichts: the high trumps (9 and up) and the other colours' 12s.
func bid(hand []string, trump byte) string {
	likely := 0
	for _, c := range hand {
		if (suit(c) == trump && rank(c) >= 9) || rank(c) == 12 {
			likely++
		}
	}
	return "bid:" + strconv.Itoa(likely)
}

// exchange, in Vingt-down: tricks are what we want, so discard up to three side cards below the
// king, lowest first (the action lists them in the hand's order).
func exchange(hand []string, trump byte) string {
	var weak []string
	for _, c := range hand {
		if suit(c) != trump && rank(c) < 13 {
			weak = append(weak, c)
		}
	}
	sort.SliceStable(weak, func(i, j int) bool { return rank(weak[i]) < rank(weak[j]) })
	if len(weak) > 3 {
		weak = weak[:3]
	}
	var discard []string
	for _, c := range hand {
		for _, w := range weak {
			if c == w {
				discard = append(discard, c)
			}
		}
	}
	if len(discard) == 0 {
		return "discard:none"
	}
	return "discard:" + strings.Join(discard, ",")
}

// begOrGive, in All Fours: with three cards of the kick's suit, stand (as the beggar) or give
// (as the dealer).
func begOrGive(decision string, view View) string {
	count := 0
	for _, c := range view.Hand {
		if suit(c) == suit(view.Kick) {
			count++
		}
	}
	strong := count >= 3
	switch {
	case decision == "beg" && strong:
		return "stand"
	case decision == "beg":
		return "beg"
	case strong:
		return "give"
	}
	return "run"
}

// patience, Eight Rounds' last round: get rid of cards, never pass by choice, 7s last.
func patience(legal []string) string {
	var cards []string
	for _, a := range legal {
		if a != "pass" {
			cards = append(cards, a)
		}
	}
	for _, c := range cards {
		if rank(c) != 7 {
			return c
		}
	}
	if len(cards) > 0 {
		return cards[0]
	}
	return legal[0]
}

// play is a card to a trick: when we want the trick, win it as cheaply as we can (else throw our
// weakest card); when we do not, play our strongest card that loses it (else our weakest).
func play(view View, legal []string, trump byte) string {
	if len(view.Trick) == 0 {
		return pick(legal, trump, wantsTrick(view, -1))
	}
	winner := view.Trick[0]
	for _, entry := range view.Trick {
		if beats(entry.Card, winner.Card, trump) {
			winner = entry
		}
	}
	var winners, losers []string
	for _, c := range legal {
		if beats(c, winner.Card, trump) {
			winners = append(winners, c)
		} else {
			losers = append(losers, c)
		}
	}
	if wantsTrick(view, winner.Seat) {
		if len(winners) == 0 {
			return pick(legal, trump, false)
		}
		return pick(winners, trump, false)
	}
	if len(losers) == 0 {
		return pick(legal, trump, false)
	}
	return pick(losers, trump, true)
}

// wantsTrick tells whether this seat wants the trick being played (winning: the seat winning it
// so far, -1 before the lead).
func wantsTrick(view View, winning int) bool {
	switch view.Game {
	case "alles-oder-nichts": // only until our bid is made
		if view.Seat >= len(view.Bids) || view.Bids[view.Seat] == nil || view.Seat >= len(view.Tricks) {
			return false
		}
		return view.Tricks[view.Seat] < *view.Bids[view.Seat]
	case "eight-rounds":
		return view.Contract == "most-tricks"
	case "all-fours":
		return winning < 0 || view.Partner == nil || winning != *view.Partner
	}
	return true // Vingt-down: every trick brings the score down
}

// ---- cards (SPEC.md section 2) -----------------------------------------------------------------

// suit is the suit letter: always the last character ("10H" -> 'H'); '?' for an empty string.
func suit(card string) byte {
	if card == "" {
		return '?'
	}
	return card[len(card)-1]
}

// rank is the rank as a number, higher is stronger: 2..10, J 11, Q 12, K 13, A 14 (Alles oder
// Nichts: its values 1..12 as they are).
func rank(card string) int {
	if card == "" {
		return 0
	}
	switch r := card[:len(card)-1]; r {
	case "J":
		return 11
	case "Q":
		return 12
	case "K":
		return 13
	case "A":
		return 14
	default:
		n, _ := strconv.Atoi(r)
		return n
	}
}

// strength is how much a card is worth keeping: trumps (0: none) above every other suit, then by
// rank.
func strength(card string, trump byte) int {
	if trump != 0 && suit(card) == trump {
		return rank(card) + 100
	}
	return rank(card)
}

// beats tells whether card beats top, the card winning the trick so far: higher in its suit, or
// a trump on a card that is not one.
func beats(card, top string, trump byte) bool {
	if suit(card) == suit(top) {
		return rank(card) > rank(top)
	}
	return trump != 0 && suit(card) == trump
}

// pick is the strongest (highest) or weakest card of cards; the first one on a tie.
func pick(cards []string, trump byte, highest bool) string {
	best := cards[0]
	for _, card := range cards {
		a, b := strength(card, trump), strength(best, trump)
		if (highest && a > b) || (!highest && a < b) {
			best = card
		}
	}
	return best
}

// ---- the protocol ------------------------------------------------------------------------------

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			return // end of input: the referee has gone
		}
		var message Message
		if err := json.Unmarshal(line, &message); err != nil {
			fmt.Fprintf(os.Stderr, "starter-bot: cannot read a line (%v), ignoring it\n", err)
			continue
		}
		switch message.Type {
		case "hello":
			out.WriteString(`{"type":"ready","name":"starter-go","version":"1"}` + "\n")
		case "request":
			action, _ := json.Marshal(choose(message.Decision, message.View, message.Legal))
			fmt.Fprintf(out, `{"type":"action","id":%d,"action":%s}`+"\n", message.ID, action)
		case "fault":
			fmt.Fprintf(os.Stderr, "starter-bot: fault %s: %s\n", message.Kind, message.Message)
		case "bye":
			return
		}
		// match_start, event, match_end and any type added later: nothing to do
		out.Flush() // the referee is waiting for the line: never leave it in a buffer
	}
}
