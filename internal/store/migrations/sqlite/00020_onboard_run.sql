-- +goose Up
-- The onboarding wizard's runs, worked as River jobs (onboard_run) by any
-- serve process and read by any console: the paste, the state, the
-- person's choices and drafts. A run is its starter's only and is kept a
-- day. attempt is the River attempt that owns the run's work: the writes
-- of an older attempt (a process taken for dead) are ignored.
CREATE TABLE onboard_run (
    id               TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
    owner            TEXT NOT NULL CHECK (owner <> '' AND length(owner) <= 300),
    adapter          TEXT NOT NULL DEFAULT '' CHECK (length(adapter) <= 100),
    lines            TEXT NOT NULL,
    line_count       INTEGER NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'failed')),
    failure          TEXT NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    attempt          INTEGER NOT NULL DEFAULT 0,
    started_at       TEXT NOT NULL,
    finished_at      TEXT,
    sites            TEXT,
    include          TEXT,
    drafts           TEXT,
    draft_count      INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX onboard_run_owner ON onboard_run (owner, started_at);
CREATE INDEX onboard_run_state ON onboard_run (state);

-- One pasted line's work: its detection, then its site's scan. A line
-- detected or scanned is kept when the run's job is taken up again, so a
-- run redone after its process stopped goes on from there and each line
-- is counted once.
CREATE TABLE onboard_run_line (
    run_id        TEXT NOT NULL REFERENCES onboard_run (id) ON DELETE CASCADE,
    line          INTEGER NOT NULL,
    detection     TEXT,
    site          TEXT,
    depts_scanned INTEGER NOT NULL DEFAULT 0,
    dept_problems TEXT,
    PRIMARY KEY (run_id, line)
) STRICT;

-- +goose Down
DROP TABLE onboard_run_line;
DROP TABLE onboard_run;
