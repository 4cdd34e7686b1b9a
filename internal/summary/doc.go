// Package summary makes an article's summary card: a short extractive
// summary, the anchors it is judged on, its σ and relevance, its grade, and
// the fingerprints (simhash, source DNA) that tie the card to the version of
// the page it came from. It reads text and returns values; storing cards and
// crawling pages belong to other packages.
//
// # The summary
//
// A summary is at most 300 characters, or a tenth of the original when that
// is less, counted in characters (runes). For a summary-access site the
// original is the head of the page that was read, not the page the site
// would have sent. The summary is extractive: whole sentences of the source,
// in source order, never a word added, changed or reordered. A sentence ends
// at 。！？； (or their ASCII forms), with any closing quotes, or at a line
// break; white space around it is trimmed. Sentences follow each other
// directly after 。！？； and on a new line otherwise, so that splitting a
// summary at those marks and line breaks gives back pieces of the source.
// The last sentence may be cut to fit the budget; it then ends with "…" and
// is cut at a clause mark (，、：) where one falls in the second half of the
// room, else anywhere that splits no date, number, document number, other
// anchor or word. A head shorter than 4 characters is not worth a cut. A
// sentence never appears twice.
//
// Sentences are chosen to cover the core anchors. Four ways of choosing are
// tried — the most new anchors per character, anchor by anchor from the most
// salient (cheapest or nearest the opening and close), and reading from the
// start as a person writing a lead would — and the one covering the most
// core anchors wins, then the one passing the relevance check, then the one
// nearest the first and last paragraphs. Anchors that no whole sentence can
// carry any more may be carried by a cut head of a later sentence. Budget
// left over is filled with prose sentences (those ending in an end mark),
// those nearest the first and last paragraphs first, each as long as the
// summary stays within the relevance gate or comes nearer those paragraphs;
// then with the cut head of one more.
//
// # Anchors
//
// Anchors are the facts a summary should keep, as written in the source with
// white space removed:
//
//   - dates: 2024年3月5日, 2024-03-05, 2024/3/5, 2024.3.5, 二〇二四年三月五日,
//     2024年3月, 3月5日, and a year alone (2027年); a month above 12 or a day
//     above 31 is not a date;
//   - numbers with a unit: money (12.5亿元, 300万元), shares (15%, 3个百分点),
//     areas and lengths (2000平方米), counts (3个, 120人, 10个工作日) and the
//     like; a number with no unit (a telephone number, a postcode) is not an
//     anchor;
//   - document numbers: an issuer's short name, a year in brackets and a
//     number (穗府办〔2024〕3号, 粤府函[2023]12号);
//   - organisations: a run of Chinese characters ending in 人民政府, 委员会,
//     办公室, 局, 中心 and the like, read back from that ending to the nearest
//     word that cannot be part of a name (根据, 经, 由, 的 …). An ending that
//     also ends common words (局 of 格局, 部 of 部署, 政府 of 形成政府引导)
//     needs a place or level of government in the name (市, 县, 省, 国家 …).
//     A law's title in 《》 is one anchor; the names inside it are not;
//   - key terms: the titles of laws and documents cited in 《》, and the
//     phrases of the article's title that its body repeats at least twice
//     outside other anchors (the subject, in the document's own words), the
//     one covering most of the body first; words that name a kind of
//     document (通知, 实施方案) are not terms. Without a title, the text's own
//     most repeated phrases of 4 to 10 characters stand in (at most three).
//
// # Core anchors and σ
//
// A summary a tenth as long as its source cannot keep every fact of it, so σ
// is measured against a bounded, ranked set: the core anchors, the most
// salient N, with N one per 30 characters of the summary's budget (about a
// clause of a government document, enough for an anchor and the words
// around it), at least 1 and at most 10 — 10 for a full 300-character
// summary, 1 for a 30-character one. Salience is by kind first: the
// document number; then the subject (title terms); then an organisation or
// term the title names; then full dates; then organisations, cited laws
// and (without a title) repeated phrases; then numbers; then a month; then
// a year alone. Within a kind, anchors
// first found in the first or last paragraph come first, then the most
// frequent, then the earliest.
//
// σ is the share of core anchors the summary contains (white space ignored).
// A source with no anchor at all has σ 0: there is nothing a summary could
// be checked against, and an unchecked summary is not shown — such a card
// shows title and link only.
//
// # Relevance
//
// Relevance is the Hamming distance between the simhash of the summary and
// the simhash of the source's first and last paragraphs. A paragraph here is
// a line of running prose — one with 。！？ in it — so a salutation, a
// heading, a table row or a signature does not stand in for the opening or
// the close; a text with no such line uses its first and last non-empty
// lines. A summary passes at 20 bits of 64 or fewer.
//
// # Grades
//
//   - green (indexed): σ ≥ 0.85 and relevance ≤ 20;
//   - yellow (waits for a person's rewrite): 0.70 ≤ σ < 0.85, or σ ≥ 0.85
//     with relevance above 20;
//   - red (title and link only): σ < 0.70, or no summary at all.
//
// A person's rewrite (Rewrite) is held to the same length cap and the same
// gates, against the same core anchors and paragraphs; it may use the
// person's own words.
//
// # Fingerprints
//
// Simhash is 64 bits over tokens: each run of CJK characters as overlapping
// bigrams (a single character alone), each word of letters or digits
// lower-cased. Tokens are hashed with FNV-1a 64 and murmur3's finalizer, so
// the value is the same in every process and release. A card's Simhash is
// that of its source text. SourceDNA is the hex SHA-256 of the canonical
// source URL and the exact text summarised, so a reader can tell which
// version of which page a card came from.
package summary
