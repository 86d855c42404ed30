package locale

import "testing"

func TestFallback(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string // "" means unchanged
	}{
		{map[string]string{"LANG": "C.UTF-8"}, "en"},
		{map[string]string{"LC_ALL": "C.utf8", "LANG": "de_DE.UTF-8"}, "en"},
		{map[string]string{"LC_MESSAGES": "POSIX.UTF-8"}, "en"},
		{map[string]string{"LANG": "C@euro"}, "en"},
		// go-locale already reads exact C and POSIX as "no language".
		{map[string]string{"LANG": "C"}, ""},
		{map[string]string{"LC_ALL": "POSIX"}, ""},
		// The first set variable decides, as in go-locale and POSIX.
		{map[string]string{"LC_ALL": "fr_FR.UTF-8", "LANG": "C.UTF-8"}, ""},
		{map[string]string{"LC_MESSAGES": "C", "LANG": "C.UTF-8"}, ""},
		// The user's LANGUAGE is never overridden.
		{map[string]string{"LANG": "C.UTF-8", "LANGUAGE": "fr"}, ""},
		{map[string]string{"LANG": "en_US.UTF-8"}, ""},
		{map[string]string{"LANG": "Cy_GB.UTF-8"}, ""}, // a language whose name starts with C
		{map[string]string{}, ""},
	} {
		got, ok := fallback(func(k string) string { return c.env[k] })
		if ok != (c.want != "") || got != c.want {
			t.Errorf("%v: fallback %q, %v; want %q", c.env, got, ok, c.want)
		}
	}
}
