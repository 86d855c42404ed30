//go:build !metal

package ggmltest

// Metal reports whether the tests run on the Metal backend (the metal
// build tag, make mac-test).
const Metal = false
