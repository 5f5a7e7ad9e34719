package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// taskClasses marks task lists the way GitHub's HTML does
// (ul.contains-task-list > li.task-list-item), so that stylesheets can drop
// their bullets without :has().
type taskClasses struct{}

func (taskClasses) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	// Only blocks can hold list items, so the walk skips inline content;
	// that keeps it shallow however deeply emphasis nests.
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Type() != ast.TypeBlock {
				continue
			}
			if item, ok := c.(*ast.ListItem); ok && taskCheckBox(item) != nil {
				item.SetAttributeString("class", []byte("task-list-item"))
				n.SetAttributeString("class", []byte("contains-task-list"))
			}
			visit(c)
		}
	}
	visit(doc)
}

var _ parser.ASTTransformer = taskClasses{}
