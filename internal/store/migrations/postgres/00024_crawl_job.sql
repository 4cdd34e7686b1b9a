-- +goose Up
-- The acquisition API's crawl jobs (POST /v1/crawl), worked as River jobs
-- by any serve process. A job is its caller's only (owner: "apikey:7",
-- "user:3"); api_key_id is the key its pages are charged to. attempt is
-- the River attempt that owns the job's work: the writes of an older one
-- (a process taken for dead) are ignored. asked counts the pages asked of
-- the sites (at most page_limit), completed those that answered.
CREATE TABLE crawl_job (
    id           char(36) NOT NULL PRIMARY KEY,
    owner        varchar(100) NOT NULL CHECK (owner <> ''),
    api_key_id   bigint,
    url          varchar(4096) NOT NULL CHECK (url <> ''),
    options      text NOT NULL,
    state        text NOT NULL CHECK (state IN ('scraping', 'completed', 'failed', 'cancelled')),
    error        text NOT NULL DEFAULT '',
    error_code   varchar(50) NOT NULL DEFAULT '',
    page_limit   integer NOT NULL CHECK (page_limit >= 1),
    asked        integer NOT NULL DEFAULT 0 CHECK (asked >= 0 AND asked <= page_limit),
    completed    integer NOT NULL DEFAULT 0 CHECK (completed >= 0 AND completed <= asked),
    credits      bigint NOT NULL DEFAULT 0 CHECK (credits >= 0),
    next_seq     bigint NOT NULL DEFAULT 1,
    started      integer NOT NULL DEFAULT 0 CHECK (started IN (0, 1)),
    attempt      integer NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    finished_at  timestamptz,
    expires_at   timestamptz NOT NULL
);
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
    job_id      char(36) NOT NULL REFERENCES crawl_job (id) ON DELETE CASCADE,
    url         varchar(4096) NOT NULL CHECK (url <> ''),
    seq         bigint NOT NULL,
    depth       integer NOT NULL CHECK (depth >= 0),
    state       text NOT NULL CHECK (state IN ('queued', 'fetching', 'sent', 'done', 'failed', 'redirect', 'refused', 'robots')),
    status      integer NOT NULL DEFAULT 0,
    code        varchar(50) NOT NULL DEFAULT '',
    error       text NOT NULL DEFAULT '',
    document    text,
    done_no     integer,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (job_id, url)
);
CREATE INDEX crawl_job_page_queue ON crawl_job_page (job_id, state, seq);
CREATE UNIQUE INDEX crawl_job_page_done ON crawl_job_page (job_id, done_no) WHERE done_no IS NOT NULL;

-- +goose Down
DROP TABLE crawl_job_page;
DROP TABLE crawl_job;
