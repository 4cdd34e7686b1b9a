-- +goose Up
-- A site's request to take its cards down. Recorded when it arrives (the
-- 48-hour clock starts then) and executed by freezing the cards it names:
-- hidden from the portal, never deleted. scope 'site' freezes every card of
-- the site, present and future; 'urls' the cards of the listed pages.
CREATE TABLE takedown (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id      bigint NOT NULL REFERENCES crawl_site (id),
    scope        varchar(10) NOT NULL CHECK (scope IN ('site', 'urls')),
    urls         jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(urls) = 'array'),
    requester    varchar(200) NOT NULL CHECK (requester <> ''),
    contact      varchar(200) NOT NULL DEFAULT '',
    reason       varchar(2000) NOT NULL DEFAULT '',
    received_at  timestamptz NOT NULL,
    deadline_at  timestamptz NOT NULL,
    recorded_by  varchar(200) NOT NULL CHECK (recorded_by <> ''),
    frozen_at    timestamptz,
    frozen_by    varchar(200),
    cards_frozen integer NOT NULL DEFAULT 0 CHECK (cards_frozen >= 0),
    receipt      varchar(100),
    CONSTRAINT takedown_receipt_key UNIQUE (receipt)
);
CREATE INDEX takedown_site_idx ON takedown (site_id, scope, frozen_at);
CREATE INDEX takedown_open_idx ON takedown (frozen_at, deadline_at);

-- One summary card per article, for both access policies: what the public
-- portal shows. summary is a cut of the source's own sentences (or a
-- person's rewrite, rewritten_by set); auto_summary keeps the machine's cut
-- beside a rewrite. simhash is the 64-bit fingerprint of the summarised
-- text, stored as the signed integer with the same bits.
CREATE TABLE summary_card (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    article_id   bigint NOT NULL REFERENCES article (id) ON DELETE CASCADE,
    site_id      bigint NOT NULL REFERENCES crawl_site (id),
    title        varchar(1000) NOT NULL,
    summary      varchar(300) NOT NULL DEFAULT '',
    auto_summary varchar(300) NOT NULL DEFAULT '',
    source_url   text NOT NULL CHECK (source_url <> ''),
    publish_time timestamptz,
    simhash      bigint NOT NULL,
    source_dna   varchar(128) NOT NULL CHECK (source_dna <> ''),
    fetched_at   timestamptz NOT NULL,
    anchors      jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(anchors) = 'array'),
    covered      integer NOT NULL DEFAULT 0 CHECK (covered >= 0),
    sigma        double precision NOT NULL CHECK (sigma >= 0 AND sigma <= 1),
    relevance    integer NOT NULL CHECK (relevance >= 0 AND relevance <= 64),
    grade        varchar(10) NOT NULL CHECK (grade IN ('green', 'yellow', 'red')),
    -- What a person's rewrite is graded by once the source text is gone: the
    -- simhash of the source's first and last paragraphs, and its length cap.
    reference_simhash bigint NOT NULL DEFAULT 0,
    summary_limit integer NOT NULL DEFAULT 300 CHECK (summary_limit >= 0 AND summary_limit <= 300),
    rewritten_by varchar(200),
    rewritten_at timestamptz,
    duplicate_of bigint REFERENCES summary_card (id),
    takedown_id  bigint REFERENCES takedown (id),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT summary_card_article_key UNIQUE (article_id)
);
CREATE INDEX summary_card_site_idx ON summary_card (site_id);
CREATE INDEX summary_card_portal_idx ON summary_card (publish_time, id);
CREATE INDEX summary_card_grade_idx ON summary_card (grade, updated_at);
CREATE INDEX summary_card_takedown_idx ON summary_card (takedown_id);

-- +goose Down
DROP TABLE summary_card;
DROP TABLE takedown;
