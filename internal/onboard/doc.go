// Package onboard owns the batch onboarding wizard: from a pasted list of
// base URLs it detects each site's CMS adapter, scans a matched site's
// department sub-sites, suggests how each department binds to a local
// department, checks the person's choices and renders one site YAML draft
// per site, plus a zip of them all. It reads the web only through the
// polite fetcher and never writes a configuration file or a configuration
// row: the drafts go to a person for review, and a reviewed draft becomes
// configuration the usual way. The console drives it step by step; every
// step's state is plain data (JSON-friendly) so it can be kept between
// requests.
package onboard
