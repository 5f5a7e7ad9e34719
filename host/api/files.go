package api

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/mdpress/mdpress/core/apierr"
	"github.com/mdpress/mdpress/core/disposition"

	"github.com/mdpress/mdpress/sdk/stage"
)

// file serves a hosted PDF. The URL is the capability: no Authorization.
// The body is streamed from the sink chunk by chunk, never held whole.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	release, ok := s.downloads.enter(clientAddr(r, s.opt.TrustedProxies))
	if !ok {
		s.fail(w, r, stage.Errorf(stage.CodeBusy, "too many downloads at once; retry shortly"))
		return
	}
	defer release()
	c, err := s.client(r.Context(), stage.NameSink)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// A plain GET needs one Open. A HEAD, or a GET with a Range, first
	// asks for the metadata alone (length 0) to answer or to resolve the
	// range against the file's size.
	ranged := r.Method == http.MethodGet && r.Header.Get("Range") != ""
	length := int64(-1)
	if r.Method == http.MethodHead || ranged {
		length = 0
	}
	meta, err := s.open(r, c, id, 0, length)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer meta.Body.Close()

	if meta.ETag != "" && etagMatch(r.Header.Get("If-None-Match"), meta.ETag) {
		setFileHeaders(w, meta)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if ranged && ifRange(r, meta.ETag) {
		start, n, valid, ok := parseRange(r.Header.Get("Range"), meta.Size)
		switch {
		case valid && !ok:
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", meta.Size))
			writeJSON(w, http.StatusRequestedRangeNotSatisfiable, apierr.Body{
				Error: "the requested range is not satisfiable", Message: "RangeNotSatisfiable",
				Hint: fmt.Sprintf("the file has %d bytes", meta.Size)})
			return
		case valid:
			part, err := s.open(r, c, id, start, n)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			defer part.Body.Close()
			setFileHeaders(w, meta)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+n-1, meta.Size))
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
			w.WriteHeader(http.StatusPartialContent)
			_ = s.stream(w, r, part.Body, "hosted file")
			return
		}
		// A Range header this server does not read: the whole file.
	}
	body := meta.Body
	if length == 0 && r.Method == http.MethodGet { // a Range voided by If-Range or ignored: the whole file
		whole, err := s.open(r, c, id, 0, -1)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		defer whole.Body.Close()
		body = whole.Body
	}
	setFileHeaders(w, meta)
	w.Header().Set("Content-Length", strconv.FormatInt(meta.Size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_ = s.stream(w, r, body, "hosted file")
	}
}

// setFileHeaders describes a hosted file to the client.
func setFileHeaders(w http.ResponseWriter, f *stage.OpenResponse) {
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Accept-Ranges", "bytes")
	// Cached no longer than the file lives: a browser must not keep
	// serving it after it expired.
	maxAge := time.Hour
	if !f.ExpiresAt.IsZero() {
		maxAge = min(maxAge, max(0, time.Until(f.ExpiresAt)))
	}
	h.Set("Cache-Control", fmt.Sprintf("private, max-age=%d", int(maxAge.Seconds())))
	h.Set("X-Content-Type-Options", "nosniff")
	if f.ETag != "" {
		h.Set("ETag", f.ETag)
	}
	if !f.Created.IsZero() {
		h.Set("Last-Modified", f.Created.UTC().Format(http.TimeFormat))
	}
	if !f.ExpiresAt.IsZero() {
		h.Set("Expires", f.ExpiresAt.UTC().Format(http.TimeFormat))
	}
	h.Set("Content-Disposition", disposition.Inline(f.Filename))
}

// ifRange reports whether a Range applies: no If-Range, or one naming the
// file's current ETag.
func ifRange(r *http.Request, etag string) bool {
	v := r.Header.Get("If-Range")
	return v == "" || (etag != "" && v == etag)
}

func (s *Server) open(r *http.Request, c stage.Sink, id string, offset, length int64) (*stage.OpenResponse, error) {
	start := time.Now()
	o, err := c.Open(r.Context(), &stage.OpenRequest{ID: id, Offset: offset, Length: length})
	s.observeStage(r.Context(), stage.NameSink, time.Since(start), err)
	if err != nil && stage.CodeOf(err) == stage.CodeInvalid {
		// A malformed id is just an unknown one to the client.
		return nil, stage.Errorf(stage.CodeNotFound, "no hosted file with this id")
	}
	return o, err
}

// A download is cut when its client has not taken the next piece for
// downloadStall, or has taken less than downloadMinRate on average past
// the first downloadStall. This replaces the server's write timeout for the
// whole response, which, sized for conversions, cut a 50 MB file short for
// any client slower than ~280 KB/s; the rate keeps a few slow readers from
// holding every download place for hours.
const (
	downloadStall   = time.Minute
	downloadMinRate = 16 << 10 // bytes per second
)

// downloadDeadline is when the write that brings a download started at
// start to sent bytes must be done: the earlier of the stall bound and
// the rate's, by which all sent bytes are due.
func downloadDeadline(start, now time.Time, sent int) time.Time {
	byRate := start.Add(downloadStall + time.Duration(sent)*time.Second/downloadMinRate)
	if stall := now.Add(downloadStall); stall.Before(byRate) {
		return stall
	}
	return byRate
}

// streamPiece is the most that one write of a stream hands the
// connection, each write with a deadline of its own.
const streamPiece = 64 << 10

// stream writes body out to the client, paced as a download, and returns
// why it stopped short: nil once every byte was handed to the connection.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, body io.Reader, what string) error {
	buf := make([]byte, streamPiece)
	return s.pace(w, r, what, func() ([]byte, error) {
		n, err := body.Read(buf)
		return buf[:n], err
	})
}

// streamBytes is stream for a body already in memory, a converted PDF:
// its pieces are written from it as they are, where a reader over it was
// copied through a 64 KiB buffer allocated for each answer.
func (s *Server) streamBytes(w http.ResponseWriter, r *http.Request, body []byte, what string) error {
	return s.pace(w, r, what, func() ([]byte, error) {
		if len(body) == 0 {
			return nil, io.EOF
		}
		p := body[:min(len(body), streamPiece)]
		body = body[len(p):]
		return p, nil
	})
}

// pace writes the pieces next returns until it returns an error, io.EOF
// once all are out, for stream and streamBytes.
func (s *Server) pace(w http.ResponseWriter, r *http.Request, what string, next func() ([]byte, error)) error {
	rc := http.NewResponseController(w)
	// A request cut (by a shutdown that gave up waiting for it) ends its
	// write at once: a client that stopped reading held a write for up to
	// the stall bound, and the host's exit for 15 s past its drain.
	stop := context.AfterFunc(r.Context(), func() { _ = rc.SetWriteDeadline(time.Now()) })
	defer stop()
	start, sent := time.Now(), 0
	for {
		p, rerr := next()
		if len(p) > 0 {
			sent += len(p)
			_ = rc.SetWriteDeadline(downloadDeadline(start, time.Now(), sent))
			// Set after the cut's deadline, this one would outlive it.
			if r.Context().Err() != nil {
				return context.Cause(r.Context())
			}
			if _, err := w.Write(p); err != nil {
				if r.Context().Err() == nil {
					s.log.Warn(what+" stream broke", "requestId", requestID(r.Context()), "err", err)
				}
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			if r.Context().Err() == nil {
				s.log.Warn(what+" stream broke", "requestId", requestID(r.Context()), "err", rerr)
			}
			return rerr
		}
	}
}

// parseRange resolves a Range header against size. valid is false for a
// header the server ignores, serving the whole file (RFC 9110 14.2): a unit
// other than bytes, a malformed range, several ranges (not served as
// multipart). For a single byte range, ok says whether it is satisfiable.
func parseRange(h string, size int64) (start, n int64, valid, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, false
	}
	if a == "" { // suffix: the last b bytes
		k, ok := digits(b)
		if !ok {
			return 0, 0, false, false
		}
		if k == 0 || size == 0 {
			return 0, 0, true, false
		}
		k = min(k, size)
		return size - k, k, true, true
	}
	from, ok := digits(a)
	if !ok {
		return 0, 0, false, false
	}
	to := size - 1
	if b != "" {
		t, ok := digits(b)
		if !ok || t < from {
			return 0, 0, false, false
		}
		to = min(t, size-1)
	}
	if from >= size {
		return 0, 0, true, false
	}
	return from, to - from + 1, true, true
}

// digits reads a range's number, 1*DIGIT, without the sign ParseInt
// takes: one past int64 (a client asking for "everything from here") is
// as good as the largest, as RFC 9110 wants a last position past the end
// read as the end.
func digits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (math.MaxInt64-int64(c-'0'))/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
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
