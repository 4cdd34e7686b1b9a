package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"zhizhi/internal/store"
)

// HeadsFeed is what /ledger/heads publishes: every sealed day's head and
// its signed note, oldest first, and the key that checks them. An outsider
// who keeps a copy can later prove that the chain still extends it: a
// rewritten day changes its head and every head after it.
type HeadsFeed struct {
	VerifierKey string      `json:"verifier_key"`
	Heads       []KnownHead `json:"heads"`
}

// KnownHead is one day's head as someone kept it: the day, the head (hex)
// and the signed note that states it.
type KnownHead struct {
	Day  string `json:"day"`
	Head string `json:"head"`
	Note string `json:"note,omitempty"`
}

// Heads returns the feed of every sealed day's head.
func Heads(ctx context.Context, st *store.Store) (HeadsFeed, error) {
	vkey, err := VerifierKey(ctx, st)
	if err != nil {
		return HeadsFeed{}, err
	}
	days, err := st.LedgerDays(ctx, "", "")
	if err != nil {
		return HeadsFeed{}, err
	}
	f := HeadsFeed{VerifierKey: vkey, Heads: make([]KnownHead, 0, len(days))}
	for _, d := range days {
		f.Heads = append(f.Heads, KnownHead{Day: d.Day, Head: d.Head, Note: d.Note})
	}
	return f, nil
}

// ParseKnownHeads reads kept heads: a heads feed as /ledger/heads serves it,
// or a JSON list of {day, head}. Each head must be a day and a 64-digit hex
// hash; at least one is needed.
func ParseKnownHeads(b []byte) ([]KnownHead, error) {
	var known []KnownHead
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		if err := json.Unmarshal(b, &known); err != nil {
			return nil, fmt.Errorf("not a list of known heads: %w", err)
		}
	} else {
		var f HeadsFeed
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("not a heads feed (as /ledger/heads serves it): %w", err)
		}
		known = f.Heads
	}
	if len(known) == 0 {
		return nil, fmt.Errorf("no known head in it")
	}
	for i, k := range known {
		if _, err := ParseDay(k.Day); err != nil {
			return nil, fmt.Errorf("head %d: %w", i+1, err)
		}
		if _, err := parseHash(k.Head); err != nil {
			return nil, fmt.Errorf("head %d (%s): %w", i+1, k.Day, err)
		}
	}
	return known, nil
}

// CheckKnownHeads proves that the verified chain extends every known
// head: each known day is in it with the same head, and since the chain
// links every day to the one before, everything sealed after it continues
// from it. A different head is a rewrite (*Problem naming the day). A
// known day the checked days do not hold is a plain error (it could not
// be checked) — unless whole, for the live store that holds the chain
// from its start, where a missing known day means days were cut off.
func CheckKnownHeads(sum Summary, known []KnownHead, whole bool) error {
	known = slices.Clone(known)
	slices.SortFunc(known, func(a, b KnownHead) int { return strings.Compare(a.Day, b.Day) })
	for _, k := range known {
		got, ok := sum.Heads[k.Day]
		if !ok {
			if whole {
				if sum.Days == 0 || k.Day > sum.Last {
					return &Problem{Day: k.Day, Record: -1, Msg: fmt.Sprintf("a known head of this day is no longer in the chain, which ends at %s — sealed days were cut off", orNone(sum.Last))}
				}
				return &Problem{Day: k.Day, Record: -1, Msg: fmt.Sprintf("a known head of this day is no longer in the chain, which starts at %s — the chain was rewritten from the start", sum.First)}
			}
			return fmt.Errorf("%s: the checked days (%s to %s) do not hold this known head's day", k.Day, orNone(sum.First), orNone(sum.Last))
		}
		if got != k.Head {
			return &Problem{Day: k.Day, Record: -1, Msg: fmt.Sprintf("the chain's head is %s, a known head of this day is %s — the day was rewritten after it was published", got, k.Head)}
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no day"
	}
	return s
}
