-- +goose Up
-- One row per crawl of a target, whoever ran it (the crawl command, a serve
-- worker): when it started and ended, how it ended and what it did. The
-- newest finished row of a target is its "last run" that health and alerts
-- read; older rows are its history.
CREATE TABLE target_run (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    target_id   bigint NOT NULL REFERENCES crawl_target (id),
    runner      varchar(100) NOT NULL DEFAULT '',
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    outcome     varchar(12) NOT NULL CHECK (outcome IN ('ok', 'failed', 'interrupted', 'blocked')),
    created     int NOT NULL DEFAULT 0 CHECK (created >= 0),
    updated     int NOT NULL DEFAULT 0 CHECK (updated >= 0),
    unchanged   int NOT NULL DEFAULT 0 CHECK (unchanged >= 0),
    failed      int NOT NULL DEFAULT 0 CHECK (failed >= 0),
    pages       int NOT NULL DEFAULT 0 CHECK (pages >= 0),
    bytes       bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
    error_msg   text
);
CREATE INDEX target_run_target_idx ON target_run (target_id, id);

-- +goose Down
DROP TABLE target_run;
