// Package pgtest runs a throwaway PostgreSQL server for tests and
// benchmarks: Debian's server binaries (/usr/lib/postgresql/<version>/bin),
// a cluster in a temporary directory, listening on a free loopback port
// and a Unix socket in that directory, run as the postgres user when the
// caller is root (PostgreSQL refuses to run as root).
//
// A test binary starts at most one cluster (see Main and Database) and
// gives each test a database of its own.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// MinVersion is the oldest PostgreSQL major version lancens supports.
const MinVersion = 15

// ErrNoBinaries reports that no PostgreSQL server binaries are installed.
var ErrNoBinaries = errors.New("pgtest: no PostgreSQL server binaries (initdb, postgres) of version 15 or newer under /usr/lib/postgresql; install them with `make postgres` (apt-get install postgresql)")

// Binaries returns the directory of the newest installed PostgreSQL server
// binaries of version MinVersion or newer: $LANCENS_PG_BIN when set,
// otherwise /usr/lib/postgresql/<version>/bin. It returns ErrNoBinaries
// when there are none.
func Binaries() (string, error) {
	if dir := os.Getenv("LANCENS_PG_BIN"); dir != "" {
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestVersion := "", 0
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil || v < MinVersion || v <= bestVersion {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "postgres")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			continue
		}
		best, bestVersion = d, v
	}
	if best == "" {
		return "", ErrNoBinaries
	}
	return best, nil
}

// Options tune a cluster.
type Options struct {
	// Durable keeps PostgreSQL's durable defaults (fsync,
	// synchronous_commit): benchmarks set it. Tests run without them,
	// which a crash of the operating system, not of a process, would undo.
	Durable bool
}

// Cluster is a running PostgreSQL server.
type Cluster struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// Start initialises a cluster in a new temporary directory and starts its
// server, which is stopped with Stop (or, should the caller die first, by
// the operating system: the server gets SIGQUIT when its parent exits). It
// returns ErrNoBinaries when PostgreSQL is not installed, or an error with
// the end of the server's log when it does not start.
func Start(opts Options) (*Cluster, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lancens-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, done: make(chan struct{})}
	cred, err := credential()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	for attempt := 0; ; attempt++ {
		err := c.startServer(bin, data, cred, opts)
		if err == nil {
			return c, nil
		}
		// Another process may have taken the free port in between.
		if attempt == 3 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// credential returns the postgres user's credential when the caller is
// root, and nil otherwise (the server then runs as the caller).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs the postgres user (the postgresql package creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (c *Cluster) startServer(bin, data string, cred *syscall.Credential, opts Options) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	args := []string{"-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + c.dir,
		"-c", "max_connections=300", "-c", "shared_buffers=64MB"}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	logPath := filepath.Join(c.dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	c.port, c.cmd, c.done = port, cmd, done
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("pgtest: postgres exited: %s", tail(logPath))
		default:
		}
		if time.Now().After(deadline) {
			c.kill()
			return fmt.Errorf("pgtest: postgres did not accept connections within a minute: %w\n%s", err, tail(logPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last lines of the file at path.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// URL returns the connection string of database db on the cluster.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// CreateDatabase creates an empty database and returns its connection
// string. It returns the server's error (for a name that exists, say).
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return c.URL(name), nil
}

// DropDatabase drops database name, closing the connections still open to
// it.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

// Stop shuts the server down (fast: open sessions are ended) and removes
// the cluster's directory.
func (c *Cluster) Stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			c.kill()
		}
	}
	return os.RemoveAll(c.dir)
}

// kill stops the server at once.
func (c *Cluster) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	}
}

// PasswordDatabase creates a login role that must authenticate with
// password (SCRAM) over TCP, and a database of its own, and returns the
// database's connection string, which holds no password: a client must
// bring it (PGPASSWORD, a password file). The cluster otherwise trusts its
// local connections; a line for this role alone is put first in
// pg_hba.conf. It returns an error when the role or database cannot be
// made or the server does not ask for the password within 10 s.
func (c *Cluster) PasswordDatabase(ctx context.Context, role, password string) (string, error) {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{role}.Sanitize()
	// A statement with a password takes no parameters: quote it as a literal.
	literal := "'" + strings.ReplaceAll(password, "'", "''") + "'"
	for _, stmt := range []string{
		"CREATE ROLE " + ident + " LOGIN PASSWORD " + literal,
		"CREATE DATABASE " + ident + " OWNER " + ident,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("pgtest: %s: %w", strings.Fields(stmt)[1], err)
		}
	}
	hba := filepath.Join(c.dir, "data", "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		return "", err
	}
	line := fmt.Sprintf("host all %s 127.0.0.1/32 scram-sha-256\n", role)
	if err := os.WriteFile(hba, append([]byte(line), old...), 0o600); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return "", err
	}
	url := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", role, c.port, role)
	// The server reloads its configuration in the background.
	for deadline := time.Now().Add(10 * time.Second); ; {
		probe, err := pgx.Connect(ctx, url)
		if err != nil {
			return url, nil
		}
		probe.Close(ctx)
		if time.Now().After(deadline) {
			return "", errors.New("pgtest: the server still lets the role in without a password")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
