// Command hubserve serves a folder as a hub repository on loopback (the
// download tests' hubtest server), so `h3studio download --endpoint` can
// be tried by hand against faults:
//
//	go run ./tools/hubserve -repo MiniMaxAI/MiniMax-H3 -dir SNAPSHOT -drop FL2VA/audio_vae/model.safetensors
//
// It prints the endpoint, then each request, until interrupted.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"h3studio/app/download/hubtest"
)

func main() {
	repo := flag.String("repo", "MiniMaxAI/MiniMax-H3", "repository id to serve the folder as")
	dir := flag.String("dir", "", "folder to serve")
	token := flag.String("token", "", "Bearer token the hub requires (empty: none)")
	faults := map[string]hubtest.Fault{"drop": hubtest.Drop, "corrupt": hubtest.Corrupt, "missing": hubtest.Missing, "short": hubtest.Short, "stall": hubtest.Stall, "busy": hubtest.Busy}
	paths := map[string]*string{}
	for name := range faults {
		paths[name] = flag.String(name, "", "file to "+name+" on its next request")
	}
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "hubserve: -dir is required: the folder to serve as "+*repo)
		os.Exit(2)
	}
	s, err := hubtest.New(*repo, *dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hubserve:", err)
		os.Exit(1)
	}
	defer s.Close()
	s.SetToken(*token)
	for name, p := range paths {
		if *p != "" {
			s.Inject(*p, faults[name])
		}
	}
	fmt.Printf("serving %s as %s at %s (storage host %s)\n", *dir, *repo, s.Hub.URL, s.CDN.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	seen := 0
	for {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
		reqs := s.Requests()
		for _, r := range reqs[seen:] {
			fmt.Printf("%d %s%s range=%q auth=%v\n", r.Status, r.Host, r.Path, r.Range, r.Auth)
		}
		seen = len(reqs)
	}
}
