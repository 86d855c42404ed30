package engine

// SetTapForTest installs a tap that sees the named intermediates of every
// generation (the end-to-end parity test compares them with the
// reference's).
func SetTapForTest(e *Engine, tap func(name string, index int, v any)) { e.tap = tap }
