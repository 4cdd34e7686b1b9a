-- +goose Up
-- The state of every alert condition (a rule, and for per-target or
-- per-host rules its subject): whether it is firing, and how many times it
-- has fired. A process claims the right to send by changing this row with a
-- conditional write, so one message goes out per change of state however
-- many processes evaluate the rules, and a restart sends nothing new.
CREATE TABLE alert_state (
    key         TEXT PRIMARY KEY CHECK (key <> ''),
    rule        TEXT NOT NULL CHECK (rule <> '' AND length(rule) <= 40),
    subject     TEXT NOT NULL DEFAULT '',
    firing      INTEGER NOT NULL CHECK (firing IN (0, 1)),
    episode     INTEGER NOT NULL DEFAULT 1 CHECK (episode >= 1),
    fired_at    TEXT NOT NULL,
    resolved_at TEXT,
    detail      TEXT,
    updated_at  TEXT NOT NULL
) STRICT;
CREATE INDEX alert_state_rule_idx ON alert_state (rule, firing);

-- +goose Down
DROP TABLE alert_state;
