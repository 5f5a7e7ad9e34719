// Command parse-goldmark is the built-in parse stage: GitHub Flavored
// Markdown to an HTML body fragment and a backend-neutral document tree.
package main

import (
	"github.com/mdpress/mdpress/plugins/parse-goldmark/markdown"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameParse, markdown.New(log))
}
