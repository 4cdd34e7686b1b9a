-- The collector's schema plus the runtime state tables.
-- PostgreSQL flavour: bigint identity keys, timestamptz, date, jsonb, a GIN
-- index on topic_tags. Keep the rules in step with migrations/sqlite.

-- +goose Up
CREATE TABLE crawl_site (
    id                       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_code                varchar(50) NOT NULL UNIQUE CHECK (site_code <> ''),
    site_name                varchar(200) NOT NULL DEFAULT '',
    base_url                 varchar(500) NOT NULL DEFAULT '',
    site_role                varchar(50) NOT NULL CHECK (site_role IN ('qingyuan_local', 'county_local', 'province_ref', 'nation_ref')),
    cms_adapter              varchar(50),
    adapter_params_json      jsonb,
    default_fetch_strategy   varchar(50) CHECK (default_fetch_strategy IN ('httpx', 'playwright')),
    strategy_override_reason varchar(200),
    respect_robots           boolean NOT NULL DEFAULT true,
    yaml_path                varchar(500),
    access                   varchar(20) NOT NULL DEFAULT 'summary' CHECK (access IN ('full', 'summary')),
    owned                    boolean NOT NULL DEFAULT false,
    enabled                  boolean NOT NULL DEFAULT true,
    remark                   varchar(500),
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    -- exactly one of cms_adapter and yaml_path is set.
    CONSTRAINT crawl_site_adapter_xor_yaml CHECK ((coalesce(cms_adapter, '') <> '') <> (coalesce(yaml_path, '') <> '')),
    -- an adapter site without adapter_params_json may not be enabled.
    CONSTRAINT crawl_site_adapter_params CHECK (coalesce(cms_adapter, '') = '' OR NOT enabled OR adapter_params_json IS NOT NULL)
);

CREATE TABLE local_department (
    dept_id        bigint PRIMARY KEY,
    dept_name      varchar(250) NOT NULL,
    parent_dept_id bigint,
    dept_level     int,
    dept_code      varchar(250),
    short_name     varchar(50),
    full_name      varchar(500),
    state          int NOT NULL DEFAULT 0,
    order_id       int,
    updated_at     timestamptz
);

CREATE TABLE site_department (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id            bigint NOT NULL REFERENCES crawl_site (id),
    dept_path          varchar(100) NOT NULL CHECK (dept_path <> ''),
    local_dept_id      bigint REFERENCES local_department (dept_id),
    dept_binding       varchar(20) NOT NULL DEFAULT 'pending' CHECK (dept_binding IN ('pending', 'mapped', 'city_level', 'cross_dept', 'external_ref')),
    dept_display_name  varchar(200),
    detect_status      varchar(20) NOT NULL DEFAULT 'pending' CHECK (detect_status IN ('pending', 'ok', 'failed')),
    last_probed_at     timestamptz,
    last_classify_json jsonb,
    enabled            boolean NOT NULL DEFAULT true,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT site_department_site_path_key UNIQUE (site_id, dept_path),
    -- lets crawl_target prove its department belongs to its own site
    CONSTRAINT site_department_id_site_key UNIQUE (id, site_id),
    -- local_dept_id is required for mapped and empty otherwise.
    CONSTRAINT site_department_mapped_has_dept CHECK ((dept_binding = 'mapped') = (local_dept_id IS NOT NULL))
);

CREATE TABLE crawl_target (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id               bigint NOT NULL REFERENCES crawl_site (id),
    site_department_id    bigint REFERENCES site_department (id),
    target_code           varchar(100) NOT NULL UNIQUE CHECK (target_code <> ''),
    target_name           varchar(200) NOT NULL DEFAULT '',
    entry_url             varchar(1000) NOT NULL DEFAULT '',
    sample_article_url    varchar(1000),
    dept_id               bigint REFERENCES local_department (dept_id),
    column_id             varchar(64),
    parser_override_json  jsonb,
    channel_name          varchar(200),
    channel_path          varchar(1000),
    content_category      varchar(100),
    content_subcategory   varchar(100),
    schedule_cron         varchar(100),
    expected_cadence_days int NOT NULL DEFAULT 30 CHECK (expected_cadence_days > 0),
    interval_sec          int NOT NULL DEFAULT 0 CHECK (interval_sec >= 0),
    enabled               boolean NOT NULL DEFAULT true,
    source                varchar(10) NOT NULL DEFAULT 'admin' CHECK (source IN ('yaml', 'admin')),
    last_crawled_at       timestamptz,
    last_article_time     timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT crawl_target_id_site_key UNIQUE (id, site_id),
    CONSTRAINT crawl_target_dept_same_site FOREIGN KEY (site_department_id, site_id) REFERENCES site_department (id, site_id)
);
CREATE INDEX crawl_target_site_idx ON crawl_target (site_id);
CREATE INDEX crawl_target_site_department_idx ON crawl_target (site_department_id);

CREATE TABLE article (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id             bigint NOT NULL REFERENCES crawl_site (id),
    target_id           bigint NOT NULL REFERENCES crawl_target (id),
    dept_id             bigint,
    native_post_id      varchar(64) CHECK (native_post_id <> ''),
    url                 text NOT NULL,
    url_hash            char(64) NOT NULL CHECK (url_hash ~ '^[0-9a-f]{64}$'),
    title               text NOT NULL DEFAULT '',
    publish_time        timestamptz,
    source_raw          varchar(500),
    channel_name        varchar(200),
    channel_path        varchar(1000),
    content_category    varchar(100),
    content_subcategory varchar(100),
    index_no            varchar(200),
    doc_no              varchar(200),
    publisher           varchar(500),
    publish_date        date,
    effective_date      date,
    topic_words         varchar(500),
    open_category       varchar(200),
    metadata_json       jsonb,
    content_text        text,
    raw_html_path       text,
    text_path           text,
    has_attachment      boolean NOT NULL DEFAULT false,
    status              varchar(20) NOT NULL DEFAULT 'raw' CHECK (status IN ('raw', 'ready', 'failed')),
    status_reason       text,
    fetch_strategy      varchar(50) CHECK (fetch_strategy IN ('httpx', 'playwright')),
    fetched_at          timestamptz NOT NULL,
    exported_to_rag_at  timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    -- rows without native_post_id (NULL) do not take part.
    CONSTRAINT article_site_native_key UNIQUE (site_id, native_post_id),
    CONSTRAINT article_url_hash_key UNIQUE (url_hash),
    CONSTRAINT article_target_same_site FOREIGN KEY (target_id, site_id) REFERENCES crawl_target (id, site_id)
);
CREATE INDEX article_target_idx ON article (target_id);
CREATE INDEX article_export_idx ON article (status, updated_at, id);
CREATE INDEX article_updated_idx ON article (updated_at, id);
CREATE INDEX article_dept_idx ON article (dept_id);

CREATE TABLE attachment (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    article_id    bigint NOT NULL REFERENCES article (id) ON DELETE CASCADE,
    url           text,
    file_name     text NOT NULL DEFAULT '',
    file_ext      varchar(20),
    size_bytes    bigint NOT NULL DEFAULT 0 CHECK (size_bytes >= 0),
    file_path     text,
    file_hash     char(64) CHECK (file_hash ~ '^[0-9a-f]{64}$'),
    downloaded_at timestamptz
);
CREATE INDEX attachment_article_idx ON attachment (article_id);

CREATE TABLE crawl_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id     bigint REFERENCES crawl_site (id),
    target_id   bigint REFERENCES crawl_target (id),
    host        text NOT NULL DEFAULT '',
    article_url text,
    purpose     varchar(20) NOT NULL DEFAULT '',
    method      varchar(10) NOT NULL DEFAULT 'GET',
    strategy    varchar(50) CHECK (strategy IN ('httpx', 'playwright')),
    http_status int,
    bytes       bigint NOT NULL DEFAULT 0,
    duration_ms int,
    success     boolean NOT NULL,
    error_class varchar(50),
    error_msg   text,
    occurred_at timestamptz NOT NULL
);
CREATE INDEX crawl_log_occurred_idx ON crawl_log (occurred_at);
CREATE INDEX crawl_log_host_occurred_idx ON crawl_log (host, occurred_at);
CREATE INDEX crawl_log_target_occurred_idx ON crawl_log (target_id, occurred_at);

CREATE TABLE master_column_registry (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    adapter_id           varchar(50) NOT NULL CHECK (adapter_id <> ''),
    site_id              bigint NOT NULL REFERENCES crawl_site (id),
    column_id            varchar(64) NOT NULL CHECK (column_id <> ''),
    column_name          varchar(500) NOT NULL DEFAULT '',
    column_path          varchar(1000),
    admin_level          varchar(20) NOT NULL CHECK (admin_level IN ('city', 'county', 'township')),
    topic_tags           jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(topic_tags) = 'array'),
    post_count           int NOT NULL DEFAULT 0,
    last_seen_at         timestamptz NOT NULL,
    subscribed_target_id bigint REFERENCES crawl_target (id),
    active               boolean NOT NULL DEFAULT true,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT master_column_registry_key UNIQUE (adapter_id, site_id, column_id)
);
CREATE INDEX master_column_registry_level_idx ON master_column_registry (admin_level, subscribed_target_id);
CREATE INDEX master_column_registry_tags_idx ON master_column_registry USING GIN (topic_tags);

CREATE TABLE url_state (
    url_hash         char(64) PRIMARY KEY CHECK (url_hash ~ '^[0-9a-f]{64}$'),
    url              text NOT NULL,
    etag             text,
    last_modified    text,
    content_hash     text,
    simhash          bigint NOT NULL DEFAULT 0,
    last_checked_at  timestamptz,
    last_changed_at  timestamptz,
    change_intervals jsonb NOT NULL DEFAULT '[]',
    next_check_at    timestamptz
);
CREATE INDEX url_state_next_check_idx ON url_state (next_check_at);

CREATE TABLE host_state (
    host               text PRIMARY KEY CHECK (host <> ''),
    consecutive_errors int NOT NULL DEFAULT 0 CHECK (consecutive_errors >= 0),
    backoff_until      timestamptz,
    breaker_until      timestamptz,
    breaker_trips      jsonb NOT NULL DEFAULT '[]',
    needs_review       boolean NOT NULL DEFAULT false,
    robots_body        bytea,
    robots_status      int NOT NULL DEFAULT 0,
    robots_fetched_at  timestamptz,
    updated_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cookie (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id    bigint REFERENCES crawl_site (id),
    host       text NOT NULL CHECK (host <> ''),
    name       text NOT NULL CHECK (name <> ''),
    value      text NOT NULL DEFAULT '',
    path       text NOT NULL DEFAULT '/',
    source     varchar(10) NOT NULL CHECK (source IN ('browser', 'direct')),
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT cookie_host_name_path_key UNIQUE (host, name, path)
);

-- +goose Down
DROP TABLE cookie;
DROP TABLE host_state;
DROP TABLE url_state;
DROP TABLE master_column_registry;
DROP TABLE crawl_log;
DROP TABLE attachment;
DROP TABLE article;
DROP TABLE crawl_target;
DROP TABLE site_department;
DROP TABLE local_department;
DROP TABLE crawl_site;
