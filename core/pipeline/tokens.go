package pipeline

import (
	"reflect"
	"sync"

	"github.com/mdpress/mdpress/sdk/stage"
)

// maxTokenSets bounds the cache; the key space (themes x page sizes x
// numbering x watermark x languages) is small, so the bound is only met
// when stylers come and go with plugin relaunches or clients send many
// languages.
const maxTokenSets = 512

// tokenCache keeps a styler's answers to requests that carry no document
// (SkipHTML: the renderer reads only tokens). Such an answer depends on the
// request's options and the styler's configuration alone (see
// stage.StyleRequest), so an equal request to the same styler is answered
// without a call. A relaunched plugin is a new styler, whose requests never
// meet the old one's entries.
type tokenCache struct {
	mu sync.Mutex
	m  map[tokenKey]stage.Tokens
}

type tokenKey struct {
	styler    stage.Styler
	theme     string
	page      stage.PageSize
	numbering stage.Numbering
	watermark string
	// lang is in the key because a styler may choose tokens by it (fonts
	// for a script), though the built-in one does not.
	lang string
}

// key returns the cache key for req to styler, or false when the answer
// may not be reused: the request carries a document, or the styler cannot
// be told apart from another (a value of a type that is not comparable).
func (c *tokenCache) key(styler stage.Styler, req *stage.StyleRequest) (tokenKey, bool) {
	if !req.SkipHTML || !isEmpty(req.Document) || !reflect.TypeOf(styler).Comparable() {
		return tokenKey{}, false
	}
	return tokenKey{styler: styler, theme: req.Theme, page: req.Page, numbering: req.Numbering, watermark: req.Watermark, lang: req.Lang}, true
}

func isEmpty(d stage.Document) bool {
	return d.HTML == "" && d.Root == nil && d.Encoded == nil && d.Title == "" && len(d.Outline) == 0
}

func (c *tokenCache) get(k tokenKey) (stage.Tokens, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[k]
	return t, ok
}

func (c *tokenCache) put(k tokenKey, t stage.Tokens) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxTokenSets {
		c.m = make(map[tokenKey]stage.Tokens)
	}
	c.m[k] = t
}
