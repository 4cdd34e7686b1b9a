// Package mcp owns zhizhi's Model Context Protocol server: the tools an
// agent uses to search the active corpus release, read a work, cite it
// and, with the acquire scope, fetch a page through the polite client;
// the stdio transport (`zhizhi mcp`) and the streamable HTTP handler
// serve mounts at /mcp. The corpus and the acquisition API stay behind a
// Backend; this package decides who may call which tool, validates
// arguments, and marks every piece of web-sourced text in a tool result as
// untrusted data, inside a fence the text itself cannot close.
package mcp
