-- +goose Up
-- The last detection run of each CMS adapter against each site that uses
-- it (the adapter page's 跑探测脚本): does the site's home page still show
-- the adapter's signatures? A site whose CMS was replaced or upgraded shows
-- up here before its crawls start failing. One row per adapter and site,
-- replaced by the next run; each run is also in audit_log.
CREATE TABLE adapter_check (
    adapter_id  TEXT NOT NULL CHECK (adapter_id <> '' AND length(adapter_id) <= 100),
    site_id     INTEGER NOT NULL REFERENCES crawl_site (id),
    checked_at  TEXT NOT NULL,
    checked_by  TEXT NOT NULL CHECK (checked_by <> '' AND length(checked_by) <= 200),
    outcome     TEXT NOT NULL CHECK (outcome IN ('matched', 'other', 'unmatched', 'error')),
    detected_as TEXT NOT NULL DEFAULT '' CHECK (length(detected_as) <= 100),
    evidence    TEXT NOT NULL DEFAULT '' CHECK (length(evidence) <= 1000),
    problem     TEXT NOT NULL DEFAULT '' CHECK (length(problem) <= 2000),
    PRIMARY KEY (adapter_id, site_id)
) STRICT;

-- +goose Down
DROP TABLE adapter_check;
