-- +goose Up
-- A site's request to take its cards down. Recorded when it arrives (the
-- 48-hour clock starts then) and executed by freezing the cards it names:
-- hidden from the portal, never deleted. scope 'site' freezes every card of
-- the site, present and future; 'urls' the cards of the listed pages.
CREATE TABLE takedown (
    id           INTEGER PRIMARY KEY,
    site_id      INTEGER NOT NULL REFERENCES crawl_site (id),
    scope        TEXT NOT NULL CHECK (scope IN ('site', 'urls')),
    urls         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(urls) AND json_type(urls) = 'array'),
    requester    TEXT NOT NULL CHECK (requester <> '' AND length(requester) <= 200),
    contact      TEXT NOT NULL DEFAULT '' CHECK (length(contact) <= 200),
    reason       TEXT NOT NULL DEFAULT '' CHECK (length(reason) <= 2000),
    received_at  TEXT NOT NULL,
    deadline_at  TEXT NOT NULL,
    recorded_by  TEXT NOT NULL CHECK (recorded_by <> '' AND length(recorded_by) <= 200),
    frozen_at    TEXT,
    frozen_by    TEXT CHECK (length(frozen_by) <= 200),
    cards_frozen INTEGER NOT NULL DEFAULT 0 CHECK (cards_frozen >= 0),
    receipt      TEXT CHECK (length(receipt) <= 100),
    CONSTRAINT takedown_receipt_key UNIQUE (receipt)
) STRICT;
CREATE INDEX takedown_site_idx ON takedown (site_id, scope, frozen_at);
CREATE INDEX takedown_open_idx ON takedown (frozen_at, deadline_at);

-- One summary card per article, for both access policies: what the public
-- portal shows. summary is a cut of the source's own sentences (or a
-- person's rewrite, rewritten_by set); auto_summary keeps the machine's cut
-- beside a rewrite. simhash is the 64-bit fingerprint of the summarised
-- text, stored as the signed integer with the same bits.
CREATE TABLE summary_card (
    id           INTEGER PRIMARY KEY,
    article_id   INTEGER NOT NULL REFERENCES article (id) ON DELETE CASCADE,
    site_id      INTEGER NOT NULL REFERENCES crawl_site (id),
    title        TEXT NOT NULL CHECK (length(title) <= 1000),
    summary      TEXT NOT NULL DEFAULT '' CHECK (length(summary) <= 300),
    auto_summary TEXT NOT NULL DEFAULT '' CHECK (length(auto_summary) <= 300),
    source_url   TEXT NOT NULL CHECK (source_url <> ''),
    publish_time TEXT,
    simhash      INTEGER NOT NULL,
    source_dna   TEXT NOT NULL CHECK (source_dna <> ''),
    fetched_at   TEXT NOT NULL,
    anchors      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(anchors) AND json_type(anchors) = 'array'),
    covered      INTEGER NOT NULL DEFAULT 0 CHECK (covered >= 0),
    sigma        REAL NOT NULL CHECK (sigma >= 0 AND sigma <= 1),
    relevance    INTEGER NOT NULL CHECK (relevance >= 0 AND relevance <= 64),
    grade        TEXT NOT NULL CHECK (grade IN ('green', 'yellow', 'red')),
    -- What a person's rewrite is graded by once the source text is gone: the
    -- simhash of the source's first and last paragraphs, and its length cap.
    reference_simhash INTEGER NOT NULL DEFAULT 0,
    summary_limit INTEGER NOT NULL DEFAULT 300 CHECK (summary_limit >= 0 AND summary_limit <= 300),
    rewritten_by TEXT CHECK (length(rewritten_by) <= 200),
    rewritten_at TEXT,
    duplicate_of INTEGER REFERENCES summary_card (id),
    takedown_id  INTEGER REFERENCES takedown (id),
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    CONSTRAINT summary_card_article_key UNIQUE (article_id)
) STRICT;
CREATE INDEX summary_card_site_idx ON summary_card (site_id);
CREATE INDEX summary_card_portal_idx ON summary_card (publish_time, id);
CREATE INDEX summary_card_grade_idx ON summary_card (grade, updated_at);
CREATE INDEX summary_card_takedown_idx ON summary_card (takedown_id);

-- +goose Down
DROP TABLE summary_card;
DROP TABLE takedown;
