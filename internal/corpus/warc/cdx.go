package warc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// CDXEntry is one capture in a CDX index: where a response record sits and
// what it holds.
type CDXEntry struct {
	URLKey    string // SURT form of Original
	Timestamp string // 14 digits, yyyyMMddhhmmss, UTC
	Original  string // WARC-Target-URI
	MIME      string // HTTP Content-Type without parameters
	Status    int    // HTTP status; 0 when the record has none
	Digest    string // payload digest value without its "sha256:" prefix
	Length    int64  // compressed length of the record's gzip member
	Offset    int64  // offset of that member in Filename
	Filename  string // WARC file name as the index reader will find it
}

// NewCDXEntry indexes a record (normally a response) of the WARC file
// named filename.
func NewCDXEntry(rec Record, filename string) CDXEntry {
	key, err := SURT(rec.TargetURI)
	if err != nil {
		// Indexers (pywb, warcio) key an unparsable URL by itself.
		key = strings.ToLower(rec.TargetURI)
	}
	digest := rec.PayloadDigest
	if _, v, ok := strings.Cut(digest, ":"); ok {
		digest = v
	}
	return CDXEntry{
		URLKey:    key,
		Timestamp: rec.Date.UTC().Format("20060102150405"),
		Original:  rec.TargetURI,
		MIME:      rec.MIME,
		Status:    rec.Status,
		Digest:    digest,
		Length:    rec.Length,
		Offset:    rec.Offset,
		Filename:  filename,
	}
}

// cdxjJSON is the JSON block of a CDXJ line with the field names and the
// string-valued numbers pywb and warcio write.
type cdxjJSON struct {
	URL      string `json:"url"`
	MIME     string `json:"mime,omitempty"`
	Status   string `json:"status,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// CDXJ renders the entry as one CDXJ line without its newline:
// "urlkey timestamp {json}".
func (e CDXEntry) CDXJ() string {
	j := cdxjJSON{
		URL: e.Original, MIME: e.MIME, Digest: e.Digest,
		Length: strconv.FormatInt(e.Length, 10), Offset: strconv.FormatInt(e.Offset, 10),
		Filename: e.Filename,
	}
	if e.Status != 0 {
		j.Status = strconv.Itoa(e.Status)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "&" in a URL stays "&", as other indexers write it
	_ = enc.Encode(j)        // a struct of strings always encodes
	return e.URLKey + " " + e.Timestamp + " " + strings.TrimSuffix(b.String(), "\n")
}

// CDXJLine is NewCDXEntry(rec, filename).CDXJ(): the CDXJ index line of a
// record (SURT urlkey, 14-digit timestamp, JSON with url, mime, status,
// digest, length, offset, filename).
func CDXJLine(rec Record, filename string) string {
	return NewCDXEntry(rec, filename).CDXJ()
}

// ParseCDXJ reads one CDXJ line as written by CDXJ (or by pywb, warcio
// and js-wacz, whose numbers may be strings or numbers).
func ParseCDXJ(line string) (CDXEntry, error) {
	key, rest, ok1 := strings.Cut(strings.TrimSpace(line), " ")
	ts, js, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || key == "" || ts == "" {
		return CDXEntry{}, fmt.Errorf("cdxj: line %q is not \"urlkey timestamp {json}\"", clip(line))
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return CDXEntry{}, fmt.Errorf("cdxj: line %q: JSON block: %w", clip(line), err)
	}
	str := func(k string) string {
		switch v := m[k].(type) {
		case string:
			return v
		case json.Number:
			return v.String()
		}
		return ""
	}
	e := CDXEntry{URLKey: key, Timestamp: ts, Original: str("url"), MIME: str("mime"), Digest: str("digest"), Filename: str("filename")}
	var err error
	if s := str("status"); s != "" && s != "-" {
		if e.Status, err = strconv.Atoi(s); err != nil {
			return CDXEntry{}, fmt.Errorf("cdxj: line %q: status %q is not a number", clip(line), s)
		}
	}
	if e.Length, err = strconv.ParseInt(str("length"), 10, 64); err != nil {
		return CDXEntry{}, fmt.Errorf("cdxj: line %q: length %q is not a number", clip(line), str("length"))
	}
	if e.Offset, err = strconv.ParseInt(str("offset"), 10, 64); err != nil {
		return CDXEntry{}, fmt.Errorf("cdxj: line %q: offset %q is not a number", clip(line), str("offset"))
	}
	return e, nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// CDXQuery is a Wayback CDX server query.
type CDXQuery struct {
	URL string
	// MatchType is exact (the default), prefix (every URL under URL's
	// path), host (every URL on URL's host) or domain (the host and its
	// subdomains). As in the Wayback CDX server, a URL ending in "/*"
	// means prefix and one starting with "*." means domain when MatchType
	// is empty.
	MatchType string
	// From and To bound the timestamp, inclusive, in 1 to 14 digits
	// (yyyyMMddhhmmss); From is padded with zeros and To with nines.
	From, To string
	// Limit > 0 keeps the first Limit results, < 0 the last -Limit, 0 all.
	Limit int
	// Output "json" answers a JSON array whose first row names the fields;
	// anything else answers plain space-separated lines.
	Output string
	// Fields (fl=) chooses and orders the fields; empty means DefaultCDXFields.
	Fields []string
}

// DefaultCDXFields are the fields the Wayback CDX server answers by
// default. "offset" and "filename" may be asked for with fl=.
var DefaultCDXFields = []string{"urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"}

// cdxFields maps every field name the Wayback CDX server or pywb uses to a
// column of CDXEntry, rendered as the CDX server renders it ("-" for none).
var cdxFields = map[string]func(CDXEntry) string{
	"urlkey":     func(e CDXEntry) string { return e.URLKey },
	"timestamp":  func(e CDXEntry) string { return e.Timestamp },
	"original":   func(e CDXEntry) string { return e.Original },
	"url":        func(e CDXEntry) string { return e.Original },
	"mimetype":   func(e CDXEntry) string { return e.MIME },
	"mime":       func(e CDXEntry) string { return e.MIME },
	"statuscode": statusField,
	"status":     statusField,
	"digest":     func(e CDXEntry) string { return e.Digest },
	"length":     func(e CDXEntry) string { return strconv.FormatInt(e.Length, 10) },
	"offset":     func(e CDXEntry) string { return strconv.FormatInt(e.Offset, 10) },
	"filename":   func(e CDXEntry) string { return e.Filename },
}

func statusField(e CDXEntry) string {
	if e.Status == 0 {
		return ""
	}
	return strconv.Itoa(e.Status)
}

var matchTypes = []string{"exact", "prefix", "host", "domain"}

// ParseCDXQuery reads the parameters of GET /cdx: url (required),
// matchType, from, to, limit, output, fl. Unknown parameters are ignored,
// as the Wayback CDX server does; bad values are errors that say what is
// accepted.
func ParseCDXQuery(v url.Values) (CDXQuery, error) {
	q := CDXQuery{
		URL:       strings.TrimSpace(v.Get("url")),
		MatchType: v.Get("matchType"),
		From:      v.Get("from"),
		To:        v.Get("to"),
		Output:    v.Get("output"),
	}
	if q.URL == "" {
		return q, fmt.Errorf("cdx: the url parameter is required, e.g. /cdx?url=example.com/&matchType=prefix")
	}
	if q.MatchType != "" && !slices.Contains(matchTypes, q.MatchType) {
		return q, fmt.Errorf("cdx: matchType %q is not one of exact, prefix, host, domain", q.MatchType)
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return q, fmt.Errorf("cdx: limit %q is not an integer", s)
		}
		q.Limit = n
	}
	for _, f := range strings.Split(v.Get("fl"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			if cdxFields[f] == nil {
				return q, fmt.Errorf("cdx: field %q in fl is not one of %s", f, strings.Join(append(slices.Clone(DefaultCDXFields), "offset", "filename"), ", "))
			}
			q.Fields = append(q.Fields, f)
		}
	}
	for _, ts := range []string{q.From, q.To} {
		if err := checkTimestamp(ts); err != nil {
			return q, err
		}
	}
	return q, nil
}

func checkTimestamp(ts string) error {
	if len(ts) > 14 {
		return fmt.Errorf("cdx: timestamp %q has more than 14 digits (yyyyMMddhhmmss)", ts)
	}
	for _, c := range ts {
		if c < '0' || c > '9' {
			return fmt.Errorf("cdx: timestamp %q is not 1 to 14 digits (yyyyMMddhhmmss)", ts)
		}
	}
	return nil
}

// Query returns the entries that match q, ordered by urlkey, then
// timestamp, then filename and offset.
func Query(entries []CDXEntry, q CDXQuery) ([]CDXEntry, error) {
	raw := strings.TrimSpace(q.URL)
	mt := q.MatchType
	if strings.HasSuffix(raw, "/*") || (strings.HasSuffix(raw, "*") && !strings.HasPrefix(raw, "*.")) {
		raw = strings.TrimSuffix(raw, "*")
		if mt == "" {
			mt = "prefix"
		}
	}
	if strings.HasPrefix(raw, "*.") {
		raw = strings.TrimPrefix(raw, "*.")
		if mt == "" {
			mt = "domain"
		}
	}
	if mt == "" {
		mt = "exact"
	}
	if !slices.Contains(matchTypes, mt) {
		return nil, fmt.Errorf("cdx: matchType %q is not one of exact, prefix, host, domain", mt)
	}
	key, err := SURT(raw)
	if err != nil {
		return nil, fmt.Errorf("cdx: url %q: %w", q.URL, err)
	}
	if err := checkTimestamp(q.From); err != nil {
		return nil, err
	}
	if err := checkTimestamp(q.To); err != nil {
		return nil, err
	}
	from := q.From + strings.Repeat("0", 14-len(q.From))
	to := q.To + strings.Repeat("9", 14-len(q.To))
	host := surtHost(key)
	bareHost, _, _ := strings.Cut(host, ":") // domain matches every port

	match := func(k string) bool {
		switch mt {
		case "exact":
			return k == key
		case "prefix":
			return strings.HasPrefix(k, key)
		case "host":
			return surtHost(k) == host
		default: // domain
			h := surtHost(k)
			return h == bareHost || strings.HasPrefix(h, bareHost+",") || strings.HasPrefix(h, bareHost+":")
		}
	}
	var out []CDXEntry
	for _, e := range entries {
		if match(e.URLKey) && e.Timestamp >= from && e.Timestamp <= to {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b CDXEntry) int {
		if c := strings.Compare(a.URLKey, b.URLKey); c != 0 {
			return c
		}
		if c := strings.Compare(a.Timestamp, b.Timestamp); c != 0 {
			return c
		}
		if c := strings.Compare(a.Filename, b.Filename); c != 0 {
			return c
		}
		return int(a.Offset - b.Offset)
	})
	switch {
	case q.Limit > 0 && len(out) > q.Limit:
		out = out[:q.Limit]
	case q.Limit < 0 && len(out) > -q.Limit:
		out = out[len(out)+q.Limit:]
	}
	return out, nil
}

// WriteCDXServer writes entries as the Wayback CDX server answers: with
// output "json" a JSON array whose first row is the field names and every
// other row the entry's fields as strings (an empty result is "[]"),
// otherwise one line per entry with the fields separated by spaces and "-"
// for an empty field. fields choose and order the columns (the names of
// DefaultCDXFields plus offset and filename; pywb's url, mime and status
// are accepted too); none means DefaultCDXFields.
func WriteCDXServer(w io.Writer, entries []CDXEntry, output string, fields ...string) error {
	if len(fields) == 0 {
		fields = DefaultCDXFields
	}
	cols := make([]func(CDXEntry) string, len(fields))
	for i, f := range fields {
		if cols[i] = cdxFields[f]; cols[i] == nil {
			return fmt.Errorf("cdx: field %q is not one of %s, offset, filename", f, strings.Join(DefaultCDXFields, ", "))
		}
	}
	var b bytes.Buffer
	if output == "json" {
		if len(entries) == 0 {
			b.WriteString("[]\n")
			_, err := w.Write(b.Bytes())
			return err
		}
		rows := make([][]string, 0, len(entries)+1)
		rows = append(rows, fields)
		for _, e := range entries {
			row := make([]string, len(cols))
			for i, c := range cols {
				row[i] = c(e)
			}
			rows = append(rows, row)
		}
		b.WriteString("[")
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		for i, row := range rows {
			if i > 0 {
				b.WriteString(",\n ")
			}
			_ = enc.Encode(row) // strings always encode
			b.Truncate(b.Len() - 1)
		}
		b.WriteString("]\n")
	} else {
		for _, e := range entries {
			for i, c := range cols {
				if i > 0 {
					b.WriteByte(' ')
				}
				v := c(e)
				if v == "" {
					v = "-"
				}
				b.WriteString(strings.ReplaceAll(v, " ", "%20"))
			}
			b.WriteByte('\n')
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
