package api

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/mdpress/mdpress/sdk/stage"
)

// file serves a hosted PDF. The URL is the capability: no Authorization.
// The body is streamed from the sink chunk by chunk, never held whole.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	c, err := s.client(r.Context(), stage.NameSink)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rangeHdr := r.Header.Get("Range")
	offset, length := int64(0), int64(-1)
	if rangeHdr == "" || r.Method == http.MethodHead {
		length = -1
		if r.Method == http.MethodHead {
			length = 0
		}
	} else {
		length = 0 // metadata first, to resolve the range against the size
	}
	open, err := s.open(r, c, id, offset, length)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer open.Body.Close()

	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Accept-Ranges", "bytes")
	h.Set("Cache-Control", "private, max-age=3600")
	h.Set("X-Content-Type-Options", "nosniff")
	if open.ETag != "" {
		h.Set("ETag", open.ETag)
	}
	if !open.Created.IsZero() {
		h.Set("Last-Modified", open.Created.UTC().Format(http.TimeFormat))
	}
	if !open.ExpiresAt.IsZero() {
		h.Set("Expires", open.ExpiresAt.UTC().Format(http.TimeFormat))
	}
	name := open.Filename
	if name == "" {
		name = "document.pdf"
	}
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": name}))

	if open.ETag != "" && etagMatch(r.Header.Get("If-None-Match"), open.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		h.Set("Content-Length", strconv.FormatInt(open.Size, 10))
		w.WriteHeader(http.StatusOK)
		return
	}
	if rangeHdr == "" || (r.Header.Get("If-Range") != "" && r.Header.Get("If-Range") != open.ETag) {
		if rangeHdr != "" { // If-Range mismatch: whole file
			open.Body.Close()
			if open, err = s.open(r, c, id, 0, -1); err != nil {
				s.fail(w, r, err)
				return
			}
			defer open.Body.Close()
		}
		h.Set("Content-Length", strconv.FormatInt(open.Size, 10))
		w.WriteHeader(http.StatusOK)
		s.stream(w, r, open.Body)
		return
	}
	start, n, ok := parseRange(rangeHdr, open.Size)
	if !ok {
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", open.Size))
		writeJSON(w, http.StatusRequestedRangeNotSatisfiable, map[string]string{"error": "the requested range is not satisfiable"})
		return
	}
	open.Body.Close()
	part, err := s.open(r, c, id, start, n)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer part.Body.Close()
	h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+n-1, open.Size))
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusPartialContent)
	s.stream(w, r, part.Body)
}

func (s *Server) open(r *http.Request, c stage.Sink, id string, offset, length int64) (*stage.OpenResponse, error) {
	start := time.Now()
	o, err := c.Open(r.Context(), &stage.OpenRequest{ID: id, Offset: offset, Length: length})
	s.metrics.ObserveStage(stage.NameSink, s.stages.Plugin(stage.NameSink), time.Since(start), err)
	if err != nil && stage.CodeOf(err) == stage.CodeInvalid {
		// A malformed id is just an unknown one to the client.
		return nil, stage.Errorf(stage.CodeNotFound, "no hosted file with this id")
	}
	return o, err
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, body io.Reader) {
	if _, err := io.Copy(w, body); err != nil && r.Context().Err() == nil {
		s.log.Warn("hosted file stream broke", "requestId", requestID(r.Context()), "err", err)
	}
}

// parseRange resolves a single byte range against size. Multiple ranges are
// not served as multipart; the first one is used.
func parseRange(h string, size int64) (start, n int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found {
		return 0, 0, false
	}
	spec, _, _ = strings.Cut(spec, ",")
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false
	}
	switch {
	case a == "": // suffix: the last b bytes
		k, err := strconv.ParseInt(b, 10, 64)
		if err != nil || k <= 0 || size == 0 {
			return 0, 0, false
		}
		k = min(k, size)
		return size - k, k, true
	default:
		from, err := strconv.ParseInt(a, 10, 64)
		if err != nil || from < 0 || from >= size {
			return 0, 0, false
		}
		to := size - 1
		if b != "" {
			t, err := strconv.ParseInt(b, 10, 64)
			if err != nil || t < from {
				return 0, 0, false
			}
			to = min(t, size-1)
		}
		return from, to - from + 1, true
	}
}

func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
