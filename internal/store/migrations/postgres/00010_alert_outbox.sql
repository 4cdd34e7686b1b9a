-- +goose Up
-- The message about a change of an alert condition, written in the same
-- transaction as the claim of the change in alert_state and deleted once its
-- deliveries are queued. A process that dies between the claim and the
-- queueing leaves the row here, and the next alert check queues it: no
-- alert is lost, and since a delivery job is unique per webhook, condition,
-- episode and state, queueing it twice still sends it once.
CREATE TABLE alert_outbox (
    key        text NOT NULL REFERENCES alert_state (key) ON DELETE CASCADE,
    episode    bigint NOT NULL CHECK (episode >= 1),
    state      varchar(10) NOT NULL CHECK (state IN ('firing', 'resolved')),
    changed_at timestamptz NOT NULL,
    title      text NOT NULL CHECK (title <> ''),
    lines      jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(lines) = 'array'),
    PRIMARY KEY (key, episode, state)
);

-- +goose Down
DROP TABLE alert_outbox;
