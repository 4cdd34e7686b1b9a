-- +goose Up
-- The onboarding wizard's runs, worked as River jobs (onboard_run) by any
-- serve process and read by any console: the paste, the state, the
-- person's choices and drafts. A run is its starter's only and is kept a
-- day. attempt is the River attempt that owns the run's work: the writes
-- of an older attempt (a process taken for dead) are ignored.
CREATE TABLE onboard_run (
    id               char(32) NOT NULL PRIMARY KEY,
    owner            varchar(300) NOT NULL CHECK (owner <> ''),
    adapter          varchar(100) NOT NULL DEFAULT '',
    lines            text NOT NULL,
    line_count       integer NOT NULL,
    state            varchar(10) NOT NULL CHECK (state IN ('running', 'done', 'cancelled', 'failed')),
    failure          text NOT NULL DEFAULT '',
    cancel_requested integer NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    attempt          integer NOT NULL DEFAULT 0,
    started_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    sites            text,
    include          text,
    drafts           text,
    draft_count      integer NOT NULL DEFAULT 0
);
CREATE INDEX onboard_run_owner ON onboard_run (owner, started_at);
CREATE INDEX onboard_run_state ON onboard_run (state);

-- One pasted line's work: its detection, then its site's scan. A line
-- detected or scanned is kept when the run's job is taken up again, so a
-- run redone after its process stopped goes on from there and each line
-- is counted once.
CREATE TABLE onboard_run_line (
    run_id        char(32) NOT NULL REFERENCES onboard_run (id) ON DELETE CASCADE,
    line          integer NOT NULL,
    detection     text,
    site          text,
    depts_scanned integer NOT NULL DEFAULT 0,
    dept_problems text,
    PRIMARY KEY (run_id, line)
);

-- +goose Down
DROP TABLE onboard_run_line;
DROP TABLE onboard_run;
