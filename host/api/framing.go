package api

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
)

// framer follows the framing of the requests that come on one connection,
// as net/http reads them, to tell the handler what net/http hides from it:
// a request that carries both Transfer-Encoding and Content-Length, or
// Transfer-Encoding in HTTP/1.0. net/http reads such a body as chunked,
// deletes Content-Length before any handler runs and keeps the connection
// open; a proxy in front that went by Content-Length instead forwarded the
// rest of the body as the next request on that connection, someone else's
// perhaps (request smuggling). RFC 9112 §6.1 has such a message handled as
// an error and the connection closed after the answer.
//
// It counts the requests whose headers have come, in the order net/http
// hands them to the server's handler, and remembers the first with faulty
// framing. Framing it cannot follow where net/http might (a line longer
// than it keeps, say) counts as faulty too: the request after it, if
// net/http serves one, is refused rather than let through unseen.
type framer struct {
	mu     sync.Mutex
	state  frameState
	line   frameLine
	remain int64 // bytes left of the body or of the chunk's data

	// Of the request whose headers are coming.
	http10, optionsStar bool
	te, cl              bool
	clValue             string // the first Content-Length's value
	// clLine is the value of the Content-Length header being read, which
	// lines folded onto it (obs-fold) continue, as net/http joins them;
	// inCL says the last header was one.
	clLine string
	inCL   bool

	count  int64 // requests whose headers have come, as the handler counts them
	faulty int64 // the first request with faulty framing; 0: none yet
}

type frameState int

const (
	frameRequestLine frameState = iota
	frameHeaders
	frameBody      // remain bytes of a Content-Length body
	frameChunkSize // the line giving the next chunk's size
	frameChunkData // remain bytes of the chunk
	frameChunkCRLF // the CR after a chunk's data
	frameChunkLF   // the LF after it
	frameTrailer   // trailer lines, up to an empty one
	frameStopped   // a faulty request is counted: nothing later matters
)

// A line's first frameHeaderMax bytes and last frameHeaderTail are kept.
const (
	frameHeaderMax  = 1 << 10
	frameHeaderTail = 16
)

// frameLine keeps what a line's meaning needs: its start, to name a header
// or hold a short value, and its end, where a request line has its
// protocol. A longer line is not kept whole, so that a client cannot make
// the framer hold more than these bytes.
type frameLine struct {
	head []byte
	tail [frameHeaderTail]byte
	n    int // the line's length so far
}

func (l *frameLine) add(p []byte) {
	if room := frameHeaderMax - len(l.head); room > 0 {
		l.head = append(l.head, p[:min(room, len(p))]...)
	}
	for _, b := range p[max(0, len(p)-frameHeaderTail):] {
		copy(l.tail[:], l.tail[1:])
		l.tail[frameHeaderTail-1] = b
	}
	l.n += len(p)
}

// text is the line without its LF and CR, and whether it was kept whole.
func (l *frameLine) text() (string, bool) {
	s := strings.TrimSuffix(strings.TrimSuffix(string(l.head), "\n"), "\r")
	return s, l.n <= frameHeaderMax
}

// suffix is the line's last bytes, without its LF and CR.
func (l *frameLine) suffix() string {
	k := min(l.n, frameHeaderTail)
	s := string(l.tail[frameHeaderTail-k:])
	return strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
}

func (l *frameLine) reset() { l.head, l.n = l.head[:0], 0 }

// read follows the bytes p that the connection read.
func (f *framer) read(p []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(p) > 0 && f.state != frameStopped {
		switch f.state {
		case frameBody, frameChunkData:
			n := min(f.remain, int64(len(p)))
			p, f.remain = p[n:], f.remain-n
			if f.remain == 0 {
				if f.state == frameBody {
					f.state = frameRequestLine
				} else {
					f.state = frameChunkCRLF
				}
			}
		case frameChunkCRLF, frameChunkLF:
			want := byte('\r')
			if f.state == frameChunkLF {
				want = '\n'
			}
			if p[0] != want {
				f.lost()
				return
			}
			p = p[1:]
			if f.state == frameChunkCRLF {
				f.state = frameChunkLF
			} else {
				f.state = frameChunkSize
			}
		default:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				f.line.add(p)
				return
			}
			f.line.add(p[:i+1])
			p = p[i+1:]
			f.endLine()
			f.line.reset()
		}
	}
}

// endLine reads the line that just ended.
func (f *framer) endLine() {
	s, whole := f.line.text()
	switch f.state {
	case frameRequestLine:
		if s == "" {
			// net/http skips the CR LF an old client sends after a POST's
			// body (RFC 9112 §2.2), and answers an empty request line
			// itself otherwise: no request either way. Taken for the
			// request line, it made the next line a malformed header, and
			// a well-framed request was refused.
			return
		}
		method, target, _ := strings.Cut(s, " ")
		target, _, _ = strings.Cut(target, " ")
		// net/http answers "OPTIONS *" itself: the handler never sees it.
		f.optionsStar = method == "OPTIONS" && target == "*"
		f.http10 = strings.HasSuffix(f.line.suffix(), " HTTP/1.0")
		f.te, f.cl, f.clValue, f.inCL = false, false, "", false
		f.state = frameHeaders
	case frameHeaders:
		if s == "" {
			f.endCL()
			if f.state != frameStopped {
				f.endHeaders()
			}
			return
		}
		if s[0] == ' ' || s[0] == '\t' {
			// It continues the value before: no header of its own, but
			// part of a Content-Length ("Content-Length:" then " 42"
			// is 42 to net/http).
			if f.inCL {
				if !whole || len(f.clLine) > frameHeaderMax {
					f.lost()
					return
				}
				f.clLine = strings.Trim(f.clLine+" "+strings.Trim(s, " \t"), " \t")
			}
			return
		}
		if f.endCL(); f.state == frameStopped {
			return
		}
		name, value, ok := strings.Cut(s, ":")
		name = strings.TrimRight(name, " \t") // net/http refuses such a name; a proxy may not
		switch {
		case !ok:
			f.lost()
		case strings.EqualFold(name, "Transfer-Encoding"):
			f.te = true
		case strings.EqualFold(name, "Content-Length"):
			if !whole {
				f.lost()
				return
			}
			f.clLine, f.inCL = strings.Trim(value, " \t"), true
		}
	case frameChunkSize:
		// Only the size before an extension matters, and it is in the
		// line's kept start: net/http takes chunk lines up to 4 KiB, so
		// a longer extension is legitimate, and taking it as lost
		// refused the request after it.
		size, _, ext := strings.Cut(s, ";")
		if !ext {
			size = strings.TrimRight(size, " \t")
		}
		n, err := strconv.ParseUint(size, 16, 63)
		if err != nil || !whole && !ext {
			f.lost()
			return
		}
		if n == 0 {
			f.state = frameTrailer
		} else {
			f.state, f.remain = frameChunkData, int64(n)
		}
	case frameTrailer:
		if s == "" {
			f.state = frameRequestLine
		}
	}
}

// endCL ends the Content-Length header being read, if the last header
// was one, now that no line can continue it.
func (f *framer) endCL() {
	if !f.inCL {
		return
	}
	f.inCL = false
	if f.cl && f.clLine != f.clValue {
		f.lost() // net/http refuses differing lengths
		return
	}
	f.cl, f.clValue = true, f.clLine
}

// endHeaders counts the request whose headers ended and finds where its
// body ends.
func (f *framer) endHeaders() {
	// In HTTP/1.0 net/http ignores Transfer-Encoding; RFC 9112 has such a
	// message's framing taken as faulty all the same.
	if f.te && (f.cl || f.http10) {
		f.lost()
		return
	}
	if !f.optionsStar {
		f.count++
	}
	switch {
	case f.te:
		f.state = frameChunkSize
	case f.cl:
		n, err := strconv.ParseUint(f.clValue, 10, 63)
		if err != nil {
			f.lost()
			return
		}
		f.state, f.remain = frameBody, int64(n)
		if n == 0 {
			f.state = frameRequestLine
		}
	default:
		f.state = frameRequestLine
	}
}

// lost takes the request whose headers are coming, or the next one if
// they have ended, as faulty, and stops following the connection.
func (f *framer) lost() {
	if f.faulty == 0 {
		f.faulty = f.count + 1
	}
	f.state = frameStopped
}

// faultyAt says whether the request that the handler counts as the n-th
// on the connection, or one before it, had faulty framing.
func (f *framer) faultyAt(n int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.faulty != 0 && n >= f.faulty
}
