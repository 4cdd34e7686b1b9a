-- +goose Up
-- The day seal: each calendar day (Asia/Shanghai) of the two ledgers — the
-- crawler's requests and the per-card tallies of human readers — is copied
-- here once the day is over, with the Merkle tree hashes that prove each
-- record's place, and chained to the day before by a signed head. Rows are
-- only ever added; `zhizhi audit verify` finds any later change.

-- The one signing key (id is always 1), so that every process sharing the
-- database signs with the same key. Keys are encoded as text by Go's
-- golang.org/x/mod/sumdb/note.
CREATE TABLE ledger_key (
    id           int PRIMARY KEY CHECK (id = 1),
    signer_key   text NOT NULL CHECK (signer_key <> ''),
    verifier_key text NOT NULL CHECK (verifier_key <> ''),
    created_at   timestamptz NOT NULL
);

-- Hashes are lower-case hex of 32 bytes; a day with no records has the
-- empty tree's root (SHA-256 of nothing, as RFC 6962 defines it).
CREATE TABLE ledger_day (
    day           date PRIMARY KEY,
    prev_head     text NOT NULL CHECK (prev_head ~ '^[0-9a-f]{64}$'),
    human_count   bigint NOT NULL CHECK (human_count >= 0),
    human_root    text NOT NULL CHECK (human_root ~ '^[0-9a-f]{64}$'),
    crawler_count bigint NOT NULL CHECK (crawler_count >= 0),
    crawler_root  text NOT NULL CHECK (crawler_root ~ '^[0-9a-f]{64}$'),
    head          text NOT NULL CHECK (head ~ '^[0-9a-f]{64}$'),
    note          text NOT NULL CHECK (note <> ''),
    sealed_at     timestamptz NOT NULL
);

-- One canonical JSON line per record, seq counting from 0 within a day's
-- ledger.
CREATE TABLE ledger_record (
    day    date NOT NULL REFERENCES ledger_day (day),
    ledger varchar(10) NOT NULL CHECK (ledger IN ('human', 'crawler')),
    seq    bigint NOT NULL CHECK (seq >= 0),
    data   text NOT NULL,
    PRIMARY KEY (day, ledger, seq)
);

-- The stored hashes of each day's tree (tlog's numbering), from which an
-- inclusion proof for any record is read.
CREATE TABLE ledger_hash (
    day    date NOT NULL REFERENCES ledger_day (day),
    ledger varchar(10) NOT NULL CHECK (ledger IN ('human', 'crawler')),
    idx    bigint NOT NULL CHECK (idx >= 0),
    hash   text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
    PRIMARY KEY (day, ledger, idx)
);

-- +goose Down
DROP TABLE ledger_hash;
DROP TABLE ledger_record;
DROP TABLE ledger_day;
DROP TABLE ledger_key;
