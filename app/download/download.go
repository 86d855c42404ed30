// Package download fetches a model repository's snapshot from a Hugging
// Face compatible hub into a folder, the way the hub's own clients do: it
// lists the files with /api/models/REPO/revision/REV?blobs=true, fetches
// each from /REPO/resolve/COMMIT/PATH (following the redirect to the
// storage host for large files), several at once, resumes a broken or
// interrupted transfer from its .partial file with a Range request,
// verifies large files against their LFS SHA-256 and small ones against
// their git blob id (the hub's ETag), renames a file into place only once
// it is verified, and records the digest in the folder's manifest
// (ManifestName), which tells the next run what it may skip.
//
// On each fault (the tests inject each against hubtest):
//   - dropped connection, stalled transfer, 5xx or 429: resumed with a
//     Range request from the last byte written, after a doubling wait;
//     six tries without progress give up on the file, keeping its partial
//   - 416 for the rest of a partial: the partial is already whole and is
//     verified; a partial that does not match starts again from zero
//   - corrupt (digest mismatch) or truncated (fewer bytes than listed):
//     the partial is removed and the file refused in one sentence
//   - 404 for a listed file: that file fails, the others go on
//   - 401 or 403: one sentence about HF_TOKEN, and the download stops
//   - a disk too small: refused before any transfer; a disk that fills:
//     the download stops, partials kept for the next run
//
// It knows nothing of MiniMax-H3 beyond the names of the two partition
// folders; app validates the finished folder.
package download

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultEndpoint is the hub used when Options.Endpoint is empty.
const DefaultEndpoint = "https://huggingface.co"

// Options configures a Client. The zero value downloads anonymously from
// DefaultEndpoint.
type Options struct {
	// Endpoint is the hub's base URL ("": DefaultEndpoint). main passes
	// HF_ENDPOINT; the --endpoint flag overrides it.
	Endpoint string
	// Token is sent as a Bearer token to the endpoint's own host and
	// never to a redirect target elsewhere, nor written to any log or
	// error ("": anonymous). main passes HF_TOKEN.
	Token string
	// Concurrency bounds the files transferred at once (0: 4).
	Concurrency int
	// RetryDelay is the first wait before retrying a dropped transfer; it
	// doubles up to 30 s (0: 1 s).
	RetryDelay time.Duration
	// StallTimeout gives up on a request that has received nothing for
	// this long, and resumes it (0: 60 s).
	StallTimeout time.Duration
	// Transport carries the requests (nil: http.DefaultTransport).
	Transport http.RoundTripper
	// UserAgent names the application in requests ("": h3studio).
	UserAgent string
	// Logger receives retries and skipped files (nil: slog.Default()).
	Logger *slog.Logger
}

// Client talks to one hub.
type Client struct {
	base         *url.URL
	http         *http.Client
	hasToken     bool
	concurrency  int
	retryDelay   time.Duration
	stallTimeout time.Duration
	log          *slog.Logger
}

// New checks o and returns a client for its hub.
func New(o Options) (*Client, error) {
	ep := o.Endpoint
	if ep == "" {
		ep = DefaultEndpoint
	}
	base, err := url.Parse(strings.TrimRight(ep, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("download: the hub endpoint %q is not an http(s) URL; write it like %s", ep, DefaultEndpoint)
	}
	c := &Client{base: base, hasToken: o.Token != "", concurrency: o.Concurrency, retryDelay: o.RetryDelay, log: o.Logger}
	if c.concurrency <= 0 {
		c.concurrency = 4
	}
	if c.retryDelay <= 0 {
		c.retryDelay = time.Second
	}
	if c.stallTimeout = o.StallTimeout; c.stallTimeout <= 0 {
		c.stallTimeout = time.Minute
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	rt := o.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	ua := o.UserAgent
	if ua == "" {
		ua = "h3studio"
	}
	c.http = &http.Client{Transport: &authTransport{base: rt, scheme: base.Scheme, host: base.Host, token: o.Token, userAgent: ua}}
	return c, nil
}

// Endpoint is the hub's base URL.
func (c *Client) Endpoint() string { return c.base.String() }

// authTransport adds the token to requests for the hub's own host only.
// Go's client would forward it across a redirect to a subdomain (the
// hub's storage hosts are subdomains), so the decision is made per
// request here rather than left to the redirect policy.
type authTransport struct {
	base                           http.RoundTripper
	scheme, host, token, userAgent string
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Del("Authorization")
	if t.token != "" && r.URL.Scheme == t.scheme && r.URL.Host == t.host {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	r.Header.Set("User-Agent", t.userAgent)
	return t.base.RoundTrip(r)
}

// ErrAuth marks a refusal by the hub to let this token (or no token) read
// the repository.
var ErrAuth = errors.New("download: not authorized")

// stopError is a failure that ends the whole download; Is reports its
// sentinel (ErrAuth, ErrNoSpace) while the text stays one sentence.
type stopError struct {
	kind error
	msg  string
}

func (e *stopError) Error() string        { return "download: " + e.msg }
func (e *stopError) Is(target error) bool { return target == e.kind }

func stop(kind error, format string, args ...any) error {
	return &stopError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// statusError turns a hub refusal into one sentence; path is empty for the
// listing itself. The hub answers 401, not 404, for a repository it does
// not show an anonymous client, and says which in X-Error-Code.
func (c *Client) statusError(resp *http.Response, repo, path, revision string) error {
	code := resp.StatusCode
	what := repo
	if path != "" {
		what = path + " of " + repo
	}
	switch {
	case resp.Header.Get("X-Error-Code") == "RepoNotFound":
		return fmt.Errorf("download: the hub at %s has no repository %s that this client may see (%d); check the name, and set HF_TOKEN if it is private", c.base.Host, repo, code)
	case (code == http.StatusUnauthorized || code == http.StatusForbidden) && c.hasToken:
		return stop(ErrAuth, "the hub refused the token for %s (%d); HF_TOKEN is expired, revoked or lacks access, so make a new one in your hub account settings", what, code)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return stop(ErrAuth, "%s needs a token (%d): it is gated or private, so accept its terms on the hub and set HF_TOKEN", what, code)
	case code == http.StatusNotFound && path == "":
		return fmt.Errorf("download: the hub at %s has no repository %s at revision %s (404); check the name and --revision", c.base.Host, repo, revision)
	case code == http.StatusNotFound:
		return &FileError{Path: path, Msg: "is listed but the hub answers 404 for it; the repository changed while downloading, so run the download again"}
	default:
		return fmt.Errorf("download: the hub answered %d %s for %s; try again later", code, http.StatusText(code), what)
	}
}

// FileError is a file that could not be fetched or failed verification;
// nothing of it is left at its final path.
type FileError struct {
	Path string
	Msg  string
}

func (e *FileError) Error() string { return "download: " + e.Path + " " + e.Msg }

// ErrNoSpace marks a download the folder's disk cannot hold.
var ErrNoSpace = errors.New("download: not enough disk space")
