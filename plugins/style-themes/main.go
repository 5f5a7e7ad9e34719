// Command style-themes is the built-in style stage: it wraps a parsed
// document in a complete HTML document with a theme's CSS and the page
// rules, and hands out the theme's tokens for backends that do not read CSS.
package main

import (
	"github.com/mdpress/mdpress/plugins/style-themes/themes"
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameStyle, themes.New(log))
}
