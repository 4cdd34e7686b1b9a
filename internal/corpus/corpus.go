// Package corpus is the governed corpus: intake copies what the crawler
// stored into immutable, content-addressed snapshots and gives it a
// work with a stable id, rights, provenance and QA; releases are
// immutable directories built from the works that may be published, and
// readers, search and RAG read only the active one.
package corpus

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"zhizhi/internal/config/zone"
	"zhizhi/internal/store"
)

// Service does the corpus's work on a store.
type Service struct {
	Store   *store.Store
	Version string // zhizhi's version, written into snapshots and manifests
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Switching, when set, hears that an activation or rollback checked
	// the release's files and now moves the active pointer (the command
	// line says so).
	Switching func(version string)

	mu     sync.Mutex
	opened map[string]*Release // releases opened for reading, by version
}

// New returns a Service on st.
func New(st *store.Store, version string) *Service {
	return &Service{Store: st, Version: version}
}

func (c *Service) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// localNow is now on the display clock (ZHIZHI_TIMEZONE).
func (c *Service) localNow() time.Time { return c.now().In(zone.Display()) }

// newWorkID returns a fresh public work id: "zw" and ten base32 letters
// from the system's random source. Never derived from the content: a
// work keeps its id when its text changes.
func newWorkID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("corpus: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return "zw" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])[:10])
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
