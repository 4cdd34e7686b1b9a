package ledger

import (
	"context"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// ClosingHumanSource gives the sealer a day's human ledger: it closes the
// day's portal visits first (their final scores decide who was human; their
// keys and salt are forgotten), then reads the per-card tallies. The sealer
// asks only for days that are over.
func ClosingHumanSource(st *store.Store) HumanSource {
	return func(ctx context.Context, day string) ([]model.HumanTally, error) {
		if _, err := st.ClosePortalDay(ctx, day); err != nil {
			return nil, err
		}
		return humanTallies(ctx, st, day)
	}
}

// StoredHumanSource reads a sealed day's human tallies as they are now,
// without closing anything: verifying only reads.
func StoredHumanSource(st *store.Store) HumanSource {
	return func(ctx context.Context, day string) ([]model.HumanTally, error) {
		return humanTallies(ctx, st, day)
	}
}

func humanTallies(ctx context.Context, st *store.Store, day string) ([]model.HumanTally, error) {
	tallies, err := st.HumanTallies(ctx, day)
	if err != nil {
		return nil, err
	}
	out := make([]model.HumanTally, len(tallies))
	for i, t := range tallies {
		out[i] = model.HumanTally{CardID: t.CardID, Views: t.Views, Clicks: t.Clicks}
	}
	return out, nil
}
