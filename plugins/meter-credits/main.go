// Command meter-credits is the mdpress meter plugin: it reserves, commits
// and refunds credits in the account store and reports balances.
package main

import (
	sdkplugin "github.com/mdpress/mdpress/sdk/plugin"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/mdpress/mdpress/plugins/meter-credits/credits"
)

func main() {
	log := sdkplugin.Logger()
	sdkplugin.Serve(stage.NameMeter, credits.New(log))
}
