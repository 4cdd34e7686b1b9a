-- +goose Up
-- The message about a change of an alert condition, written in the same
-- transaction as the claim of the change in alert_state and deleted once its
-- deliveries are queued. A process that dies between the claim and the
-- queueing leaves the row here, and the next alert check queues it: no
-- alert is lost, and since a delivery job is unique per webhook, condition,
-- episode and state, queueing it twice still sends it once.
CREATE TABLE alert_outbox (
    key        TEXT NOT NULL REFERENCES alert_state (key) ON DELETE CASCADE,
    episode    INTEGER NOT NULL CHECK (episode >= 1),
    state      TEXT NOT NULL CHECK (state IN ('firing', 'resolved')),
    changed_at TEXT NOT NULL,
    title      TEXT NOT NULL CHECK (title <> ''),
    lines      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(lines) AND json_type(lines) = 'array'),
    PRIMARY KEY (key, episode, state)
) STRICT;

-- +goose Down
DROP TABLE alert_outbox;
