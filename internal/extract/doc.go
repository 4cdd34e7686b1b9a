// Package extract turns parsed HTML into the fields of an article: the
// public-attribute block (公开属性) in any of the shapes real portals use,
// dates in their many spellings, readable body text, and normalized URLs.
// It knows nothing of sites or fetching; adapters call it.
package extract
