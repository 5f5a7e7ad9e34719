package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// LookupFunc resolves a host name to its addresses.
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// DialFunc dials a checked address; addr is always "ip:port".
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// ErrTooLarge is returned when a body passes the size cap.
var ErrTooLarge = errors.New("resource too large")

// Fetcher gets remote resources for a document. It resolves each host once,
// refuses the whole host when any of its addresses fails Check, and dials the
// very address it checked, so a DNS answer cannot change between the check
// and the connection. Every redirect goes through the same dial.
type Fetcher struct {
	client   *http.Client
	maxBytes int64
	timeout  time.Duration
}

// Response is a fetched resource.
type Response struct {
	Status      int
	ContentType string
	// AllowOrigin is the Access-Control-Allow-Origin the server sent; web
	// fonts from another origin need it.
	AllowOrigin string
	Body        []byte
}

// maxRedirects bounds a redirect chain; browsers stop at 20.
const maxRedirects = 10

// NewFetcher returns a Fetcher with the given caps. A nil lookup uses the
// system resolver and a nil dial a plain net.Dialer.
func NewFetcher(lookup LookupFunc, dial DialFunc, maxBytes int64, timeout time.Duration) *Fetcher {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if dial == nil {
		d := &net.Dialer{Timeout: timeout}
		dial = d.DialContext
	}
	tr := &http.Transport{
		// An environment proxy would dial an address nobody checked.
		Proxy:                  nil,
		DialContext:            pinnedDial(lookup, dial),
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Fetcher{
		client: &http.Client{
			Transport:     tr,
			CheckRedirect: checkRedirect,
			Timeout:       timeout,
		},
		maxBytes: maxBytes,
		timeout:  timeout,
	}
}

// Fetch GETs rawURL, following redirects within the policy, and returns the
// final response with a body of at most the size cap.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse url: %w", err)
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "mdpress-render-chrome")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > f.maxBytes {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, resp.ContentLength)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > f.maxBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, f.maxBytes)
	}
	return &Response{
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		AllowOrigin: resp.Header.Get("Access-Control-Allow-Origin"),
		Body:        body,
	}, nil
}

// CloseIdle drops kept-alive connections.
func (f *Fetcher) CloseIdle() { f.client.CloseIdleConnections() }

// checkURL refuses schemes other than http and https, credentials in the
// URL, and address literals outside the policy, before any lookup.
func checkURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return fmt.Errorf("%w: scheme %q", ErrDenied, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in url", ErrDenied)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: no host", ErrDenied)
	}
	if a, ok := ParseHost(u.Hostname()); ok {
		return Check(a)
	}
	return nil
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return checkURL(req.URL)
}

// pinnedDial resolves the host of addr once, checks every address it gets,
// and dials only checked addresses.
func pinnedDial(lookup LookupFunc, dial DialFunc) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := resolve(ctx, lookup, host)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, a := range addrs {
			conn, err := dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// resolve returns the addresses of host, all of them allowed, or an error
// when any is not: a name with one private address among public ones is a
// rebinding trick, not a mistake.
func resolve(ctx context.Context, lookup LookupFunc, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, ok := ParseHost(host); ok {
		addrs = []netip.Addr{a}
	} else {
		var err error
		if addrs, err = lookup(ctx, host); err != nil {
			return nil, fmt.Errorf("lookup %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("lookup %s: no addresses", host)
		}
	}
	for _, a := range addrs {
		if err := Check(a); err != nil {
			return nil, fmt.Errorf("%s: %w", host, err)
		}
	}
	return addrs, nil
}
