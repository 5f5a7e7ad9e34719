// Command sink-s3 is the mdpress sink plugin that hosts PDFs in an
// S3-compatible bucket.
package main

import (
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/plugins/sink-s3/bucket"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameSink, bucket.New(log))
}
