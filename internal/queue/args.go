package queue

import (
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"zhizhi/internal/alert"
)

// Job kinds, as stored in the queue.
const (
	KindCrawl   = "crawl_target"
	KindRecheck = "recheck_target"
	KindTick    = "schedule_tick"
	KindAlerts  = "alert_check"
	KindNotify  = "alert_send"
	KindSeal    = "ledger_seal"
)

// Queues. Crawls and re-checks share the crawl queue, so that the number
// of crawl workers bounds all fetching; the scheduler has a queue of its
// own so that a process busy crawling still keeps time.
const (
	QueueCrawl       = "crawl"
	QueueMaintenance = "maintenance"
	QueueAlerts      = "alerts"
)

// Priorities: River works 1 before 2 before 4. A crawl asked for by a
// person jumps the scheduled ones; re-checks of stored articles come last.
const (
	PriorityNow      = 1
	PrioritySchedule = 2
	PriorityRecheck  = 4
)

// Reasons a crawl was queued.
const (
	ReasonSchedule = "schedule" // its cron slot came
	ReasonFirst    = "first"    // never crawled yet
	ReasonNow      = "now"      // a person asked for it
)

// busyStates are the states in which a job of a target counts as queued or
// running: while one is in them, no second job of that target is inserted.
// River needs available, pending, running and scheduled in any such list.
var busyStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateScheduled, rivertype.JobStateRetryable,
}

// CrawlArgs is one target's crawl: walk its lists, fetch its new and due
// links. Unique per target while queued or running.
type CrawlArgs struct {
	TargetID   int64      `json:"target_id" river:"unique"`
	TargetCode string     `json:"target_code"`
	Reason     string     `json:"reason"`
	Slot       *time.Time `json:"slot,omitempty"`
}

// Kind implements river.JobArgs.
func (CrawlArgs) Kind() string { return KindCrawl }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (CrawlArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue: QueueCrawl, Priority: PrioritySchedule, MaxAttempts: crawlMaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: busyStates},
	}
}

// RecheckArgs fetches a target's failed links whose retry is due and
// revalidates its stored articles whose next check is due. Unique per
// target while queued or running; queued at PrioritySchedule when retries
// are due.
type RecheckArgs struct {
	TargetID   int64  `json:"target_id" river:"unique"`
	TargetCode string `json:"target_code"`
}

// Kind implements river.JobArgs.
func (RecheckArgs) Kind() string { return KindRecheck }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RecheckArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue: QueueCrawl, Priority: PriorityRecheck, MaxAttempts: crawlMaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: busyStates},
	}
}

// TickArgs runs the scheduler once. River's leader inserts it every minute.
type TickArgs struct{}

// Kind implements river.JobArgs.
func (TickArgs) Kind() string { return KindTick }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (TickArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue: QueueMaintenance, MaxAttempts: 1,
		UniqueOpts: river.UniqueOpts{ByState: busyStates},
	}
}

// crawlMaxAttempts: a crawl that keeps failing is given up after this many
// tries (about ten hours of retries); its next cron slot starts afresh, and
// its failed links wait in the frontier with their own backoff. A worker
// that dies under a job costs it an attempt too, hence the room.
const crawlMaxAttempts = 8

// AlertCheckArgs evaluates the alert rules once. River's leader inserts it
// every minute when alerts are configured.
type AlertCheckArgs struct{}

// Kind implements river.JobArgs.
func (AlertCheckArgs) Kind() string { return KindAlerts }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (AlertCheckArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue: QueueMaintenance, MaxAttempts: 1,
		UniqueOpts: river.UniqueOpts{ByState: busyStates},
	}
}

// SealArgs seals the ledgers of every day that is over and not sealed
// yet. River's leader inserts it every ten minutes; sealing a day twice is
// a no-op, so a repeat after a crash costs nothing.
type SealArgs struct{}

// Kind implements river.JobArgs.
func (SealArgs) Kind() string { return KindSeal }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (SealArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue: QueueMaintenance, MaxAttempts: 1,
		UniqueOpts: river.UniqueOpts{ByState: busyStates},
	}
}

// NotifyArgs delivers one alert message to one webhook. It has a queue of
// its own, so a webhook that is down is retried without ever taking a
// crawl worker. It is unique per webhook and message (the fields of
// alert.Notification tagged river:"unique") in every state, so a message
// queued again after a crash is never sent twice.
type NotifyArgs struct {
	Notification alert.Notification `json:"notification"`
}

// Kind implements river.JobArgs.
func (NotifyArgs) Kind() string { return KindNotify }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (NotifyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAlerts, MaxAttempts: notifyMaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: rivertype.JobStates()}}
}

// notifyMaxAttempts: a message is tried for about a day (30 s, 1 min, 2 min
// … then hourly, notifyRetryWait) before it is given up.
const notifyMaxAttempts = 31
