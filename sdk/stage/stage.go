package stage

import (
	"context"
	"io"
	"time"
)

// Names of the pipeline stages. A plugin binary serves exactly one of them.
const (
	NameAuth   = "auth"
	NameMeter  = "meter"
	NameParse  = "parse"
	NameStyle  = "style"
	NameRender = "render"
	NameSink   = "sink"
)

// Names lists the stages in pipeline order.
var Names = []string{NameAuth, NameMeter, NameParse, NameStyle, NameRender, NameSink}

// Plugin is the base every stage plugin implements besides its stage
// interface. Constructors do no I/O; Configure validates and applies the
// operator's settings; Close is safe to call twice and after a failed
// Configure.
type Plugin interface {
	Configure(ctx context.Context, req *ConfigureRequest) (*ConfigureResponse, error)
	Health(ctx context.Context) error
	Close() error
}

// ConfigureRequest carries the plugin's own config block and the settings
// the host shares with every plugin.
type ConfigureRequest struct {
	// Config is the plugin's block from the host's YAML, re-encoded as JSON.
	Config []byte
	// DataDir is the deployment's data directory (SQLite, hosted files, ...).
	DataDir string
	// PublicURL is the base of URLs handed to clients, e.g. http://127.0.0.1:8080.
	PublicURL string
	// Accounts says where accounts and credits live; auth and meter use it.
	Accounts AccountsConfig
	// Plans are the operator's plans, by name.
	Plans []Plan
}

// AccountsConfig names the account store.
type AccountsConfig struct {
	Driver string // "sqlite" or "postgres"
	DSN    string // empty for sqlite means <DataDir>/mdpress.db
}

// ConfigureResponse reports what the plugin is.
type ConfigureResponse struct {
	Info Info
}

// Info describes a plugin instance.
type Info struct {
	Name    string // e.g. render-chrome
	Version string
	// Capabilities lists optional features, e.g. "css" for a renderer that
	// applies CSS. The host logs them and uses a few (see the constants).
	Capabilities []string
}

// Capability names.
const (
	// CapCSS: the renderer applies CSS from the styled HTML.
	CapCSS = "css"
	// CapReadsHTML and CapReadsTree say which input a renderer lays out.
	// A renderer that declares only one of them is sent only that one
	// (RenderRequest.HTML, or Document.Root), which saves encoding the
	// other across the process boundary; declaring neither gets both.
	CapReadsHTML = "reads-html"
	CapReadsTree = "reads-tree"
	// CapReadsTreeParts: the renderer reads only the tree and lays it out
	// as its parts arrive (PartRenderer). The host then streams the parse
	// into the render: once the credits are reserved, the render starts on
	// the parts parsed so far and gets the rest as they come.
	CapReadsTreeParts = "reads-tree-parts"
)

// Plan is an operator-defined subscription plan.
type Plan struct {
	Name            string
	MonthlyCredits  int64
	Watermark       bool
	RetentionDays   int64 // 0: retention off
	RateLimitPerMin int64 // 0: unlimited
}

// Principal is who a request acts for.
type Principal struct {
	UserID string
	KeyID  string // the API key's id (never the key itself)
	Plan   Plan
}

// Authenticator turns a bearer token into a principal.
type Authenticator interface {
	Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error)
}

type AuthenticateRequest struct {
	Token string
}

type AuthenticateResponse struct {
	Principal Principal
}

// Meter reserves, commits and refunds credits, and reports balances.
type Meter interface {
	Reserve(ctx context.Context, req *ReserveRequest) (*ReserveResponse, error)
	Commit(ctx context.Context, req *CommitRequest) (*CommitResponse, error)
	Refund(ctx context.Context, req *RefundRequest) (*RefundResponse, error)
	Account(ctx context.Context, req *AccountRequest) (*AccountResponse, error)
}

type ReserveRequest struct {
	UserID  string
	Credits int64
	// IdempotencyKey, when set, makes a retry of the same request (same
	// RequestHash) return the earlier result instead of charging again.
	IdempotencyKey string
	RequestHash    string
}

type ReserveResponse struct {
	ReservationID string
	// Replay is set when IdempotencyKey matched an earlier committed request:
	// no credit was reserved and the caller returns Replay.Result.
	Replay *Replay
	// Held is how long the reservation is held before the meter may give
	// its credits back unfinished (0: not said). A host with time to spare
	// before then answers its client before committing.
	Held time.Duration
}

// Replay is a stored result of an idempotent request.
type Replay struct {
	Result string // what CommitRequest.Result held (e.g. a hosted file id)
}

// CommitRequest charges a reservation. The host sends it again when a
// commit failed without saying whether it went through (a timeout, the
// meter's process or database lost under it), for up to minutes after the
// PDF was delivered: a commit of a reservation already committed must
// succeed and charge nothing, and one of a reservation released (refunded
// or expired) must fail.
type CommitRequest struct {
	ReservationID string
	// Result is stored for idempotent replays.
	Result string
}

type CommitResponse struct{}

type RefundRequest struct {
	ReservationID string
	Reason        string
}

type RefundResponse struct{}

type AccountRequest struct {
	UserID string
}

type AccountResponse struct {
	UserID         string
	Plan           Plan
	CurrentCredits int64
	LastReset      time.Time
}

// Parser turns Markdown into HTML and a document tree.
type Parser interface {
	Parse(ctx context.Context, req *ParseRequest) (*ParseResponse, error)
}

// PartParser is a Parser that can also hand its tree over in parts, in
// document order, so that a renderer lays out the first part while the rest
// is parsed (see PartRenderer). The SDK serves a plain Parser's tree as one
// part.
type PartParser interface {
	Parser
	// ParseParts parses as Parse does and calls emit with each part of the
	// tree, in order. Joined, the parts' children are exactly the children
	// of the root Parse would return. The response is the rest of the
	// document (title, outline, HTML unless skipped) with no tree. An error
	// from emit stops the parse, and ParseParts returns it.
	ParseParts(ctx context.Context, req *ParseRequest, emit func(Part) error) (*ParseResponse, error)
}

// Part is one part of a tree handed over in parts: Root is a KindDocument
// node whose children are the next top-level blocks of the document. A
// relaying host carries it Encoded, as it does a Document's tree; plugins
// always receive Root.
type Part struct {
	Root    *Node
	Encoded []byte
}

type ParseRequest struct {
	Markdown string
	// SkipHTML says the renderer lays out the tree, so Document.HTML may be
	// left empty. A parser may ignore it.
	SkipHTML bool
}

type ParseResponse struct {
	Document Document
}

// Document is what the parser emits and later stages read.
type Document struct {
	// HTML is the body fragment (no <html>/<head>), user <style> blocks
	// included where the author put them.
	HTML string
	// Root is the backend-neutral tree (KindDocument).
	Root *Node
	// Encoded is the tree in its wire form, carried instead of Root by a
	// process that relays the document without reading it: the host, from
	// the parser to the renderer (see sdk/plugin.Client.RelayTrees). When
	// a document is sent to a plugin, Root wins if both are set. Plugins
	// always receive Root.
	Encoded []byte
	// Title is the document's title: the text of its first heading, or
	// empty; parse-goldmark puts the title of a document's front matter
	// ahead of it.
	Title string
	// Outline lists the headings in document order.
	Outline []Heading
}

// Heading is one entry of a document outline.
type Heading struct {
	Level int    // 1..6
	Text  string // plain text
	ID    string // anchor id in the HTML
}

// Styler turns a parsed document into a full HTML document plus tokens for
// backends that do not read CSS.
type Styler interface {
	Style(ctx context.Context, req *StyleRequest) (*StyleResponse, error)
}

type StyleRequest struct {
	// Document carries HTML, Title and Outline; the tree (Root) is not sent,
	// since styling works on the HTML and tree renderers get the tree
	// directly.
	Document  Document
	Theme     string
	Page      PageSize
	Numbering Numbering
	// Watermark is for the styler's information: the renderer draws it
	// (RenderRequest.Watermark). Empty: none.
	Watermark string
	// SkipHTML says the renderer reads only the tokens, so StyleResponse.HTML
	// may be left empty. A styler may ignore it. The host then sends an
	// empty Document: tokens depend on the theme and page options alone, so
	// it styles while the parser runs, and it may reuse the answer for an
	// equal request to the same plugin process. A styler's tokens must
	// therefore depend on nothing but the request and its configuration.
	SkipHTML bool
	// Lang is the document's language, a canonical BCP 47 tag such as
	// "fr" or "pt-BR" (the host validates it), for the HTML's lang
	// attribute. Empty: not known, and the HTML must not claim one, since
	// Chromium reads a missing attribute as its own locale (en-US).
	Lang string
}

type StyleResponse struct {
	// HTML is a complete document: theme CSS, @page rules, then the user's
	// <style> blocks last so they win.
	HTML   string
	Tokens Tokens
}

// Renderer lays out a styled document as PDF.
type Renderer interface {
	Render(ctx context.Context, req *RenderRequest) (*RenderResponse, error)
}

// PartRenderer is a Renderer that lays out a tree as its parts arrive; it
// declares CapReadsTreeParts. The SDK serves RenderParts for a plain
// Renderer by joining the parts and calling Render.
type PartRenderer interface {
	Renderer
	// RenderParts renders as Render does, with the tree coming from parts:
	// req.Document has no tree, and its title and outline are those of
	// parts.Rest once Next has returned io.EOF.
	RenderParts(ctx context.Context, req *RenderRequest, parts Parts) (*RenderResponse, error)
}

// Parts yields the parts of a tree as they are parsed.
type Parts interface {
	// Next returns the next part, waiting for it until ctx ends; after the
	// last one it returns io.EOF. Any other error means the tree is
	// incomplete: the render must fail.
	Next(ctx context.Context) (Part, error)
	// Rest is the document without its tree (title and outline), known
	// once Next has returned io.EOF.
	Rest() Document
}

type RenderRequest struct {
	HTML      string
	Document  Document
	Tokens    Tokens
	Page      PageSize
	Numbering Numbering
	// Watermark is drawn on every page, where the document cannot hide
	// it: not as HTML that the document's CSS reaches. Empty: none.
	Watermark string
	// Lang is the document's language, a canonical BCP 47 tag, for the
	// PDF's /Lang: what screen readers speak it as. Empty: not known, and
	// the PDF claims none. A renderer of HTML finds it in the HTML too.
	Lang string
}

type RenderResponse struct {
	PDF   []byte
	Pages int
}

// Sink hosts PDFs for output=url and serves them back.
type Sink interface {
	Store(ctx context.Context, req *StoreRequest) (*StoreResponse, error)
	Open(ctx context.Context, req *OpenRequest) (*OpenResponse, error)
}

type StoreRequest struct {
	Owner    string // user id
	Filename string // suggested download name, e.g. "Report.pdf"
	PDF      []byte
	TTL      time.Duration
}

type StoreResponse struct {
	// ID names the file to Open and Delete. The host puts it in a URL
	// path as one segment, so it is made of letters, digits and . _ ~ -
	// only, at most MaxFileIDLen bytes (see ValidFileID): a layout of
	// directories goes in the sink's own mapping, not as / in the id.
	ID string
	// URL is set when the sink hands out its own URL (e.g. presigned S3);
	// empty means the host serves the file at /v1/files/{ID}. When set,
	// it is an absolute http or https URL.
	URL       string
	ExpiresAt time.Time
}

// Deleter is a Sink that can delete what it stored. The host deletes the
// file of a request that failed after its Store (the client gone before
// the answer, the charge failed), whose id no one was given; a sink that
// is not a Deleter leaves such files to expire with their TTL (through the
// SDK's client, its Delete answers errors.ErrUnsupported). Deleting a file
// that is already gone succeeds.
type Deleter interface {
	Delete(ctx context.Context, req *DeleteRequest) error
}

type DeleteRequest struct {
	ID string
}

// OpenRequest asks for a hosted file, or a byte range of it.
type OpenRequest struct {
	ID     string
	Offset int64
	Length int64 // -1: to the end
}

type OpenResponse struct {
	Size      int64 // the whole file's size
	Filename  string
	ETag      string
	Created   time.Time
	ExpiresAt time.Time
	// Body reads the requested range; the caller closes it.
	Body io.ReadCloser
}

// MaxFileIDLen bounds a hosted file's id.
const MaxFileIDLen = 200

// ValidFileID reports whether id can be a hosted file's id: one URL path
// segment that needs no escaping. The host refuses a Store whose id is not,
// since /v1/files/{id} could never find it: an id with a / in it matches no
// route, and one with ? or # is cut short by the client.
func ValidFileID(id string) bool {
	if id == "" || len(id) > MaxFileIDLen || id == "." || id == ".." {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '~' || c == '-') {
			return false
		}
	}
	return true
}
