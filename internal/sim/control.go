package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// controlHandler serves the control host's endpoints. It is reached directly
// (ControlURL) or as sim.gov.test through the resolve map; it is never
// access-logged, so it can't disturb politeness measurements.
func (w *World) controlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", w.handleControlIndex)
	mux.HandleFunc("GET /__sim/truth", func(rw http.ResponseWriter, r *http.Request) {
		writeJSON(rw, http.StatusOK, w.Truth())
	})
	mux.HandleFunc("POST /__sim/advance", w.handleAdvance)
	mux.HandleFunc("GET /__sim/faults", func(rw http.ResponseWriter, r *http.Request) {
		writeJSON(rw, http.StatusOK, w.Faults())
	})
	mux.HandleFunc("POST /__sim/faults", w.handleFaultSet)
	mux.HandleFunc("DELETE /__sim/faults", func(rw http.ResponseWriter, r *http.Request) {
		w.ClearFaults(r.URL.Query().Get("host"))
		writeJSON(rw, http.StatusOK, w.Faults())
	})
	mux.HandleFunc("GET /__sim/log", func(rw http.ResponseWriter, r *http.Request) {
		if h := r.URL.Query().Get("host"); h != "" {
			writeJSON(rw, http.StatusOK, nonNil(w.AccessLog(h)))
			return
		}
		writeJSON(rw, http.StatusOK, nonNil(w.AllAccess()))
	})
	mux.HandleFunc("DELETE /__sim/log", func(rw http.ResponseWriter, r *http.Request) {
		w.ResetLog()
		rw.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /__sim/resolve", func(rw http.ResponseWriter, r *http.Request) {
		writeJSON(rw, http.StatusOK, map[string]any{"hosts": w.ResolveMap(), "resolve": w.ResolveString(), "now": w.Now()})
	})
	return mux
}

func nonNil(as []Access) []Access {
	if as == nil {
		return []Access{}
	}
	return as
}

func (w *World) handleControlIndex(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(rw, "zhizhi simulated government web; sim clock %s\n\n", w.Now().Format(time.RFC3339))
	fmt.Fprintf(rw, "GET    /__sim/truth\nPOST   /__sim/advance?hours=N\nGET|POST|DELETE /__sim/faults\nGET|DELETE /__sim/log[?host=…]\nGET    /__sim/resolve\n\n")
	for _, h := range w.Hosts() {
		fmt.Fprintf(rw, "%-26s %s\n", h, w.addrs[h])
	}
}

func (w *World) handleAdvance(rw http.ResponseWriter, r *http.Request) {
	hours, err := strconv.ParseFloat(r.URL.Query().Get("hours"), 64)
	if err != nil || hours <= 0 || hours > 24*3650 {
		writeJSON(rw, http.StatusBadRequest, map[string]string{"error": "hours must be a positive number"})
		return
	}
	writeJSON(rw, http.StatusOK, w.Advance(time.Duration(hours*float64(time.Hour))))
}

// faultRequest is the body of POST /__sim/faults: a host and a fault.
type faultRequest struct {
	Host string `json:"host"`
	Fault
}

func (w *World) handleFaultSet(rw http.ResponseWriter, r *http.Request) {
	var req faultRequest
	if err := json.NewDecoder(http.MaxBytesReader(rw, r.Body, 1<<16)).Decode(&req); err != nil {
		writeJSON(rw, http.StatusBadRequest, map[string]string{"error": "decode fault: " + err.Error()})
		return
	}
	if err := w.SetFault(req.Host, req.Fault); err != nil {
		writeJSON(rw, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(rw, http.StatusOK, w.Faults())
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(rw, "encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Type", "application/json; charset=utf-8")
	rw.WriteHeader(status)
	_, _ = rw.Write(append(body, '\n'))
}
