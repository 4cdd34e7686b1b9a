-- +goose Up
-- The state of every alert condition (a rule, and for per-target or
-- per-host rules its subject): whether it is firing, and how many times it
-- has fired. A process claims the right to send by changing this row with a
-- conditional write, so one message goes out per change of state however
-- many processes evaluate the rules, and a restart sends nothing new.
CREATE TABLE alert_state (
    key         text PRIMARY KEY CHECK (key <> ''),
    rule        varchar(40) NOT NULL CHECK (rule <> ''),
    subject     text NOT NULL DEFAULT '',
    firing      boolean NOT NULL,
    episode     bigint NOT NULL DEFAULT 1 CHECK (episode >= 1),
    fired_at    timestamptz NOT NULL,
    resolved_at timestamptz,
    detail      text,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX alert_state_rule_idx ON alert_state (rule, firing);

-- +goose Down
DROP TABLE alert_state;
