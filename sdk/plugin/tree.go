package plugin

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// errBadTree reports an encoded tree that does not describe one tree; it
// comes from a buggy or hostile peer, never from this package's encoder.
var errBadTree = errors.New("malformed document tree")

// encodeTree flattens the tree under root in preorder (see Tree in
// common.proto). Attributes are written in key order, so the same tree
// always encodes to the same bytes.
func encodeTree(root *stage.Node) ([]byte, error) {
	if root == nil {
		return nil, nil
	}
	var t pb.Tree
	kinds := make(map[stage.Kind]uint32)
	var keys []string
	stack := []*stage.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil {
			return nil, fmt.Errorf("%w: nil node", errBadTree)
		}
		k, ok := kinds[n.Kind]
		if !ok {
			k = uint32(len(t.Kinds))
			kinds[n.Kind] = k
			t.Kinds = append(t.Kinds, string(n.Kind))
		}
		t.Kind = append(t.Kind, k)
		t.Children = append(t.Children, uint32(len(n.Children)))
		t.Attrs = append(t.Attrs, uint32(len(n.Attrs)))
		t.Strings = append(t.Strings, n.Text...)
		t.Lengths = append(t.Lengths, uint32(len(n.Text)))
		keys = keys[:0]
		for key := range n.Attrs {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			v := n.Attrs[key]
			t.Strings = append(append(t.Strings, key...), v...)
			t.Lengths = append(t.Lengths, uint32(len(key)), uint32(len(v)))
		}
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
	return proto.Marshal(&t)
}

// decodeTree rebuilds a tree from its wire form. Nodes and children slices
// are carved out of two allocations, and every string is a substring of one,
// so decoding costs a handful of allocations plus one map per node that has
// attributes. Input is checked before it is trusted: a bad tree is an
// error, never a panic or an outsized allocation.
func decodeTree(b []byte) (*stage.Node, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var t pb.Tree
	if err := proto.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadTree, err)
	}
	n := len(t.Kind)
	if n == 0 || len(t.Children) != n || len(t.Attrs) != n {
		return nil, fmt.Errorf("%w: %d kinds, %d child counts, %d attribute counts", errBadTree, n, len(t.Children), len(t.Attrs))
	}
	kinds := make([]stage.Kind, len(t.Kinds))
	for i, k := range t.Kinds {
		kinds[i] = stage.Kind(k)
	}
	strs := string(t.Strings)
	lengths := t.Lengths
	at := 0 // next byte of strs
	next := func() (string, bool) {
		if len(lengths) == 0 || uint64(lengths[0]) > uint64(len(strs)-at) {
			return "", false
		}
		s := strs[at : at+int(lengths[0])]
		at += int(lengths[0])
		lengths = lengths[1:]
		return s, true
	}

	nodes := make([]stage.Node, n)
	slots := make([]*stage.Node, n-1) // every node but the root is someone's child
	free := 0
	var open []*stage.Node // ancestors still expecting children
	for i := range nodes {
		node := &nodes[i]
		if int(t.Kind[i]) >= len(kinds) {
			return nil, fmt.Errorf("%w: kind %d of %d", errBadTree, t.Kind[i], len(kinds))
		}
		node.Kind = kinds[t.Kind[i]]
		var ok bool
		if node.Text, ok = next(); !ok {
			return nil, fmt.Errorf("%w: strings end early", errBadTree)
		}
		if a := t.Attrs[i]; a > 0 {
			if uint64(a) > uint64(len(lengths)/2) {
				return nil, fmt.Errorf("%w: strings end early", errBadTree)
			}
			node.Attrs = make(map[string]string, a)
			for range a {
				key, _ := next()
				v, ok := next()
				if !ok {
					return nil, fmt.Errorf("%w: strings end early", errBadTree)
				}
				node.Attrs[key] = v
			}
		}
		if i > 0 {
			if len(open) == 0 {
				return nil, fmt.Errorf("%w: node %d has no parent", errBadTree, i)
			}
			parent := open[len(open)-1]
			parent.Children = append(parent.Children, node)
			if len(parent.Children) == cap(parent.Children) {
				open = open[:len(open)-1]
			}
		}
		if c := t.Children[i]; c > 0 {
			if uint64(c) > uint64(len(slots)-free) {
				return nil, fmt.Errorf("%w: node %d claims %d children", errBadTree, i, c)
			}
			// A full-capacity slice of its own: appending to one node's
			// children later never overwrites a sibling's.
			node.Children = slots[free : free : free+int(c)]
			free += int(c)
			open = append(open, node)
		}
	}
	if len(open) > 0 || len(lengths) > 0 || at != len(strs) {
		return nil, fmt.Errorf("%w: %d nodes missing children, %d strings left", errBadTree, len(open), len(lengths))
	}
	return &nodes[0], nil
}
