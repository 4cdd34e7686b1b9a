-- +goose Up
-- The governed corpus. What the crawler stored changes under its readers;
-- what enters the corpus is copied (copy-on-ingest) into immutable,
-- content-addressed objects and becomes a work with a stable identity,
-- rights, provenance and QA. Readers, search and RAG read a release.

-- A site's rights profile for the corpus: public_info (政府信息公开: may be
-- published in a release), reference (参考: kept, never released), unknown
-- (the default: held back until a person decides).
ALTER TABLE crawl_site ADD COLUMN corpus_rights TEXT NOT NULL DEFAULT 'unknown'
    CHECK (corpus_rights IN ('public_info', 'reference', 'unknown'));

-- One copied exchange: the WARC file (request, response, metadata
-- records), the normalized text and the manifest, each a blob named by its
-- SHA-256. The same raw bytes and text twice are one snapshot (the unique
-- key), whoever asks and whenever.
CREATE TABLE corpus_snapshot (
    id              TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 64),
    raw_sha256      TEXT NOT NULL CHECK (length(raw_sha256) = 64),
    text_sha256     TEXT NOT NULL CHECK (length(text_sha256) = 64),
    warc_path       TEXT NOT NULL,
    warc_sha256     TEXT NOT NULL CHECK (length(warc_sha256) = 64),
    text_path       TEXT NOT NULL,
    manifest_path   TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL CHECK (length(manifest_sha256) = 64),
    source_url      TEXT NOT NULL CHECK (source_url <> '' AND length(source_url) <= 4096),
    fetched_at      timestamptz NOT NULL,
    provider        TEXT NOT NULL CHECK (length(provider) <= 50),
    crawl_log_id    bigint,
    robots          TEXT NOT NULL CHECK (length(robots) <= 50),
    access          TEXT NOT NULL CHECK (access IN ('full', 'summary')),
    rights          TEXT NOT NULL CHECK (rights IN ('public_info', 'reference', 'unknown')),
    created_at      timestamptz NOT NULL,
    UNIQUE (raw_sha256, text_sha256)
);

-- A work: a stable public id (never derived from the content), its source
-- locator and its current revision. status: active, or held (the reason
-- says why it cannot be released), frozen (a takedown at the source),
-- quarantined (a person's decision), merged (a person decided it is the
-- same work as merged_into; never done by the system).
CREATE TABLE corpus_work (
    id            TEXT NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 8 AND 40),
    source_url    TEXT NOT NULL CHECK (source_url <> '' AND length(source_url) <= 4096),
    site_id       bigint REFERENCES crawl_site (id),
    article_id    bigint UNIQUE REFERENCES article (id) ON DELETE SET NULL,
    current_rev   INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'frozen', 'quarantined', 'merged')),
    status_reason TEXT NOT NULL DEFAULT '',
    merged_into   TEXT REFERENCES corpus_work (id),
    review        TEXT NOT NULL DEFAULT 'none' CHECK (review IN ('none', 'pending', 'approved', 'rejected')),
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX corpus_work_site ON corpus_work (site_id);

-- Other names a work answers to: its source URLs over time, an article id.
CREATE TABLE corpus_alias (
    alias    TEXT NOT NULL PRIMARY KEY CHECK (alias <> '' AND length(alias) <= 4200),
    work_id  TEXT NOT NULL REFERENCES corpus_work (id),
    created_at timestamptz NOT NULL
);
CREATE INDEX corpus_alias_work ON corpus_alias (work_id);

-- A revision: new content is a new revision (and hash) of the same work.
-- qa is 'pass' or 'fail' with the failed checks in qa_json.
CREATE TABLE corpus_revision (
    work_id      TEXT NOT NULL REFERENCES corpus_work (id),
    rev          INTEGER NOT NULL CHECK (rev >= 1),
    snapshot_id  TEXT NOT NULL REFERENCES corpus_snapshot (id),
    text_sha256  TEXT NOT NULL CHECK (length(text_sha256) = 64),
    simhash      bigint NOT NULL DEFAULT 0,
    title        TEXT NOT NULL,
    doc_no       TEXT NOT NULL DEFAULT '',
    publisher    TEXT NOT NULL DEFAULT '',
    attrs_json   TEXT NOT NULL,
    chars        INTEGER NOT NULL CHECK (chars >= 0),
    qa           TEXT NOT NULL CHECK (qa IN ('pass', 'fail')),
    qa_json      TEXT NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (work_id, rev)
);
CREATE INDEX corpus_revision_text ON corpus_revision (text_sha256);
CREATE INDEX corpus_revision_snapshot ON corpus_revision (snapshot_id);
CREATE INDEX corpus_revision_doc_no ON corpus_revision (doc_no) WHERE doc_no <> '';
CREATE INDEX corpus_revision_title ON corpus_revision (title);

-- Provenance: one event per step (intake, normalize, qa, rights, review,
-- release, takedown, ...), append only: the triggers refuse an update or a
-- delete. evidence names the row or object behind the step
-- ("crawl_log:12", "snapshot:<sha>", "release:2026.12.06-1").
CREATE TABLE corpus_event (
    id        bigserial PRIMARY KEY,
    work_id   TEXT NOT NULL REFERENCES corpus_work (id),
    rev       INTEGER NOT NULL DEFAULT 0,
    kind      TEXT NOT NULL CHECK (kind IN ('intake', 'normalize', 'qa', 'rights', 'review', 'release', 'takedown', 'candidate', 'status')),
    actor     TEXT NOT NULL CHECK (actor <> '' AND length(actor) <= 100),
    detail    TEXT NOT NULL DEFAULT '',
    evidence  TEXT NOT NULL DEFAULT '',
    at        timestamptz NOT NULL
);
CREATE INDEX corpus_event_work ON corpus_event (work_id, id);
-- +goose StatementBegin
CREATE FUNCTION corpus_event_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'corpus_event is append-only';
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER corpus_event_no_update BEFORE UPDATE ON corpus_event
    FOR EACH ROW EXECUTE FUNCTION corpus_event_append_only();
CREATE TRIGGER corpus_event_no_delete BEFORE DELETE ON corpus_event
    FOR EACH ROW EXECUTE FUNCTION corpus_event_append_only();

-- Duplicate candidates, found by the system and decided by people only:
-- exact (same text), near (simhash within 3 bits and the same document
-- named), biblio (same 文号 and 发布机构). work_a < work_b.
CREATE TABLE corpus_candidate (
    id          bigserial PRIMARY KEY,
    work_a      TEXT NOT NULL REFERENCES corpus_work (id),
    work_b      TEXT NOT NULL REFERENCES corpus_work (id),
    kind        TEXT NOT NULL CHECK (kind IN ('exact', 'near', 'biblio')),
    distance    INTEGER NOT NULL DEFAULT 0,
    detail      TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'same', 'different')),
    decided_by  TEXT NOT NULL DEFAULT '',
    decided_at  timestamptz,
    created_at  timestamptz NOT NULL,
    CHECK (work_a COLLATE "C" < work_b COLLATE "C"),
    UNIQUE (work_a, work_b, kind)
);
CREATE INDEX corpus_candidate_open ON corpus_candidate (status, id);

-- Intake rules a person configured: every ready article of these targets
-- (all when empty) of full-access sites enters the corpus when stored.
CREATE TABLE corpus_intake_rule (
    id          bigserial PRIMARY KEY,
    name        TEXT NOT NULL CHECK (name <> '' AND length(name) <= 200),
    target_codes TEXT NOT NULL DEFAULT '[]',
    enabled     boolean NOT NULL DEFAULT true,
    created_by  TEXT NOT NULL,
    created_at  timestamptz NOT NULL,
    last_run_at timestamptz,
    last_added  INTEGER NOT NULL DEFAULT 0
);

-- Releases: immutable directories (and blobs) built from the works that
-- pass rights, QA and review. manifest_sha256 pins the manifest, which
-- pins every file.
CREATE TABLE corpus_release (
    version         TEXT NOT NULL PRIMARY KEY CHECK (version <> '' AND length(version) <= 40),
    state           TEXT NOT NULL CHECK (state IN ('built', 'verified', 'failed')),
    works           INTEGER NOT NULL DEFAULT 0,
    held            INTEGER NOT NULL DEFAULT 0,
    manifest_path   TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL CHECK (length(manifest_sha256) = 64),
    built_by        TEXT NOT NULL,
    built_at        timestamptz NOT NULL,
    verified_at     timestamptz,
    verify_error    TEXT NOT NULL DEFAULT ''
);

-- A release's files, each also a blob, so that every machine of a
-- PostgreSQL deployment can materialize the release from the database.
CREATE TABLE corpus_release_file (
    version    TEXT NOT NULL REFERENCES corpus_release (version),
    path       TEXT NOT NULL CHECK (path <> '' AND length(path) <= 200),
    blob_path  TEXT NOT NULL,
    sha256     TEXT NOT NULL CHECK (length(sha256) = 64),
    bytes      bigint NOT NULL CHECK (bytes >= 0),
    PRIMARY KEY (version, path)
);

-- The active release: one row, moved in one statement.
CREATE TABLE corpus_active (
    id            INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    version       TEXT NOT NULL REFERENCES corpus_release (version),
    previous      TEXT REFERENCES corpus_release (version),
    activated_by  TEXT NOT NULL,
    activated_at  timestamptz NOT NULL
);

-- Intake names the crawl_log row a snapshot came from.
CREATE INDEX crawl_log_article_url ON crawl_log (article_url) WHERE article_url IS NOT NULL;

-- +goose Down
DROP TABLE corpus_active;
DROP TABLE corpus_release_file;
DROP TABLE corpus_release;
DROP TABLE corpus_intake_rule;
DROP TABLE corpus_candidate;
DROP TABLE corpus_event;
DROP FUNCTION corpus_event_append_only();
DROP TABLE corpus_revision;
DROP TABLE corpus_alias;
DROP TABLE corpus_work;
DROP TABLE corpus_snapshot;
DROP INDEX crawl_log_article_url;
ALTER TABLE crawl_site DROP COLUMN corpus_rights;
