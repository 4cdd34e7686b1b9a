package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"zhizhi/internal/config"
)

// defaultClient delivers when the Alerter has none: a webhook that hangs
// must not hold a delivery job for long.
var defaultClient = &http.Client{Timeout: 10 * time.Second}

// DeliveryError is a message a webhook did not take. Retry says whether
// sending it again later may work (the network, a 5xx or 429, a rate
// limit) or not (a wrong address, a bad signature, a malformed message).
type DeliveryError struct {
	Webhook string
	Status  int // HTTP status; 0 when no answer came
	Code    int // Feishu's code or WeCom's errcode when the answer had one
	Retry   bool
	// NotSent says the message certainly did not reach the group: it was
	// never posted, or the webhook answered with a refusal. Otherwise
	// (no answer, an answer that cannot be read) it may have arrived.
	NotSent bool
	Err     error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("deliver alert to webhook %s: %v", e.Webhook, e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// Retryable reports whether a delivery that failed with err may succeed
// if tried again later.
func Retryable(err error) bool {
	var de *DeliveryError
	if errors.As(err, &de) {
		return de.Retry
	}
	return err != nil
}

// Feishu answers these codes when its bot is rate limited: try later.
var feishuRateLimited = map[int]bool{11232: true, 230020: true}

// WeCom answers these when it is busy or the robot is rate limited.
var wecomRetryable = map[int]bool{-1: true, 45009: true}

// Deliver sends n to w and checks the answer: a status other than 2xx,
// or Feishu's code / WeCom's errcode other than 0, is a *DeliveryError
// saying whether to retry.
func Deliver(ctx context.Context, w config.Webhook, n Notification) error {
	return deliver(ctx, defaultClient, time.Now(), w, n)
}

func deliver(ctx context.Context, client *http.Client, now time.Time, w config.Webhook, n Notification) error {
	fail := func(status, code int, retry bool, format string, args ...any) error {
		return &DeliveryError{Webhook: w.Name, Status: status, Code: code, Retry: retry, Err: fmt.Errorf(format, args...)}
	}
	refused := func(status, code int, retry bool, format string, args ...any) error {
		err := fail(status, code, retry, format, args...)
		err.(*DeliveryError).NotSent = true
		return err
	}
	body, err := Payload(w, n, now)
	if err != nil {
		return refused(0, 0, false, "%w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return refused(0, 0, false, "bad webhook address")
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if w.Kind == config.WebhookJSON && w.Secret != "" {
		mac := hmac.New(sha256.New, []byte(w.Secret))
		mac.Write(body)
		req.Header.Set("X-Zhizhi-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := client.Do(req)
	if err != nil {
		// The address is a credential: say what failed without it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fail(0, 0, true, "post: %v", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	statusRetry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	switch w.Kind {
	case config.WebhookFeishu:
		var a struct {
			Code       *int   `json:"code"`
			Msg        string `json:"msg"`
			StatusCode *int   `json:"StatusCode"`
		}
		parsed := json.Unmarshal(answer, &a) == nil
		code := 0
		switch {
		case parsed && a.Code != nil:
			code = *a.Code
		case parsed && a.StatusCode != nil:
			code = *a.StatusCode
		}
		if !ok || code != 0 {
			return refused(resp.StatusCode, code, statusRetry || feishuRateLimited[code],
				"feishu answered HTTP %d, code %d: %s", resp.StatusCode, code, snippet(a.Msg, answer))
		}
		if !parsed || (a.Code == nil && a.StatusCode == nil) {
			return fail(resp.StatusCode, 0, true, "feishu answered HTTP %d without its result: %s", resp.StatusCode, snippet("", answer))
		}
	case config.WebhookWeCom:
		var a struct {
			ErrCode *int   `json:"errcode"`
			ErrMsg  string `json:"errmsg"`
		}
		parsed := json.Unmarshal(answer, &a) == nil && a.ErrCode != nil
		code := 0
		if parsed {
			code = *a.ErrCode
		}
		if !ok || code != 0 {
			return refused(resp.StatusCode, code, statusRetry || wecomRetryable[code],
				"wecom answered HTTP %d, errcode %d: %s", resp.StatusCode, code, snippet(a.ErrMsg, answer))
		}
		if !parsed {
			return fail(resp.StatusCode, 0, true, "wecom answered HTTP %d without its result: %s", resp.StatusCode, snippet("", answer))
		}
	default:
		if !ok {
			return refused(resp.StatusCode, 0, statusRetry, "answered HTTP %d: %s", resp.StatusCode, snippet("", answer))
		}
	}
	return nil
}

// snippet is msg, else the start of the raw answer, for an error message.
func snippet(msg string, raw []byte) string {
	if msg != "" {
		return msg
	}
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 200 {
		s = truncateUTF8(s, 200) + "…"
	}
	if s == "" {
		return "(empty answer)"
	}
	return s
}

// Payload is the body posted to w for n, in the shape w's kind documents;
// now stamps Feishu's signature.
func Payload(w config.Webhook, n Notification, now time.Time) ([]byte, error) {
	switch w.Kind {
	case config.WebhookFeishu:
		return feishuPayload(w, n, now)
	case config.WebhookWeCom:
		return wecomPayload(w, n)
	case config.WebhookJSON:
		return json.Marshal(n)
	}
	return nil, fmt.Errorf("unknown webhook kind %q", w.Kind)
}

// FeishuSign is the signature of a Feishu custom bot with signature
// checking on: HMAC-SHA256 keyed with "timestamp\nsecret" over an empty
// message, in base64. timestamp is in seconds.
func FeishuSign(timestamp int64, secret string) string {
	mac := hmac.New(sha256.New, []byte(strconv.FormatInt(timestamp, 10)+"\n"+secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

type feishuText struct {
	Text string `json:"text"`
}

type feishuPostElem struct {
	Tag  string `json:"tag"`
	Text string `json:"text"`
}

type feishuPostLang struct {
	Title   string             `json:"title"`
	Content [][]feishuPostElem `json:"content"`
}

type feishuPost struct {
	Post map[string]feishuPostLang `json:"post"`
}

type feishuCardText struct {
	Tag     string `json:"tag"`
	Content string `json:"content"`
}

type feishuCard struct {
	Config struct {
		WideScreenMode bool `json:"wide_screen_mode"`
	} `json:"config"`
	Header struct {
		Template string         `json:"template"`
		Title    feishuCardText `json:"title"`
	} `json:"header"`
	Elements []struct {
		Tag  string         `json:"tag"`
		Text feishuCardText `json:"text"`
	} `json:"elements"`
}

func feishuPayload(w config.Webhook, n Notification, now time.Time) ([]byte, error) {
	msg := map[string]any{}
	switch w.Format {
	case "text":
		msg["msg_type"] = "text"
		msg["content"] = feishuText{Text: n.text()}
	case "interactive":
		var c feishuCard
		c.Config.WideScreenMode = true
		switch n.State {
		case Resolved:
			c.Header.Template = "green"
		case Test:
			c.Header.Template = "blue"
		default:
			c.Header.Template = "red"
		}
		c.Header.Title = feishuCardText{Tag: "plain_text", Content: n.Title}
		c.Elements = append(c.Elements, struct {
			Tag  string         `json:"tag"`
			Text feishuCardText `json:"text"`
		}{Tag: "div", Text: feishuCardText{Tag: "lark_md", Content: strings.Join(n.Lines, "\n")}})
		msg["msg_type"] = "interactive"
		msg["card"] = c
	default: // post
		lang := feishuPostLang{Title: n.Title}
		for _, l := range n.Lines {
			lang.Content = append(lang.Content, []feishuPostElem{{Tag: "text", Text: l}})
		}
		msg["msg_type"] = "post"
		msg["content"] = feishuPost{Post: map[string]feishuPostLang{"zh_cn": lang}}
	}
	if w.Secret != "" {
		ts := now.Unix()
		msg["timestamp"] = strconv.FormatInt(ts, 10)
		msg["sign"] = FeishuSign(ts, w.Secret)
	}
	return json.Marshal(msg)
}

// WeCom's limits on a message's content, in bytes.
const (
	wecomTextMax     = 2048
	wecomMarkdownMax = 4096
)

func wecomPayload(w config.Webhook, n Notification) ([]byte, error) {
	if w.Format == "text" {
		return json.Marshal(map[string]any{"msgtype": "text",
			"text": map[string]string{"content": truncateUTF8(n.text(), wecomTextMax)}})
	}
	color := "warning"
	switch n.State {
	case Resolved:
		color = "info"
	case Test:
		color = "comment"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**<font color=\"%s\">%s</font>**\n", color, n.Title)
	for _, l := range n.Lines {
		b.WriteString("> " + l + "\n")
	}
	return json.Marshal(map[string]any{"msgtype": "markdown",
		"markdown": map[string]string{"content": truncateUTF8(strings.TrimRight(b.String(), "\n"), wecomMarkdownMax)}})
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
