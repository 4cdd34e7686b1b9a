// Package search owns the full-text search index of a corpus release: one
// SQLite file, written once by Build when the release is made and then only
// read, that answers Chinese (and mixed Chinese, Latin and digit) queries
// exactly and ranks the answers.
//
// SQLite's FTS5 has no Chinese tokenizer, so the index writes the tokens
// itself: every letter or digit of a text as one token and every adjacent
// pair as another, in separate columns, under FTS5's plain "ascii"
// tokenizer (which keeps every non-ASCII byte inside a token and only splits
// on ASCII spaces). A one-character query is a lookup of the single
// character; a longer one is a phrase of its adjacent pairs, which matches
// exactly the documents containing the query. Punctuation, symbols and white
// space are not indexed: 国办发〔2024〕12号 is indexed and looked up as
// 国办发202412号. Title, body and 文号 are indexed; ranking is FTS5's
// bm25() with the title and 文号 weighted above the body, and a query equal
// to a document's whole 文号 puts that document first. See docs/search.md.
package search
