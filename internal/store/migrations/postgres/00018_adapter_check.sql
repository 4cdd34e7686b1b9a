-- +goose Up
-- The last detection run of each CMS adapter against each site that uses
-- it (the adapter page's 跑探测脚本): does the site's home page still show
-- the adapter's signatures? A site whose CMS was replaced or upgraded shows
-- up here before its crawls start failing. One row per adapter and site,
-- replaced by the next run; each run is also in audit_log.
CREATE TABLE adapter_check (
    adapter_id  varchar(100) NOT NULL CHECK (adapter_id <> ''),
    site_id     bigint NOT NULL REFERENCES crawl_site (id),
    checked_at  timestamptz NOT NULL,
    checked_by  varchar(200) NOT NULL CHECK (checked_by <> ''),
    outcome     varchar(10) NOT NULL CHECK (outcome IN ('matched', 'other', 'unmatched', 'error')),
    detected_as varchar(100) NOT NULL DEFAULT '',
    evidence    varchar(1000) NOT NULL DEFAULT '',
    problem     varchar(2000) NOT NULL DEFAULT '',
    PRIMARY KEY (adapter_id, site_id)
);

-- +goose Down
DROP TABLE adapter_check;
