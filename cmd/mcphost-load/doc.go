// Command mcphost-load measures the mcphost daemon under load.
package main
