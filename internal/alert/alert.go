// Package alert owns zhizhi's alerts: it evaluates the rules of
// config/alerts.yaml (success rate, challenge rate, stale targets, hosts
// flagged for review) against the database, keeps each condition's state
// there so that one message goes out when a condition starts and one when
// it clears, however many processes evaluate and however often they
// restart, and delivers messages to Feishu and WeCom group robots and to
// plain JSON webhooks.
//
// Evaluation and delivery are separate on purpose: Evaluate decides and
// records, and returns Notifications (plain JSON-serialisable values, one
// per webhook) that a job queue can carry and deliver with retries, so a
// webhook that is down never holds up crawling or the next evaluation.
package alert

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"zhizhi/internal/config"
	"zhizhi/internal/fetch"
	"zhizhi/internal/health"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Rules, as alert_state.rule and Notification.Rule.
const (
	RuleSuccessRate   = "success_rate"
	RuleChallengeRate = "challenge_rate"
	RuleStale         = "stale"
	RuleReview        = "review"
	RuleTakedown      = "takedown"
)

// TakedownWarning is how long before its deadline an open takedown request
// raises an alert: time for a person to act within the 48 hours.
const TakedownWarning = 12 * time.Hour

// States of a notification.
const (
	Firing   = "firing"
	Resolved = "resolved"
	Test     = "test" // a test message (TestNotification): neither an alert nor a recovery
)

// Notification is one message for one webhook: a condition that started
// (Firing) or cleared (Resolved). It marshals to JSON and back unchanged,
// so a queued job can carry it. Webhook, Key, State and Episode name the
// message; they are tagged for River, whose delivery jobs are unique by
// them, so a message queued twice (after a crash) is sent once.
type Notification struct {
	Webhook string    `json:"webhook" river:"unique"` // the webhook's name in alerts.yaml
	Key     string    `json:"key" river:"unique"`     // the condition: the rule, and ":subject" when it has one
	Rule    string    `json:"rule"`
	Subject string    `json:"subject,omitempty"`      // a target_code or a host
	State   string    `json:"state" river:"unique"`   // Firing or Resolved
	Episode int64     `json:"episode" river:"unique"` // how many times this condition has fired
	At      time.Time `json:"at"`
	Title   string    `json:"title"` // one line, Chinese
	Lines   []string  `json:"lines"` // the body, Chinese
	// Redelivery marks a message sent again because an earlier attempt
	// may have reached the group (its process died before it recorded the
	// answer); its title says so.
	Redelivery bool `json:"redelivery,omitempty"`
}

// RedeliveryNote ends the title of a message sent again after an attempt
// that may have arrived: a Feishu or WeCom group cannot tell a repeat
// from a new alert, so the message says it.
const RedeliveryNote = "（重发：上次发送可能已送达）"

// AsRedelivery is n marked as sent again.
func (n Notification) AsRedelivery() Notification {
	if !n.Redelivery {
		n.Redelivery = true
		n.Title += RedeliveryNote
	}
	return n
}

// Alerter evaluates the alert rules against one database and delivers the
// resulting notifications, by the configuration in force: the one it was
// made with, or the last one Reconfigure took. Without one (no
// alerts.yaml) it evaluates and delivers nothing.
type Alerter struct {
	Store *store.Store
	// HTTP delivers messages; default: a client with a 10 s timeout.
	HTTP *http.Client
	// Now stamps signatures at delivery; default time.Now.
	Now func() time.Time

	cfg atomic.Pointer[config.Alerts]
}

// New returns an Alerter for cfg, refusing a configuration that could not
// deliver: no webhook, or a webhook whose address comes from an
// environment variable that is not set.
func New(st *store.Store, cfg *config.Alerts) (*Alerter, error) {
	if cfg == nil {
		return nil, errors.New("alerts: no webhook configured (config/alerts.yaml)")
	}
	a := &Alerter{Store: st}
	if err := a.Reconfigure(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// Reconfigure puts cfg in force for the next evaluation and delivery; nil
// turns alerting off (conditions already raised are kept, and told once a
// configuration is back). A configuration that could not deliver is
// refused and the one in force stays.
func (a *Alerter) Reconfigure(cfg *config.Alerts) error {
	if cfg != nil {
		if err := checkDeliverable(cfg); err != nil {
			return err
		}
	}
	a.cfg.Store(cfg)
	return nil
}

// Config is the configuration in force; nil when alerting is off.
func (a *Alerter) Config() *config.Alerts { return a.cfg.Load() }

func checkDeliverable(cfg *config.Alerts) error {
	if len(cfg.Webhooks) == 0 {
		return errors.New("alerts: no webhook configured (config/alerts.yaml)")
	}
	for _, w := range cfg.Webhooks {
		if w.URL == "" {
			if w.URLEnv != "" {
				return fmt.Errorf("alerts: webhook %s: environment variable %s is not set — set it to the webhook address, or remove the webhook from %s", w.Name, w.URLEnv, cfg.File)
			}
			return fmt.Errorf("alerts: webhook %s has no address — fix %s (zhizhi config lint)", w.Name, cfg.File)
		}
		if w.SecretEnv != "" && w.Secret == "" {
			return fmt.Errorf("alerts: webhook %s: environment variable %s is not set — set it to the signing secret, or remove secret_env from %s", w.Name, w.SecretEnv, cfg.File)
		}
	}
	return nil
}

// Request classes that are zhizhi refusing to send a request (robots.txt,
// its own breaker or backoff, the SSRF guard …): they say nothing about
// how sites answer, so the rates leave them out.
var localClasses = []string{fetch.ClassRobots, fetch.ClassSSRF, fetch.ClassBreaker, fetch.ClassBackoff,
	fetch.ClassBlocked, fetch.ClassCanceled, fetch.ClassNoBrowser}

// Request classes that are a site's anti-bot defence answering.
var challengeClasses = []string{fetch.ClassChallenge, fetch.ClassCaptcha}

// event is a change of one condition's state, before it is fanned out to
// the webhooks.
type event struct {
	key, rule, subject, state string
	episode                   int64
	title                     string
	lines                     []string
}

// Evaluate checks every enabled rule at now, records each condition's
// state, and returns a notification per webhook for every condition that
// this call saw start or clear. A condition still holding, or still clear,
// gives nothing; a condition that cannot be judged (too few requests in a
// rate window) is left as it is. Of several processes evaluating at once,
// only one gets each notification.
//
// Each change is recorded together with its message, which stays in the
// database until Queued is told the notifications were handed on: a
// process that dies in between loses nothing, Unqueued returns them again.
func (a *Alerter) Evaluate(ctx context.Context, now time.Time) ([]Notification, error) {
	var events []event
	cfg := a.cfg.Load()
	if cfg == nil {
		return nil, nil
	}
	for _, rr := range []struct {
		rule string
		cfg  config.RateRule
	}{{RuleSuccessRate, cfg.SuccessRate}, {RuleChallengeRate, cfg.ChallengeRate}} {
		if !rr.cfg.Enabled {
			continue
		}
		ev, err := a.rateRule(ctx, now, rr.rule, rr.cfg)
		if err != nil {
			return nil, err
		}
		events = append(events, ev...)
	}
	if cfg.Stale || cfg.Review {
		rep, err := health.Check(ctx, a.Store, now)
		if err != nil {
			return nil, fmt.Errorf("alerts: %w", err)
		}
		if cfg.Stale {
			ev, err := a.staleRule(ctx, now, rep)
			if err != nil {
				return nil, err
			}
			events = append(events, ev...)
		}
		if cfg.Review {
			ev, err := a.reviewRule(ctx, now, rep)
			if err != nil {
				return nil, err
			}
			events = append(events, ev...)
		}
	}
	if cfg.Takedown {
		ev, err := a.takedownRule(ctx, now)
		if err != nil {
			return nil, err
		}
		events = append(events, ev...)
	}
	var out []Notification
	for _, e := range events {
		out = append(out, fanOut(cfg, e, now)...)
	}
	return out, nil
}

// fanOut is e's notification for every webhook of cfg.
func fanOut(cfg *config.Alerts, e event, at time.Time) []Notification {
	if cfg == nil {
		return nil
	}
	var out []Notification
	for _, w := range cfg.Webhooks {
		out = append(out, Notification{Webhook: w.Name, Key: e.key, Rule: e.rule, Subject: e.subject, State: e.state,
			Episode: e.episode, At: at.UTC(), Title: e.title, Lines: e.lines})
	}
	return out
}

// Unqueued returns a notification per webhook for every change that was
// claimed and not yet marked Queued, oldest first: the changes of an
// evaluation under way here or in another process, and those of one whose
// process died before it queued them. Handing them on again is safe where
// a delivery is unique per Webhook, Key, State and Episode, as River's
// delivery jobs are.
func (a *Alerter) Unqueued(ctx context.Context) ([]Notification, error) {
	notices, err := a.Store.UnqueuedAlerts(ctx)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	cfg := a.cfg.Load()
	var out []Notification
	for _, n := range notices {
		e := event{key: n.Key, rule: n.Rule, subject: n.Subject, state: Resolved, episode: n.Episode, title: n.Title, lines: n.Lines}
		if n.Firing {
			e.state = Firing
		}
		out = append(out, fanOut(cfg, e, n.At)...)
	}
	return out, nil
}

// Queued records that the notifications ns were handed on for delivery,
// for every webhook: Unqueued no longer returns their changes.
func (a *Alerter) Queued(ctx context.Context, ns []Notification) error {
	var changes []store.AlertChange
	seen := map[store.AlertChange]bool{}
	for _, n := range ns {
		ch := store.AlertChange{Key: n.Key, Episode: n.Episode, Firing: n.State == Firing}
		if !seen[ch] {
			seen[ch] = true
			changes = append(changes, ch)
		}
	}
	if err := a.Store.AlertsQueued(ctx, changes); err != nil {
		return fmt.Errorf("alerts: %w", err)
	}
	return nil
}

// fire claims the start of a condition; nil when it was firing already
// (or another process claimed it).
func (a *Alerter) fire(ctx context.Context, now time.Time, key, rule, subject, title string, lines []string) (*event, error) {
	ep, claimed, err := a.Store.ClaimAlertFiring(ctx, key, rule, subject, store.AlertMessage{Title: title, Lines: lines}, now)
	if err != nil || !claimed {
		return nil, err
	}
	return &event{key: key, rule: rule, subject: subject, state: Firing, episode: ep, title: title, lines: lines}, nil
}

// resolve claims the end of a condition; nil when it was not firing. msg
// writes the recovery from the state the condition had; it runs inside the
// claim's transaction and must not use the database.
func (a *Alerter) resolve(ctx context.Context, now time.Time, key string, msg func(prev store.AlertState) (string, []string)) (*event, error) {
	var m store.AlertMessage
	prev, claimed, err := a.Store.ClaimAlertResolved(ctx, key, now, func(prev store.AlertState) store.AlertMessage {
		m.Title, m.Lines = msg(prev)
		return m
	})
	if err != nil || !claimed {
		return nil, err
	}
	return &event{key: key, rule: prev.Rule, subject: prev.Subject, state: Resolved, episode: prev.Episode, title: m.Title, lines: m.Lines}, nil
}

// rateRule judges one rate over its window: firing, clear, or (too few
// requests) unknown, which changes nothing.
func (a *Alerter) rateRule(ctx context.Context, now time.Time, rule string, rr config.RateRule) ([]event, error) {
	c, err := a.Store.CountRequests(ctx, now.Add(-rr.Window), now, localClasses, challengeClasses)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	if c.Total < rr.MinRequests || c.Total == 0 {
		return nil, nil
	}
	var holds bool
	var title string
	var lines []string
	switch rule {
	case RuleSuccessRate:
		rate := float64(c.Succeeded) / float64(c.Total)
		holds = rate < rr.Threshold
		title, lines = successRateMessage(rr, c, rate)
	default:
		rate := float64(c.Challenged) / float64(c.Total)
		holds = rate > rr.Threshold
		title, lines = challengeRateMessage(rr, c, rate)
	}
	var ev *event
	if holds {
		ev, err = a.fire(ctx, now, rule, rule, "", title, lines)
	} else {
		ev, err = a.resolve(ctx, now, rule, func(prev store.AlertState) (string, []string) {
			return recoveredRate(rule, rr, c, prev)
		})
	}
	if err != nil || ev == nil {
		return nil, err
	}
	return []event{*ev}, nil
}

// setRule fires every observed condition of a per-subject rule and
// resolves the firing ones no longer observed.
func (a *Alerter) setRule(ctx context.Context, now time.Time, rule string, observed map[string]func() (string, []string),
	recovered func(prev store.AlertState) (string, []string)) ([]event, error) {
	var out []event
	for subject, msg := range observed {
		title, lines := msg()
		ev, err := a.fire(ctx, now, rule+":"+subject, rule, subject, title, lines)
		if err != nil {
			return nil, fmt.Errorf("alerts: %w", err)
		}
		if ev != nil {
			out = append(out, *ev)
		}
	}
	firing, err := a.Store.FiringAlerts(ctx, rule)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	for _, f := range firing {
		if _, still := observed[f.Subject]; still {
			continue
		}
		ev, err := a.resolve(ctx, now, f.Key, recovered)
		if err != nil {
			return nil, fmt.Errorf("alerts: %w", err)
		}
		if ev != nil {
			out = append(out, *ev)
		}
	}
	sortEvents(out)
	return out, nil
}

func (a *Alerter) staleRule(ctx context.Context, now time.Time, rep health.Report) ([]event, error) {
	observed := map[string]func() (string, []string){}
	for _, s := range rep.Stale {
		observed[s.TargetCode] = func() (string, []string) { return staleMessage(s) }
	}
	// The recoveries say how each target is now; they are written inside
	// the claims, which must not read the database, so read it first.
	firing, err := a.Store.FiringAlerts(ctx, RuleStale)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	targets := map[string]*model.Target{}
	for _, f := range firing {
		if _, still := observed[f.Subject]; still {
			continue
		}
		if t, err := a.Store.TargetByCode(ctx, f.Subject); err == nil && t.Enabled {
			targets[f.Subject] = t
		}
	}
	return a.setRule(ctx, now, RuleStale, observed, func(prev store.AlertState) (string, []string) {
		return staleRecovered(prev, targets[prev.Subject])
	})
}

func (a *Alerter) reviewRule(ctx context.Context, now time.Time, rep health.Report) ([]event, error) {
	observed := map[string]func() (string, []string){}
	for _, h := range rep.Hosts {
		if h.Has(health.HostReview) {
			observed[h.Host] = func() (string, []string) { return reviewMessage(h) }
		}
	}
	return a.setRule(ctx, now, RuleReview, observed, reviewRecovered)
}

// takedownRule fires for every open takedown request whose deadline is
// TakedownWarning away or past; it clears when the request is carried out.
func (a *Alerter) takedownRule(ctx context.Context, now time.Time) ([]event, error) {
	open, err := a.Store.ListTakedowns(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	observed := map[string]func() (string, []string){}
	for _, k := range open {
		if now.Before(k.DeadlineAt.Add(-TakedownWarning)) {
			continue
		}
		observed[fmt.Sprint(k.ID)] = func() (string, []string) { return takedownMessage(k, now) }
	}
	return a.setRule(ctx, now, RuleTakedown, observed, takedownRecovered)
}

func sortEvents(evs []event) {
	slices.SortFunc(evs, func(a, b event) int { return strings.Compare(a.key, b.key) })
}

// Send delivers n to the webhook it names.
func (a *Alerter) Send(ctx context.Context, n Notification) error {
	var hooks []config.Webhook
	if cfg := a.cfg.Load(); cfg != nil {
		hooks = cfg.Webhooks
	}
	for _, w := range hooks {
		if w.Name == n.Webhook {
			now := time.Now
			if a.Now != nil {
				now = a.Now
			}
			return deliver(ctx, a.client(), now(), w, n)
		}
	}
	return &DeliveryError{Webhook: n.Webhook, NotSent: true, Err: errors.New("no such webhook in the alerts configuration (removed since the alert was raised?)")}
}

func (a *Alerter) client() *http.Client {
	if a.HTTP != nil {
		return a.HTTP
	}
	return defaultClient
}
