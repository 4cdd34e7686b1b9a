-- +goose Up
-- One row per crawl of a target, whoever ran it (the crawl command, a serve
-- worker): when it started and ended, how it ended and what it did. The
-- newest finished row of a target is its "last run" that health and alerts
-- read; older rows are its history.
CREATE TABLE target_run (
    id          INTEGER PRIMARY KEY,
    target_id   INTEGER NOT NULL REFERENCES crawl_target (id),
    runner      TEXT NOT NULL DEFAULT '' CHECK (length(runner) <= 100),
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'interrupted', 'blocked')),
    created     INTEGER NOT NULL DEFAULT 0 CHECK (created >= 0),
    updated     INTEGER NOT NULL DEFAULT 0 CHECK (updated >= 0),
    unchanged   INTEGER NOT NULL DEFAULT 0 CHECK (unchanged >= 0),
    failed      INTEGER NOT NULL DEFAULT 0 CHECK (failed >= 0),
    pages       INTEGER NOT NULL DEFAULT 0 CHECK (pages >= 0),
    bytes       INTEGER NOT NULL DEFAULT 0 CHECK (bytes >= 0),
    error_msg   TEXT
) STRICT;
CREATE INDEX target_run_target_idx ON target_run (target_id, id);

-- +goose Down
DROP TABLE target_run;
