package markdown

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Config is the plugin's config block.
type Config struct {
	// MaxDepth is the deepest level a node of the tree may sit at (the
	// document is level 0).
	MaxDepth int `json:"maxDepth"`
	// MaxNodes is the most nodes a tree may hold; more is refused. Real
	// documents take 23 to 35 bytes of Markdown a node (the corpus), so the
	// default admits about 25 MiB of them, well over the host's body limit,
	// while hostile input that packs a node into every byte or two is
	// refused.
	MaxNodes int `json:"maxNodes"`
}

// Bounds of the config values. The depth floor leaves room for a table
// (table, row, cell) and a few inline levels under the deepest block; the
// ceiling stays well under protobuf's nesting limit of 10,000 messages,
// which the tree crosses on its way to the next stage.
const (
	DefaultMaxDepth = 64
	DefaultMaxNodes = 1_000_000
	minDepth        = 16
	maxDepth        = 1000
	minNodes        = 1000
	maxNodes        = 50_000_000
)

// DefaultConfig is the configuration of a parser that was never configured.
func DefaultConfig() Config {
	return Config{MaxDepth: DefaultMaxDepth, MaxNodes: DefaultMaxNodes}
}

// ParseConfig decodes a config block strictly, applies defaults and
// validates; errors are *stage.Error naming the bad key.
func ParseConfig(raw []byte) (Config, error) {
	cfg := DefaultConfig()
	if len(bytes.TrimSpace(raw)) == 0 {
		return cfg, nil
	}
	var in struct {
		MaxDepth *int `json:"maxDepth"`
		MaxNodes *int `json:"maxNodes"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return cfg, stage.Wrap(stage.CodeInvalid, err, "parse-goldmark config: "+describe(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return cfg, stage.Errorf(stage.CodeInvalid, "parse-goldmark config: trailing data after the object")
	}
	if in.MaxDepth != nil {
		if *in.MaxDepth < minDepth || *in.MaxDepth > maxDepth {
			return cfg, stage.Errorf(stage.CodeInvalid, "parse-goldmark config: maxDepth must be between %d and %d, got %d", minDepth, maxDepth, *in.MaxDepth)
		}
		cfg.MaxDepth = *in.MaxDepth
	}
	if in.MaxNodes != nil {
		if *in.MaxNodes < minNodes || *in.MaxNodes > maxNodes {
			return cfg, stage.Errorf(stage.CodeInvalid, "parse-goldmark config: maxNodes must be between %d and %d, got %d", minNodes, maxNodes, *in.MaxNodes)
		}
		cfg.MaxNodes = *in.MaxNodes
	}
	return cfg, nil
}

// describe turns a decoding error into a message that names the key.
func describe(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return "the block must be a JSON object"
		}
		return "key " + typeErr.Field + " must be a " + typeErr.Type.String()
	}
	msg := err.Error()
	if key, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + key
	}
	return "invalid JSON: " + msg
}
