// Command render-chrome is the mdpress render stage on Chromium.
package main

import (
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/plugins/render-chrome/chrome"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameRender, chrome.New(log))
}
