-- +goose Up
-- Politeness that outlives a process: the host's token
-- bucket as the last request left it (tokens at bucket_at, the start of that
-- request), so the next process continues it instead of starting with a full
-- burst; robots.txt validators, so a new process revalidates its cached copy
-- with a conditional GET; and why a host is blocked beyond the breaker
-- ('captcha': until a person clears it).
ALTER TABLE host_state ADD COLUMN bucket_tokens double precision;
ALTER TABLE host_state ADD COLUMN bucket_at timestamptz;
ALTER TABLE host_state ADD COLUMN robots_etag text;
ALTER TABLE host_state ADD COLUMN robots_last_modified text;
ALTER TABLE host_state ADD COLUMN block_reason text;

-- +goose Down
ALTER TABLE host_state DROP COLUMN block_reason;
ALTER TABLE host_state DROP COLUMN robots_last_modified;
ALTER TABLE host_state DROP COLUMN robots_etag;
ALTER TABLE host_state DROP COLUMN bucket_at;
ALTER TABLE host_state DROP COLUMN bucket_tokens;
