-- +goose Up
-- The serve processes working this database, each with its last
-- heartbeat. A process registers before it takes its first job and beats
-- every few seconds; one whose beat is too old is taken for dead by the
-- others, which claim its row, hand its running jobs back to the queue
-- and remove the row. A process that stops cleanly removes its own row.
-- id is the process's River client id (river_job.attempted_by).
CREATE TABLE serve_process (
    id          varchar(100) PRIMARY KEY CHECK (id <> ''),
    host        varchar(255) NOT NULL DEFAULT '',
    pid         bigint NOT NULL DEFAULT 0,
    started_at  timestamptz NOT NULL,
    beat_at     timestamptz NOT NULL,
    claimed_by  varchar(100),
    claimed_at  timestamptz
);

-- +goose Down
DROP TABLE serve_process;
