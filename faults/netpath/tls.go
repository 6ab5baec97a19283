package netpath

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"sync"
	"time"
)

// CAValidity is how long a run-local CA and the certificates it signs are valid.
const CAValidity = 24 * time.Hour

// CA is a certificate authority that exists only in memory for one run. When the store is an
// HTTPS endpoint, every faults.L7 listener terminates TLS with a certificate this CA signs for the
// endpoint's host name, and only the writers' clients trust it ([CA.Pool]), so the proxy can
// see (and fault) each request while the Host header and the SigV4 signature stay untouched.
// Its methods are safe for concurrent use.
type CA struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pool   *x509.CertPool
	expiry time.Time

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// NewCA creates a CA with a fresh ECDSA P-256 key, valid for [CAValidity].
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("faults: CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{"fencebench"}, CommonName: "fencebench run-local CA"},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("faults: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("faults: CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{cert: cert, key: key, pool: pool, expiry: tmpl.NotAfter, leaves: map[string]*tls.Certificate{}}, nil
}

// Pool is a certificate pool holding only this CA: the trust of a client that talks to the
// faults.L7 listeners.
func (c *CA) Pool() *x509.CertPool { return c.pool }

// Certificate returns a certificate for host (a DNS name or an IP address) signed by the CA,
// creating it on first use.
func (c *CA) Certificate(host string) (*tls.Certificate, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return nil, errors.New("faults: certificate for an empty host name")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if leaf, ok := c.leaves[host]; ok {
		return leaf, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("faults: leaf key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"fencebench"}, CommonName: host},
		NotBefore:    time.Now().Add(-5 * time.Minute),
		NotAfter:     c.expiry,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("faults: leaf certificate for %s: %w", host, err)
	}
	leaf := &tls.Certificate{Certificate: [][]byte{der, c.cert.Raw}, PrivateKey: key}
	c.leaves[host] = leaf
	return leaf, nil
}

// serverConfig is the TLS configuration of the faults.L7 listeners for an endpoint whose host name
// is host: the certificate follows the name the client asked for (SNI) when it is host or a
// name under it (a virtual-hosted bucket), and is host's otherwise (an IP endpoint sends no
// SNI). HTTP/1.1 only, so a cut connection means what it means over plain HTTP.
func (c *CA) serverConfig(host string) *tls.Config {
	host = strings.ToLower(host)
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))
			if name == "" || (name != host && !strings.HasSuffix(name, "."+host)) {
				name = host
			}
			return c.Certificate(name)
		},
	}
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n.Add(n, big.NewInt(1))
}
