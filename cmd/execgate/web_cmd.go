package main

import (
	"context"
	"fmt"
	"html"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/hub"
	"github.com/execgate/execgate/shim"
	"github.com/execgate/execgate/web"
)

func newWebCmd(g *globals) *cobra.Command {
	var (
		port       int
		listen     string
		allowHosts []string
		noOpen     bool
	)
	cmd := &cobra.Command{
		Use:   "web [--port N] [--listen ADDR] [--allow-host NAME] [--no-open]",
		Short: "Approve agents' commands, see decisions and edit the policy in a browser",
		Long: `web serves the web approver on http://127.0.0.1:7780 while it runs, prints
a login URL with a one-time token and opens it in a browser when one is
available. The page is an approver like execgate approve: each open tab is
one approver connection to the hub (start the hub first: execgate hub
--detach), and the first answer from any approver wins.

The token works once (within 15 minutes) and is exchanged for a session
cookie; run web again for another link. --listen binds another address
(say a private network's); anyone who can reach it still needs a login
link, but the traffic is plain HTTP: prefer ssh -L or tailscale serve.
--allow-host names a host the page is reached by through a proxy.`,
		Args: noArgs("web"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			if listen != "" {
				addr = listen
				if _, _, err := net.SplitHostPort(addr); err != nil {
					addr = net.JoinHostPort(listen, strconv.Itoa(port))
				}
			}
			name := "web@" + hostName()
			auditPath, err := shim.DefaultAuditPath(g.getenv)
			if err != nil {
				return err
			}
			srv, err := web.Listen(web.Options{
				Addr:        addr,
				AllowHosts:  allowHosts,
				AuditPath:   auditPath,
				Name:        name,
				Logger:      hubLogger(g),
				Checkpoints: webCheckpoints(g),
				Undo: func(ctx context.Context, root string, seq uint64, preview bool) ([]string, error) {
					return undoForApprover(ctx, g, root, seq, preview)
				},
				Dial: func(ctx context.Context) (*hub.Client, error) {
					c, _, err := dialAs(ctx, g, hub.DialOptions{Role: hub.RoleApprover, Name: name, Kind: hub.KindWeb})
					return c, err
				},
			})
			if err != nil {
				return err
			}
			if !srv.Loopback() {
				fmt.Fprintf(g.stderr, "execgate: warning: the web approver listens on %s, beyond this machine; it still asks for a login link, but the traffic is not encrypted\n", srv.Addr())
			}
			if c, _, err := dialApprover(cmd.Context(), g, name); err != nil {
				fmt.Fprintf(g.stderr, "execgate: the hub is not reachable yet (%v); the page will connect once it runs (execgate hub --detach)\n", err)
			} else {
				c.Close()
			}
			url := srv.LoginURL()
			fmt.Fprintf(g.stdout, "execgate web: open %s\n(the link works once; run execgate web again for another)\n", url)
			if !noOpen {
				openBrowser(g, url)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			return srv.Serve(ctx)
		},
	}
	cmd.Flags().IntVar(&port, "port", 7780, "port to listen on (0 picks a free one)")
	cmd.Flags().StringVar(&listen, "listen", "", "listen on this address instead of 127.0.0.1 (host or host:port; prints a warning)")
	cmd.Flags().StringSliceVar(&allowHosts, "allow-host", nil, "also answer to this host name (a proxy's, e.g. tailscale serve); repeatable")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "print the URL without opening a browser")
	return cmd
}

// hostName labels this approver in the hub; "localhost" when unknown.
func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// openBrowser starts the desktop's URL opener when there is a desktop;
// it never fails the command: the URL is printed in any case.
func openBrowser(g *globals, url string) {
	var opener string
	switch {
	case runtime.GOOS == "darwin":
		opener = "open"
	case g.getenv("DISPLAY") != "" || g.getenv("WAYLAND_DISPLAY") != "":
		opener = "xdg-open"
	default:
		return
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		return
	}
	// The login link is a credential until it is used: on a command line
	// every local user could read it (/proc/PID/cmdline) and log in first.
	// The browser is given a private file that forwards to it instead.
	page, err := loginPage(url)
	if err != nil {
		return
	}
	c := exec.Command(path, page)
	if c.Start() == nil {
		go func() {
			c.Wait()
			// The browser has read the file by now, or never will.
			time.Sleep(30 * time.Second)
			os.RemoveAll(filepath.Dir(page))
		}()
	}
}

// loginPage writes a page, readable only by this user, that forwards the
// browser to url, and returns its path.
func loginPage(url string) (string, error) {
	dir, err := os.MkdirTemp("", "execgate-web-")
	if err != nil {
		return "", err
	}
	page := filepath.Join(dir, "login.html")
	body := `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` +
		html.EscapeString(url) + `"><title>execgate web</title><a href="` + html.EscapeString(url) + `">execgate web</a>`
	if err := os.WriteFile(page, []byte(body), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return page, nil
}
