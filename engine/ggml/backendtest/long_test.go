//go:build long

package backendtest

import "testing"

func TestCausalAttention32768(t *testing.T) { causalLong(t, cpu(t), 32768) }
