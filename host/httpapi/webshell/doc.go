// Package webshell holds the WebShell: the browser UI a person uses to browse
// MCP servers' tools, call them through forms generated from each tool's
// input schema, and read a session's transcript.
//
// The package owns static files only. [Assets] returns them as an [io/fs.FS];
// host/httpapi serves index.html at "/" and every other file at
// "/assets/NAME" with its content type and the WebShell's Content Security
// Policy. The files are plain HTML, CSS and ES2022 modules with no build
// step and no third-party code: index.html, style.css, app.js (start-up,
// state and wiring), api.js (authenticated fetch), sse.js (the event stream
// reader), schemaform.js (JSON Schema to form), render.js (transcript cards),
// dom.js (element and formatting helpers), toolsearch.js (the tool search
// box's debounced requests to the daemon's ranker), display.js (where MCP Apps are
// mounted into transcript entries) and appbridge.js (the host side of the
// MCP App bridge: the double sandboxed frame, the JSON-RPC messages, and the
// App's gated requests, which the page makes through the API on the App's
// behalf, never giving it the token, and the preamble put before the App's
// HTML that closes WebRTC and reports the App's uncaught errors),
// appchrome.js (what the host draws around an App: fullscreen and
// picture-in-picture, the panel of the tools an App registers, the download
// dialog) and apps.css (their styles and the narrow-window layout).
//
// The page programs against the HTTP API in docs/api.md. It keeps the bearer
// token in sessionStorage (moved there from a "#token=" fragment, which is
// then removed from the address bar and history) and sends it only in the
// Authorization header; the event stream is read with fetch because
// EventSource cannot send that header.
//
// The page must never put data from the API or from an MCP server into the
// DOM as markup: everything goes through textContent and createElement, and
// media only as data: URLs of the matching image/* or audio/* type. It must
// work under the CSP the handler sends (no inline script or style, no
// external origin), so nothing here may rely on either.
package webshell
