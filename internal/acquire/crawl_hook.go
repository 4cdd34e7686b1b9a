package acquire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"zhizhi/internal/store"
)

// hookTimeout bounds one webhook post; a receiver that does not answer in
// time misses the event (the job does not wait for it).
const hookTimeout = 10 * time.Second

// hookEvent is what a webhook receives, in Firecrawl's shape.
type hookEvent struct {
	Success  bool              `json:"success"`
	Type     string            `json:"type"` // crawl.started, crawl.page, crawl.completed, crawl.failed
	ID       string            `json:"id"`
	Data     []json.RawMessage `json:"data"`
	Metadata json.RawMessage   `json:"metadata,omitempty"`
	Error    string            `json:"error,omitempty"`
}

// hook posts event to the job's webhook, if it asked for it. The post goes
// through the SSRF guard (every connection judged at dial time, no
// redirects followed): a webhook reaches only where a fetch may.
func (a *API) hook(ctx context.Context, job *store.CrawlJob, h *webhook, event string, data []json.RawMessage, msg string) {
	if !h.wants(event) {
		return
	}
	if data == nil {
		data = []json.RawMessage{}
	}
	body, err := json.Marshal(hookEvent{Success: event != EventFailed, Type: "crawl." + event, ID: job.ID, Data: data,
		Metadata: h.Metadata, Error: msg})
	if err != nil {
		return
	}
	err = a.postHook(ctx, h, body)
	if err != nil {
		a.d.Logger.Warn("acquire crawl: webhook not delivered", "job", job.ID, "event", event, "error", err)
	}
}

func (a *API) postHook(ctx context.Context, h *webhook, body []byte) error {
	u, err := url.Parse(h.URL)
	if err != nil {
		return err
	}
	guard := a.d.Client.Guard()
	if err := guard.CheckURL(u); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range h.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", a.d.Client.UserAgent())
	client := &http.Client{
		Transport: &http.Transport{DialContext: guard.DialContext, DisableKeepAlives: true,
			ResponseHeaderTimeout: hookTimeout},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("a webhook's redirect is not followed")
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errors.New("the receiver answered " + resp.Status)
	}
	return nil
}
