//go:build cgo

// Package ggml is H3 Studio's thin cgo binding to ggml, compiled from the
// pinned github.com/ollama/ollama module. Model code builds graphs through
// it; ggml's CPU backend runs them here and its Metal backend on a Mac.
package ggml

/*
#include <stddef.h>
size_t ggml_backend_dev_count(void);
*/
import "C"

import (
	_ "github.com/ollama/ollama/ml/backend/ggml/ggml/src"
)

// DeviceCount reports how many ggml backend devices are registered.
func DeviceCount() int { return int(C.ggml_backend_dev_count()) }
