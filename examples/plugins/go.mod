module github.com/mcphost/mcphost/examples/plugins

go 1.26.0

require github.com/extism/go-pdk v1.1.3
