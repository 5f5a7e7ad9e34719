// Command sink-disk is the mdpress sink plugin that hosts PDFs on local disk.
package main

import (
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/plugins/sink-disk/disk"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameSink, disk.New(log))
}
