-- +goose Up
-- robots.txt per origin: RFC 9309 makes a file govern one scheme, host and
-- port, so http://h/, https://h/ and http://h:8080/ each have their own.
-- With it, the run of failed fetches (network error, 5xx, 429), so that the
-- short retry backoff of a failing robots.txt survives a restart.
--
-- This replaces the robots columns of host_state, which were keyed by host
-- name. Those rows did not record the scheme, so each is copied to the
-- host's http and https origins on the default ports. A copy is never looser
-- than the original: a readable file is revalidated at its first use in every
-- process anyway, and a failure keeps both origins closed until its retry.
CREATE TABLE robots_state (
    origin        text PRIMARY KEY CHECK (origin <> ''),
    host          text NOT NULL CHECK (host <> ''),
    status        int NOT NULL DEFAULT 0,
    body          bytea,
    fetched_at    timestamptz NOT NULL,
    etag          text,
    last_modified text,
    failures      int NOT NULL DEFAULT 0 CHECK (failures >= 0),
    failing_since timestamptz,
    last_error    text,
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX robots_state_host_idx ON robots_state (host);

INSERT INTO robots_state (origin, host, status, body, fetched_at, etag, last_modified,
    failures, failing_since, last_error)
SELECT o.scheme || host || o.port, host, robots_status,
    CASE WHEN robots_status = 0 THEN NULL ELSE robots_body END,
    robots_fetched_at, robots_etag, robots_last_modified,
    CASE WHEN robots_status = 0 OR robots_status = 429 OR robots_status >= 500 THEN 1 ELSE 0 END,
    CASE WHEN robots_status = 0 OR robots_status = 429 OR robots_status >= 500 THEN robots_fetched_at END,
    CASE WHEN robots_status = 0 THEN 'network error'
         WHEN robots_status = 429 OR robots_status >= 500 THEN 'HTTP ' || robots_status END
FROM host_state, (VALUES ('http://', ':80'), ('https://', ':443')) AS o (scheme, port)
WHERE robots_fetched_at IS NOT NULL;

ALTER TABLE host_state DROP COLUMN robots_body;
ALTER TABLE host_state DROP COLUMN robots_status;
ALTER TABLE host_state DROP COLUMN robots_fetched_at;
ALTER TABLE host_state DROP COLUMN robots_etag;
ALTER TABLE host_state DROP COLUMN robots_last_modified;

-- +goose Down
ALTER TABLE host_state ADD COLUMN robots_body bytea;
ALTER TABLE host_state ADD COLUMN robots_status int NOT NULL DEFAULT 0;
ALTER TABLE host_state ADD COLUMN robots_fetched_at timestamptz;
ALTER TABLE host_state ADD COLUMN robots_etag text;
ALTER TABLE host_state ADD COLUMN robots_last_modified text;
DROP TABLE robots_state;
