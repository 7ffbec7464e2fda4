package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/execgate/execgate/hub"
)

//go:embed assets
var assets embed.FS

// DefaultAddr is where the web approver listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7780"

// Options configure a Server.
type Options struct {
	// Addr is host:port to listen on; DefaultAddr when empty. Port 0
	// picks a free one.
	Addr string
	// AllowHosts are further names the page may be reached by (a
	// tailscale or reverse-proxy name), host or host:port.
	AllowHosts []string
	// Dial connects to the hub as an approver; called once per open tab.
	Dial func(ctx context.Context) (*hub.Client, error)
	// AuditPath is the audit log the history is read from; no history
	// when empty.
	AuditPath string
	// Checkpoints lists recent checkpoints of the user's workspaces,
	// newest first, and Undo undoes one (or with preview says what it
	// would change; checkpoint.UndoIn), returning the lines to show, the
	// summary last. Both run in this process, as its user: no undo view
	// without them.
	Checkpoints func(ctx context.Context) ([]Checkpoint, error)
	Undo        func(ctx context.Context, root string, seq uint64, preview bool) ([]string, error)
	// Name labels this approver in the hub (resolvedBy): "web@host".
	Name string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Server is a listening web approver.
type Server struct {
	o       Options
	ln      net.Listener
	hosts   hostPolicy
	secrets *secrets
	page    *template.Template
	static  http.Handler
	log     *slog.Logger
	// cookie is the session cookie's name, with this server's port in it:
	// a browser keeps one cookie per name and host whatever the port, so
	// two servers (or a stale tab of an earlier one) do not overwrite
	// each other's session.
	cookie string
}

// Listen opens the listener; Serve answers on it.
func Listen(o Options) (*Server, error) {
	if o.Dial == nil {
		return nil, errors.New("web: no hub dialer")
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Name == "" {
		o.Name = "web"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	page, err := template.ParseFS(assets, "assets/index.html")
	if err != nil {
		return nil, fmt.Errorf("web: page template: %w", err)
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("web: assets: %w", err)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("web: listen on %s: %w", o.Addr, err)
	}
	port := "0"
	if ap, ok := ln.Addr().(*net.TCPAddr); ok {
		port = strconv.Itoa(ap.Port)
	}
	return &Server{
		o: o, ln: ln, log: log, page: page, secrets: newSecrets(), cookie: cookieName + "_" + port,
		hosts:  hostPolicy{bound: ln.Addr().String(), extra: o.AllowHosts},
		static: http.StripPrefix("/static/", http.FileServerFS(sub)),
	}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Loopback reports whether the server listens on a loopback address only.
func (s *Server) Loopback() bool {
	ap, ok := s.ln.Addr().(*net.TCPAddr)
	return ok && ap.IP.IsLoopback()
}

// LoginURL mints a one-time login token and returns the URL that uses it.
// Each call makes a new token; each works once, within 15 minutes.
func (s *Server) LoginURL() string {
	host := s.Addr()
	if ap, ok := s.ln.Addr().(*net.TCPAddr); ok && ap.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", fmt.Sprint(ap.Port))
	}
	u := url.URL{Scheme: "http", Host: host, Path: "/login", RawQuery: url.Values{"token": {s.secrets.mintLogin(s.o.Now())}}.Encode()}
	return u.String()
}

// Serve answers requests until ctx ends, then closes the listener and
// the open tabs' connections.
func (s *Server) Serve(ctx context.Context) error {
	hs := &http.Server{
		Handler: s.Handler(),
		// A connection that sends nothing, or its headers a byte at a
		// time, is closed: with the per-party limits (ownerListener) no
		// one can hold the server's connections.
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    32 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(newOwnerListener(s.ln, s.log)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	hs.Close()
	return nil
}

// Handler is the whole site behind its guards.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", s.handleLogin)
	mux.Handle("GET /{$}", s.requireSession(http.HandlerFunc(s.handlePage)))
	mux.Handle("GET /static/", s.requireSession(s.static))
	mux.Handle("GET /ws", s.requireSession(http.HandlerFunc(s.handleSocket)))
	return s.guard(mux)
}

// securityHeaders go on every answer: the page runs only its own script
// and style, is never framed, never cached and never leaks its URL.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Frame-Options":        "DENY",
	"Cache-Control":          "no-store",
	"Referrer-Policy":        "no-referrer",
	"X-Content-Type-Options": "nosniff",
}

// guard checks Host and Origin on every request before anything else.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if !s.hosts.allows(r.Host) {
			s.refuse(w, r, http.StatusMisdirectedRequest, "this server does not answer to that host name; open the URL execgate web printed (or pass --allow-host)")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
			s.refuse(w, r, http.StatusForbidden, "cross-site request refused")
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.URL.Path != "/login" {
			s.refuse(w, r, http.StatusForbidden, "cross-site request refused")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers with one plain line saying what to do.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.log.Warn("web: refused", "path", r.URL.Path, "host", r.Host, "origin", r.Header.Get("Origin"), "why", msg)
	http.Error(w, "execgate web: "+msg, code)
}

// handleLogin exchanges a login token for a session cookie, then sends
// the browser to the page so the token leaves the address bar.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	session, ok := s.secrets.redeem(r.URL.Query().Get("token"), s.o.Now())
	if !ok {
		s.refuse(w, r, http.StatusForbidden, "this login link is used, expired or wrong; run execgate web for a new one")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.cookie, Value: session, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
		MaxAge: int(sessionTTL / time.Second),
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// requireSession lets through requests with a live session cookie.
func (s *Server) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(s.cookie)
		if err != nil || !s.secrets.valid(c.Value, s.o.Now()) {
			s.refuse(w, r, http.StatusUnauthorized, "not logged in; open the login URL execgate web printed (run it again for a new one)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// handlePage serves the page; everything on it arrives over the socket.
func (s *Server) handlePage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := s.page.Execute(w, struct{ Name string }{s.o.Name}); err != nil {
		s.log.Warn("web: render page", "err", err)
	}
}
