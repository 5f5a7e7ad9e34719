// Command auth-apikey is the mdpress auth plugin: it turns a bearer API key
// into the account and plan it belongs to.
package main

import (
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/plugins/auth-apikey/apikey"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameAuth, apikey.New(log))
}
