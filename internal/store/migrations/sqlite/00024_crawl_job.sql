-- +goose Up
-- The acquisition API's crawl jobs (POST /v1/crawl), worked as River jobs
-- by any serve process. A job is its caller's only (owner: "apikey:7",
-- "user:3"); api_key_id is the key its pages are charged to. attempt is
-- the River attempt that owns the job's work: the writes of an older one
-- (a process taken for dead) are ignored. asked counts the pages asked of
-- the sites (at most page_limit), completed those that answered.
CREATE TABLE crawl_job (
    id           TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 36),
    owner        TEXT NOT NULL CHECK (owner <> '' AND length(owner) <= 100),
    api_key_id   INTEGER,
    url          TEXT NOT NULL CHECK (url <> '' AND length(url) <= 4096),
    options      TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('scraping', 'completed', 'failed', 'cancelled')),
    error        TEXT NOT NULL DEFAULT '',
    error_code   TEXT NOT NULL DEFAULT '' CHECK (length(error_code) <= 50),
    page_limit   INTEGER NOT NULL CHECK (page_limit >= 1),
    asked        INTEGER NOT NULL DEFAULT 0 CHECK (asked >= 0 AND asked <= page_limit),
    completed    INTEGER NOT NULL DEFAULT 0 CHECK (completed >= 0 AND completed <= asked),
    credits      INTEGER NOT NULL DEFAULT 0 CHECK (credits >= 0),
    next_seq     INTEGER NOT NULL DEFAULT 1,
    started      INTEGER NOT NULL DEFAULT 0 CHECK (started IN (0, 1)),
    attempt      INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    finished_at  TEXT,
    expires_at   TEXT NOT NULL
) STRICT;
CREATE INDEX crawl_job_owner ON crawl_job (owner, created_at);

-- A crawl job's frontier: every URL it found in its scope, once (the
-- primary key), in the order found (seq). queued → fetching (claimed, not
-- sent) → sent (the request left) → done, failed, or redirect (its
-- target in scope is queued as a page of its own; a redirect hop is not
-- counted against the limit); refused and robots were refused before
-- anything was sent. A page left "sent" by a process
-- that died is failed, never asked again; one left "fetching" goes back to
-- the queue. done_no numbers the answered pages for paging.
CREATE TABLE crawl_job_page (
    job_id      TEXT NOT NULL REFERENCES crawl_job (id) ON DELETE CASCADE,
    url         TEXT NOT NULL CHECK (url <> '' AND length(url) <= 4096),
    seq         INTEGER NOT NULL,
    depth       INTEGER NOT NULL CHECK (depth >= 0),
    state       TEXT NOT NULL CHECK (state IN ('queued', 'fetching', 'sent', 'done', 'failed', 'redirect', 'refused', 'robots')),
    status      INTEGER NOT NULL DEFAULT 0,
    code        TEXT NOT NULL DEFAULT '' CHECK (length(code) <= 50),
    error       TEXT NOT NULL DEFAULT '',
    document    TEXT,
    done_no     INTEGER,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (job_id, url)
) STRICT;
CREATE INDEX crawl_job_page_queue ON crawl_job_page (job_id, state, seq);
CREATE UNIQUE INDEX crawl_job_page_done ON crawl_job_page (job_id, done_no) WHERE done_no IS NOT NULL;

-- +goose Down
DROP TABLE crawl_job_page;
DROP TABLE crawl_job;
