package ui

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"zhizhi/internal/health"
	"zhizhi/internal/model"
)

// badge is a coloured state label; Class is one of the CSS badge colours.
type badge struct {
	Label string
	Class string // red | orange | yellow | green | grey | blue
}

type hostIssueView struct {
	Host   string
	Badges []badge
}

type hostRow struct {
	Host              string
	Badges            []badge
	Blocked           bool // anything a person may clear
	ConsecutiveErrors int
	BreakerTrips7d    int
	BackoffUntil      *time.Time
	BreakerUntil      *time.Time
	Robots            []model.RobotsState
	UpdatedAt         time.Time
}

type hostsData struct {
	Hosts     []hostRow
	Attention int
	Reason    string // the reason typed before a refused clear, kept for the retry
	ReasonFor string
}

// hostList shows every host's politeness state and, for admins, the form
// that clears a block.
func (c *console) hostList(w http.ResponseWriter, r *http.Request) {
	d, err := c.hostsData(r.Context())
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	p := page{Title: "主机状态", Active: "hosts", Data: d}
	// The confirmation names only a host the page lists, so a crafted
	// link cannot make the console say something it did not do.
	if h := r.URL.Query().Get("cleared"); h != "" && slices.ContainsFunc(d.Hosts, func(r hostRow) bool { return r.Host == h }) {
		p.Flash = "已解除主机 " + h + " 的限制：下次抓取会重新访问（先读取 robots.txt）。"
	}
	c.render(w, r, http.StatusOK, "hosts", p)
}

func (c *console) hostsData(ctx context.Context) (hostsData, error) {
	var d hostsData
	now := c.now()
	states, err := c.store.ListHostStates(ctx)
	if err != nil {
		return d, err
	}
	robots, err := c.store.ListRobotsStates(ctx)
	if err != nil {
		return d, err
	}
	rep, err := health.Check(ctx, c.store, now)
	if err != nil {
		return d, err
	}
	issues := map[string]health.HostIssue{}
	for _, h := range rep.Hosts {
		issues[h.Host] = h
	}
	rows := map[string]*hostRow{}
	for _, s := range states {
		rows[s.Host] = &hostRow{Host: s.Host, ConsecutiveErrors: s.ConsecutiveErrors, UpdatedAt: s.UpdatedAt,
			BreakerTrips7d: tripsWithin(s.BreakerTrips, now, health.ReviewWindow)}
	}
	for _, rs := range robots {
		row, ok := rows[rs.Host]
		if !ok {
			row = &hostRow{Host: rs.Host}
			rows[rs.Host] = row
		}
		row.Robots = append(row.Robots, rs)
	}
	for _, row := range rows {
		if is, ok := issues[row.Host]; ok {
			row.Badges = issueBadges(is)
			row.Blocked = true
			row.BackoffUntil, row.BreakerUntil = is.BackoffUntil, is.BreakerUntil
			d.Attention++
		} else {
			row.Badges = []badge{{Label: "正常", Class: "green"}}
		}
		d.Hosts = append(d.Hosts, *row)
	}
	// Hosts that need a person come first, then by name.
	slices.SortFunc(d.Hosts, func(a, b hostRow) int {
		if a.Blocked != b.Blocked {
			if a.Blocked {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Host, b.Host)
	})
	return d, nil
}

// issueBadges names each of a host's problems, the blocking ones in red.
func issueBadges(h health.HostIssue) []badge {
	var out []badge
	for _, k := range h.Kinds {
		switch k {
		case health.HostCaptcha:
			out = append(out, badge{"验证码拦截", "red"})
		case health.HostReview:
			label := "待人工复核"
			if h.BreakerTrips7d > 0 {
				label = fmt.Sprintf("待人工复核（7 天内熔断 %d 次）", h.BreakerTrips7d)
			}
			out = append(out, badge{label, "orange"})
		case health.HostBreaker:
			out = append(out, badge{"熔断中", "red"})
		case health.HostRobots:
			out = append(out, badge{"robots.txt 无法获取", "orange"})
		case health.HostBackoff:
			out = append(out, badge{"退避中", "yellow"})
		default:
			out = append(out, badge{"已封禁（" + k + "）", "red"})
		}
	}
	return out
}

func tripsWithin(trips []time.Time, now time.Time, d time.Duration) int {
	n := 0
	for _, t := range trips {
		if now.Sub(t) <= d {
			n++
		}
	}
	return n
}
