// Package preloadtest runs the C test programs of preload/ on Linux's
// stack and preloaded on Savanna's (internal/stackproc), and compares
// what each call returned. It holds specs only.
package preloadtest
