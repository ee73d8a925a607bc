// Package secrets makes and loads what the controller's trust boundaries
// rest on, created on first start in the data directory like an SSH host
// key: bearer tokens and a self-signed TLS certificate (docs/security.md).
package secrets

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Token returns the token in file, creating file with a random one (mode
// 0600) if it does not exist. created says whether it did.
func Token(file string) (tok string, created bool, err error) {
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", false, err
		}
		if err := os.WriteFile(file, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
			return "", false, fmt.Errorf("token: %w", err)
		}
		created = true
	}
	tok, err = ReadToken(file)
	return tok, created, err
}

// ReadToken returns the token in file (surrounding white space trimmed),
// refusing an empty one.
func ReadToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", file)
	}
	return tok, nil
}

// SelfSigned returns the certificate and key in certFile and keyFile,
// first making a self-signed ECDSA P-256 pair valid for hosts (names or IP
// addresses) and ten years if the files do not exist. The certificate is its
// own CA: a client trusts it by its file (CA file) or its fingerprint.
func SelfSigned(certFile, keyFile string, hosts []string) (created bool, err error) {
	if _, err := os.Stat(certFile); err == nil {
		return false, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return false, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: "e3-controller", Organization: []string{"e3fabric"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return false, err
	}
	return true, writePair(certFile, keyFile, der, key)
}

// Fingerprint is the SHA-256 of a certificate's DER, in hex: what a client
// pins when it has no CA file.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// FileFingerprint is the fingerprint of the first certificate in a PEM file.
func FileFingerprint(certFile string) (string, error) {
	b, err := os.ReadFile(certFile)
	if err != nil {
		return "", err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return "", fmt.Errorf("%s: no PEM certificate", certFile)
	}
	return Fingerprint(blk.Bytes), nil
}

// TrustPEM returns a client configuration that trusts the PEM certificates.
func TrustPEM(pemCerts []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemCerts) {
		return nil, errors.New("no PEM certificate")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// ClientTLS returns a client configuration that trusts the certificates of
// caFile, or (caFile empty) exactly the certificate whose fingerprint is
// pin. With neither it returns nil: the system's roots.
func ClientTLS(caFile, pin string) (*tls.Config, error) {
	switch {
	case caFile != "":
		b, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		cfg, err := TrustPEM(b)
		if err != nil {
			return nil, fmt.Errorf("CA file %s: %w", caFile, err)
		}
		return cfg, nil
	case pin != "":
		pin = strings.ToLower(strings.ReplaceAll(pin, ":", ""))
		return &tls.Config{
			MinVersion: tls.VersionTLS12,
			// The pin replaces the chain check: the peer must show this
			// very certificate.
			InsecureSkipVerify: true,
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				if len(raw) > 0 && Fingerprint(raw[0]) == pin {
					return nil
				}
				return errors.New("the controller's certificate does not match the pinned fingerprint")
			},
		}, nil
	}
	return nil, nil
}
