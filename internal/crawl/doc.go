// Package crawl is the collection pipeline: for each target
// it reads the list pages (template selectors or the gkmlpt API), fetches
// new and changed details politely, parses them into the normalized Article
// of the output contract, inherits department and channel from the target, and
// stores articles, attachments and blobs. Fetching, politeness and logging
// belong to internal/fetch; parsing to internal/adapter.
package crawl
