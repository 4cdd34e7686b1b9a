// Package acquire owns the acquisition API: one page fetched now, on a
// caller's request, answered as an Acquisition Result (the raw bytes kept
// and named by their SHA-256, a normalized representation and its hash,
// source and final URL, provider, fetch time, metadata and bounded
// evidence of what was done) inside the envelope Firecrawl's clients read
// ({success, data: {markdown, html, links, metadata}}), so their SDKs work
// against zhizhi by changing only the base URL. Every request goes through
// fetch.Client, the crawler's polite client: no option of the API loosens
// robots.txt, the host's bucket, the breaker, the SSRF guard or the limits.
// Fetched content is marked untrusted; nothing in it changes what the API
// does. Authentication is put in front of the handler by the server.
package acquire
