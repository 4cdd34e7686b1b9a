-- The collector's schema plus the runtime state tables.
-- SQLite flavour: STRICT tables, INTEGER PRIMARY KEY, timestamps as UTC text
-- in one fixed-width layout (2006-01-02T15:04:05.000000Z) so that text order is
-- time order, dates as YYYY-MM-DD text, JSON as text checked by json_valid,
-- booleans as 0/1. Keep the rules in step with migrations/postgres.

-- +goose Up
CREATE TABLE crawl_site (
    id                       INTEGER PRIMARY KEY,
    site_code                TEXT NOT NULL UNIQUE CHECK (site_code <> '' AND length(site_code) <= 50),
    site_name                TEXT NOT NULL DEFAULT '' CHECK (length(site_name) <= 200),
    base_url                 TEXT NOT NULL DEFAULT '' CHECK (length(base_url) <= 500),
    site_role                TEXT NOT NULL CHECK (site_role IN ('qingyuan_local', 'county_local', 'province_ref', 'nation_ref')),
    cms_adapter              TEXT CHECK (length(cms_adapter) <= 50),
    adapter_params_json      TEXT CHECK (adapter_params_json IS NULL OR json_valid(adapter_params_json)),
    default_fetch_strategy   TEXT CHECK (default_fetch_strategy IS NULL OR default_fetch_strategy IN ('httpx', 'playwright')),
    strategy_override_reason TEXT CHECK (length(strategy_override_reason) <= 200),
    respect_robots           INTEGER NOT NULL DEFAULT 1 CHECK (respect_robots IN (0, 1)),
    yaml_path                TEXT CHECK (length(yaml_path) <= 500),
    access                   TEXT NOT NULL DEFAULT 'summary' CHECK (access IN ('full', 'summary')),
    owned                    INTEGER NOT NULL DEFAULT 0 CHECK (owned IN (0, 1)),
    enabled                  INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    remark                   TEXT CHECK (length(remark) <= 500),
    created_at               TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    updated_at               TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    -- exactly one of cms_adapter and yaml_path is set.
    CONSTRAINT crawl_site_adapter_xor_yaml CHECK ((coalesce(cms_adapter, '') <> '') <> (coalesce(yaml_path, '') <> '')),
    -- an adapter site without adapter_params_json may not be enabled.
    CONSTRAINT crawl_site_adapter_params CHECK (coalesce(cms_adapter, '') = '' OR enabled = 0 OR adapter_params_json IS NOT NULL)
) STRICT;

CREATE TABLE local_department (
    dept_id        INTEGER PRIMARY KEY,
    dept_name      TEXT NOT NULL CHECK (length(dept_name) <= 250),
    parent_dept_id INTEGER,
    dept_level     INTEGER,
    dept_code      TEXT CHECK (length(dept_code) <= 250),
    short_name     TEXT CHECK (length(short_name) <= 50),
    full_name      TEXT CHECK (length(full_name) <= 500),
    state          INTEGER NOT NULL DEFAULT 0,
    order_id       INTEGER,
    updated_at     TEXT
) STRICT;

CREATE TABLE site_department (
    id                 INTEGER PRIMARY KEY,
    site_id            INTEGER NOT NULL REFERENCES crawl_site (id),
    dept_path          TEXT NOT NULL CHECK (dept_path <> '' AND length(dept_path) <= 100),
    local_dept_id      INTEGER REFERENCES local_department (dept_id),
    dept_binding       TEXT NOT NULL DEFAULT 'pending' CHECK (dept_binding IN ('pending', 'mapped', 'city_level', 'cross_dept', 'external_ref')),
    dept_display_name  TEXT CHECK (length(dept_display_name) <= 200),
    detect_status      TEXT NOT NULL DEFAULT 'pending' CHECK (detect_status IN ('pending', 'ok', 'failed')),
    last_probed_at     TEXT,
    last_classify_json TEXT CHECK (last_classify_json IS NULL OR json_valid(last_classify_json)),
    enabled            INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    updated_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    CONSTRAINT site_department_site_path_key UNIQUE (site_id, dept_path),
    -- lets crawl_target prove its department belongs to its own site
    CONSTRAINT site_department_id_site_key UNIQUE (id, site_id),
    -- local_dept_id is required for mapped and empty otherwise.
    CONSTRAINT site_department_mapped_has_dept CHECK ((dept_binding = 'mapped') = (local_dept_id IS NOT NULL))
) STRICT;

CREATE TABLE crawl_target (
    id                    INTEGER PRIMARY KEY,
    site_id               INTEGER NOT NULL REFERENCES crawl_site (id),
    site_department_id    INTEGER REFERENCES site_department (id),
    target_code           TEXT NOT NULL UNIQUE CHECK (target_code <> '' AND length(target_code) <= 100),
    target_name           TEXT NOT NULL DEFAULT '' CHECK (length(target_name) <= 200),
    entry_url             TEXT NOT NULL DEFAULT '' CHECK (length(entry_url) <= 1000),
    sample_article_url    TEXT CHECK (length(sample_article_url) <= 1000),
    dept_id               INTEGER REFERENCES local_department (dept_id),
    column_id             TEXT CHECK (length(column_id) <= 64),
    parser_override_json  TEXT CHECK (parser_override_json IS NULL OR json_valid(parser_override_json)),
    channel_name          TEXT CHECK (length(channel_name) <= 200),
    channel_path          TEXT CHECK (length(channel_path) <= 1000),
    content_category      TEXT CHECK (length(content_category) <= 100),
    content_subcategory   TEXT CHECK (length(content_subcategory) <= 100),
    schedule_cron         TEXT CHECK (length(schedule_cron) <= 100),
    expected_cadence_days INTEGER NOT NULL DEFAULT 30 CHECK (expected_cadence_days > 0),
    interval_sec          INTEGER NOT NULL DEFAULT 0 CHECK (interval_sec >= 0),
    enabled               INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    source                TEXT NOT NULL DEFAULT 'admin' CHECK (source IN ('yaml', 'admin')),
    last_crawled_at       TEXT,
    last_article_time     TEXT,
    created_at            TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    updated_at            TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    CONSTRAINT crawl_target_id_site_key UNIQUE (id, site_id),
    CONSTRAINT crawl_target_dept_same_site FOREIGN KEY (site_department_id, site_id) REFERENCES site_department (id, site_id)
) STRICT;
CREATE INDEX crawl_target_site_idx ON crawl_target (site_id);
CREATE INDEX crawl_target_site_department_idx ON crawl_target (site_department_id);

CREATE TABLE article (
    id                  INTEGER PRIMARY KEY,
    site_id             INTEGER NOT NULL REFERENCES crawl_site (id),
    target_id           INTEGER NOT NULL REFERENCES crawl_target (id),
    dept_id             INTEGER,
    native_post_id      TEXT CHECK (native_post_id <> '' AND length(native_post_id) <= 64),
    url                 TEXT NOT NULL,
    url_hash            TEXT NOT NULL CHECK (length(url_hash) = 64 AND url_hash NOT GLOB '*[^0-9a-f]*'),
    title               TEXT NOT NULL DEFAULT '',
    publish_time        TEXT,
    source_raw          TEXT CHECK (length(source_raw) <= 500),
    channel_name        TEXT CHECK (length(channel_name) <= 200),
    channel_path        TEXT CHECK (length(channel_path) <= 1000),
    content_category    TEXT CHECK (length(content_category) <= 100),
    content_subcategory TEXT CHECK (length(content_subcategory) <= 100),
    index_no            TEXT CHECK (length(index_no) <= 200),
    doc_no              TEXT CHECK (length(doc_no) <= 200),
    publisher           TEXT CHECK (length(publisher) <= 500),
    publish_date        TEXT CHECK (publish_date IS NULL OR date(publish_date) IS publish_date),
    effective_date      TEXT CHECK (effective_date IS NULL OR date(effective_date) IS effective_date),
    topic_words         TEXT CHECK (length(topic_words) <= 500),
    open_category       TEXT CHECK (length(open_category) <= 200),
    metadata_json       TEXT CHECK (metadata_json IS NULL OR json_valid(metadata_json)),
    content_text        TEXT,
    raw_html_path       TEXT,
    text_path           TEXT,
    has_attachment      INTEGER NOT NULL DEFAULT 0 CHECK (has_attachment IN (0, 1)),
    status              TEXT NOT NULL DEFAULT 'raw' CHECK (status IN ('raw', 'ready', 'failed')),
    status_reason       TEXT,
    fetch_strategy      TEXT CHECK (fetch_strategy IS NULL OR fetch_strategy IN ('httpx', 'playwright')),
    fetched_at          TEXT NOT NULL,
    exported_to_rag_at  TEXT,
    created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    updated_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    -- rows without native_post_id (NULL) do not take part.
    CONSTRAINT article_site_native_key UNIQUE (site_id, native_post_id),
    CONSTRAINT article_url_hash_key UNIQUE (url_hash),
    CONSTRAINT article_target_same_site FOREIGN KEY (target_id, site_id) REFERENCES crawl_target (id, site_id)
) STRICT;
CREATE INDEX article_target_idx ON article (target_id);
CREATE INDEX article_export_idx ON article (status, updated_at, id);
CREATE INDEX article_updated_idx ON article (updated_at, id);
CREATE INDEX article_dept_idx ON article (dept_id);

CREATE TABLE attachment (
    id            INTEGER PRIMARY KEY,
    article_id    INTEGER NOT NULL REFERENCES article (id) ON DELETE CASCADE,
    url           TEXT,
    file_name     TEXT NOT NULL DEFAULT '',
    file_ext      TEXT CHECK (length(file_ext) <= 20),
    size_bytes    INTEGER NOT NULL DEFAULT 0 CHECK (size_bytes >= 0),
    file_path     TEXT,
    file_hash     TEXT CHECK (file_hash IS NULL OR (length(file_hash) = 64 AND file_hash NOT GLOB '*[^0-9a-f]*')),
    downloaded_at TEXT
) STRICT;
CREATE INDEX attachment_article_idx ON attachment (article_id);

CREATE TABLE crawl_log (
    id          INTEGER PRIMARY KEY,
    site_id     INTEGER REFERENCES crawl_site (id),
    target_id   INTEGER REFERENCES crawl_target (id),
    host        TEXT NOT NULL DEFAULT '',
    article_url TEXT,
    purpose     TEXT NOT NULL DEFAULT '',
    method      TEXT NOT NULL DEFAULT 'GET',
    strategy    TEXT CHECK (strategy IS NULL OR strategy IN ('httpx', 'playwright')),
    http_status INTEGER,
    bytes       INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER,
    success     INTEGER NOT NULL CHECK (success IN (0, 1)),
    error_class TEXT,
    error_msg   TEXT,
    occurred_at TEXT NOT NULL
) STRICT;
CREATE INDEX crawl_log_occurred_idx ON crawl_log (occurred_at);
CREATE INDEX crawl_log_host_occurred_idx ON crawl_log (host, occurred_at);
CREATE INDEX crawl_log_target_occurred_idx ON crawl_log (target_id, occurred_at);

CREATE TABLE master_column_registry (
    id                   INTEGER PRIMARY KEY,
    adapter_id           TEXT NOT NULL CHECK (adapter_id <> '' AND length(adapter_id) <= 50),
    site_id              INTEGER NOT NULL REFERENCES crawl_site (id),
    column_id            TEXT NOT NULL CHECK (column_id <> '' AND length(column_id) <= 64),
    column_name          TEXT NOT NULL DEFAULT '' CHECK (length(column_name) <= 500),
    column_path          TEXT CHECK (length(column_path) <= 1000),
    admin_level          TEXT NOT NULL CHECK (admin_level IN ('city', 'county', 'township')),
    topic_tags           TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(topic_tags) AND json_type(topic_tags) = 'array'),
    post_count           INTEGER NOT NULL DEFAULT 0,
    last_seen_at         TEXT NOT NULL,
    subscribed_target_id INTEGER REFERENCES crawl_target (id),
    active               INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    updated_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    CONSTRAINT master_column_registry_key UNIQUE (adapter_id, site_id, column_id)
) STRICT;
CREATE INDEX master_column_registry_level_idx ON master_column_registry (admin_level, subscribed_target_id);

-- SQLite has no GIN index: the tags of topic_tags are kept, one per row, in
-- this side table by triggers, so "columns tagged X" is an index lookup.
CREATE TABLE master_column_topic (
    registry_id INTEGER NOT NULL REFERENCES master_column_registry (id) ON DELETE CASCADE,
    tag         TEXT NOT NULL,
    PRIMARY KEY (tag, registry_id)
) STRICT, WITHOUT ROWID;

-- +goose StatementBegin
CREATE TRIGGER master_column_topic_insert AFTER INSERT ON master_column_registry
BEGIN
    INSERT OR IGNORE INTO master_column_topic (registry_id, tag)
    SELECT NEW.id, value FROM json_each(NEW.topic_tags) WHERE type = 'text';
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER master_column_topic_update AFTER UPDATE OF topic_tags ON master_column_registry
BEGIN
    DELETE FROM master_column_topic WHERE registry_id = NEW.id;
    INSERT OR IGNORE INTO master_column_topic (registry_id, tag)
    SELECT NEW.id, value FROM json_each(NEW.topic_tags) WHERE type = 'text';
END;
-- +goose StatementEnd

CREATE TABLE url_state (
    url_hash         TEXT PRIMARY KEY CHECK (length(url_hash) = 64 AND url_hash NOT GLOB '*[^0-9a-f]*'),
    url              TEXT NOT NULL,
    etag             TEXT,
    last_modified    TEXT,
    content_hash     TEXT,
    simhash          INTEGER NOT NULL DEFAULT 0,
    last_checked_at  TEXT,
    last_changed_at  TEXT,
    change_intervals TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(change_intervals)),
    next_check_at    TEXT
) STRICT;
CREATE INDEX url_state_next_check_idx ON url_state (next_check_at);

CREATE TABLE host_state (
    host               TEXT PRIMARY KEY CHECK (host <> ''),
    consecutive_errors INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_errors >= 0),
    backoff_until      TEXT,
    breaker_until      TEXT,
    breaker_trips      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(breaker_trips)),
    needs_review       INTEGER NOT NULL DEFAULT 0 CHECK (needs_review IN (0, 1)),
    robots_body        BLOB,
    robots_status      INTEGER NOT NULL DEFAULT 0,
    robots_fetched_at  TEXT,
    updated_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'))
) STRICT;

CREATE TABLE cookie (
    id         INTEGER PRIMARY KEY,
    site_id    INTEGER REFERENCES crawl_site (id),
    host       TEXT NOT NULL CHECK (host <> ''),
    name       TEXT NOT NULL CHECK (name <> ''),
    value      TEXT NOT NULL DEFAULT '',
    path       TEXT NOT NULL DEFAULT '/',
    source     TEXT NOT NULL CHECK (source IN ('browser', 'direct')),
    expires_at TEXT,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')),
    CONSTRAINT cookie_host_name_path_key UNIQUE (host, name, path)
) STRICT;

-- +goose Down
DROP TABLE cookie;
DROP TABLE host_state;
DROP TABLE url_state;
DROP TABLE master_column_topic;
DROP TABLE master_column_registry;
DROP TABLE crawl_log;
DROP TABLE attachment;
DROP TABLE article;
DROP TABLE crawl_target;
DROP TABLE site_department;
DROP TABLE local_department;
DROP TABLE crawl_site;
