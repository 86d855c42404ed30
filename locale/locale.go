// Package locale makes a C or POSIX locale with a codeset (C.UTF-8, the
// default of containers, CI runners and many servers) readable by Fyne,
// before Fyne's lang package reads it in its own init.
//
// Fyne's lang init asks go-locale for the user's languages. go-locale
// (jeandeaual/go-locale, Unix) takes the first of LC_ALL, LC_MESSAGES and
// LANG, treats exactly "C" and "POSIX" as "no language", and otherwise cuts
// the codeset off: "C.UTF-8" becomes the tag "C", which
// golang.org/x/text/language rejects, and Fyne logs three lines of
// "Fyne error: Error parsing user locale C" on stderr before the CLI's own
// output. go-locale consults LANGUAGE for any locale but exact C/POSIX, so
// naming English there, the language C's messages are written in, gives
// Fyne the same answer it gives for LANG=C without touching the LC_*
// variables that child processes (FFmpeg) inherit.
//
// The package must be imported by main (blank import) and must import
// nothing but os and strings: Go initialises packages in import-path order,
// each after its imports, so a package whose imports are a subset of those
// of text/template (which lang imports, and whose path sorts after
// "h3studio/") is initialised before text/template, hence before lang.
// TestVersionPrintsOneLine in the root package holds that.
package locale

import (
	"os"
	"strings"
)

func init() {
	if v, ok := fallback(os.Getenv); ok {
		// Setenv fails only for a name holding '=' or NUL: a programmer error.
		if err := os.Setenv("LANGUAGE", v); err != nil {
			panic("locale: " + err.Error())
		}
	}
}

// fallback reports the LANGUAGE value that go-locale needs when the
// environment (read through getenv) names the C or POSIX locale with a
// codeset or modifier and LANGUAGE is unset; ok is false when nothing needs
// to change.
func fallback(getenv func(string) string) (language string, ok bool) {
	if getenv("LANGUAGE") != "" {
		return "", false
	}
	for _, name := range [...]string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		base, _, _ := strings.Cut(v, ".")
		base, _, _ = strings.Cut(base, "@")
		if v != base && (base == "C" || base == "POSIX") {
			return "en", true
		}
		return "", false
	}
	return "", false
}
