module github.com/mdpress/mdpress/host

go 1.26.8

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/getkin/kin-openapi v0.152.0 // indirect
	github.com/gorilla/mux v1.8.1 // indirect
	github.com/hashicorp/go-hclog v1.6.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

require (
	github.com/mdpress/mdpress/core v0.0.0
	github.com/mdpress/mdpress/sdk v0.0.0
)

replace (
	github.com/mdpress/mdpress/core => ../core
	github.com/mdpress/mdpress/sdk => ../sdk
)
