// Command render-fpdf is the mdpress render stage without a browser: it
// lays out the parsed document tree itself and draws it with fpdf and
// embedded DejaVu fonts. It is the fallback of the embedded deployment.
package main

import (
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/plugins/render-fpdf/render"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameRender, render.New(log))
}
