package main

import (
	"crypto/tls"
	"fmt"
	"sync/atomic"
	"time"
)

// certReloader serves the certificate and key in two PEM files, and reads
// them again on reload (SIGHUP), so a renewed certificate takes effect
// without a restart; connections already open keep the one they started
// with.
type certReloader struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

// newCertReloader loads the pair. It returns an error naming the files when
// they cannot be read or do not form a pair.
func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if _, err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// reload reads the pair again and, when it is good, serves it from now on;
// it returns when the new certificate expires. On error the previous pair
// stays in use.
func (r *certReloader) reload() (time.Time, error) {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return time.Time{}, fmt.Errorf("TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert.Store(&cert)
	return cert.Leaf.NotAfter, nil
}

// config returns the TLS configuration that serves the current pair.
func (r *certReloader) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return r.cert.Load(), nil
		},
	}
}
