package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"zhizhi/internal/corpus"
	"zhizhi/internal/corpus/warc"
)

// cdxCache keeps the CDX index of the releases asked about: a release
// never changes, so its index is built once, from its snapshots' WARCs.
type cdxCache struct {
	mu      sync.Mutex
	entries map[string][]warc.CDXEntry // by release version
}

// cdxGet answers GET /cdx as the Wayback CDX server does (url, matchType,
// from, to, limit, output, fl; unknown parameters ignored) over the
// snapshots of the active release, or of the verified release named by
// release=. Each capture is a response record of a snapshot's WARC; its
// filename is the WARC's blob path in the store. It needs the read scope,
// like every other GET: the index names every page the corpus copied.
func (h *handler) cdxGet(w http.ResponseWriter, r *http.Request) {
	if !h.needCorpus(w, r) {
		return
	}
	v := r.URL.Query()
	cq, err := warc.ParseCDXQuery(v)
	if err != nil {
		h.fail(w, r, invalid("%v", err))
		return
	}
	version := v.Get("release")
	if version != "" {
		if err := versionOf("query parameter \"release\"", version); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	ctx := r.Context()
	rel, err := h.releaseFor(ctx, version)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	all, err := h.cdxEntries(ctx, rel)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	found, err := warc.Query(all, cq)
	if err != nil {
		h.fail(w, r, invalid("%v", err))
		return
	}
	var b bytes.Buffer
	if err := warc.WriteCDXServer(&b, found, cq.Output, cq.Fields...); err != nil {
		h.fail(w, r, invalid("%v", err))
		return
	}
	hdr := w.Header()
	if cq.Output == "json" {
		hdr.Set("Content-Type", "application/json; charset=utf-8")
	} else {
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
	}
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Zhizhi-Release", rel.Version)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}

// cdxEntries indexes the response records of every snapshot of rel (each
// WARC read once and verified), cached per release.
func (h *handler) cdxEntries(ctx context.Context, rel *corpus.Release) ([]warc.CDXEntry, error) {
	h.cdx.mu.Lock()
	defer h.cdx.mu.Unlock()
	if e, ok := h.cdx.entries[rel.Version]; ok {
		return e, nil
	}
	var out []warc.CDXEntry
	seen := map[string]bool{}
	for i := range rel.Entries {
		id := rel.Entries[i].Snapshot
		if seen[id] {
			continue
		}
		seen[id] = true
		snap, err := h.st.CorpusSnapshot(ctx, id)
		if err != nil {
			return nil, err
		}
		rc, err := h.st.Blobs().Open(ctx, snap.WARCPath)
		if err != nil {
			return nil, fmt.Errorf("cdx: snapshot %s: %w", id, err)
		}
		recs, err := warc.Verify(rc)
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
		}
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("cdx: snapshot %s (%s): %w", id, snap.WARCPath, err)
		}
		for _, rec := range recs {
			if rec.Type == "response" || rec.Type == "resource" || rec.Type == "revisit" {
				out = append(out, warc.NewCDXEntry(rec, snap.WARCPath))
			}
		}
	}
	if h.cdx.entries == nil || len(h.cdx.entries) >= 4 {
		h.cdx.entries = map[string][]warc.CDXEntry{}
	}
	h.cdx.entries[rel.Version] = out
	return out, nil
}
