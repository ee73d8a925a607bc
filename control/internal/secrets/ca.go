package secrets

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// CA is a certificate authority kept in two PEM files: it signs the
// certificates of the parties of the fabric's etcd (servers, peers and
// clients), so that each is authenticated at the TLS handshake.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	key     *ecdsa.PrivateKey
}

// LoadOrCreateCA returns the CA in certFile and keyFile, first making a
// new one (ten years, ECDSA P-256, key mode 0600) if certFile does not exist.
func LoadOrCreateCA(certFile, keyFile, name string) (ca *CA, created bool, err error) {
	if _, err := os.Stat(certFile); errors.Is(err, os.ErrNotExist) {
		if err := newCA(certFile, keyFile, name); err != nil {
			return nil, false, fmt.Errorf("CA %s: %w", certFile, err)
		}
		created = true
	}
	ca, err = LoadCA(certFile, keyFile)
	return ca, created, err
}

// LoadCA reads a CA's certificate and key.
func LoadCA(certFile, keyFile string) (*CA, error) {
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	cblk, _ := pem.Decode(cb)
	kblk, _ := pem.Decode(kb)
	if cblk == nil || kblk == nil {
		return nil, fmt.Errorf("CA %s, %s: no PEM block", certFile, keyFile)
	}
	cert, err := x509.ParseCertificate(cblk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA %s: %w", certFile, err)
	}
	key, err := x509.ParseECPrivateKey(kblk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA %s: %w", keyFile, err)
	}
	return &CA{Cert: cert, CertPEM: cb, key: key}, nil
}

func newCA(certFile, keyFile, name string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"e3fabric"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	return writePair(certFile, keyFile, der, key)
}

// Issue signs a new certificate for cn, valid for hosts (names or IP
// addresses; none for a client-only certificate) and for years, as a
// server and a client: etcd's members are both to one another. It returns
// the certificate and key as PEM, and the certificate's serial number.
func (ca *CA) Issue(cn string, hosts []string, years int) (certPEM, keyPEM []byte, serial *big.Int, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	serial = serialNumber()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"e3fabric"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(years, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), serial, nil
}

// IssueFiles writes a certificate for cn and hosts to certFile and keyFile
// (key mode 0600) unless certFile exists already.
func (ca *CA) IssueFiles(certFile, keyFile, cn string, hosts []string) error {
	if _, err := os.Stat(certFile); err == nil {
		return nil
	}
	c, k, _, err := ca.Issue(cn, hosts, 10)
	if err != nil {
		return fmt.Errorf("certificate %s: %w", certFile, err)
	}
	if err := os.WriteFile(keyFile, k, 0o600); err != nil {
		return err
	}
	return os.WriteFile(certFile, c, 0o644)
}

// CRL is a revocation list (DER) of serials, signed by the CA, valid for
// a year; a fresh one is written at every change.
func (ca *CA) CRL(number int64, serials []*big.Int) ([]byte, error) {
	tmpl := &x509.RevocationList{
		Number:     big.NewInt(number),
		ThisUpdate: time.Now().Add(-time.Minute),
		NextUpdate: time.Now().AddDate(1, 0, 0),
	}
	for _, s := range serials {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: s, RevocationTime: time.Now()})
	}
	return x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.key)
}

func serialNumber() *big.Int {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return s
}

func writePair(certFile, keyFile string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}
