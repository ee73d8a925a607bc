package etcdauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"

	"github.com/e3fabric/e3fabric/control/internal/secrets"
)

// Files of a PKI directory: the CA, the revocation list etcd reads at every
// handshake, and the serials issued and revoked so far.
const (
	CAFile    = "etcd-ca.crt"
	caKeyFile = "etcd-ca.key"
	CRLFile   = "etcd-ca.crl"
	stateFile = "etcd-issued.json"
	// Node certificates live long: rotation (a new certificate, the old
	// one revoked) is what ends one, not its expiry.
	certYears = 10
)

// PKI is the fabric's etcd CA in a directory (the controller's data
// directory, where its embedded etcd runs). Issuing a user's certificate
// revokes the certificates issued to that user before, so giving a node
// new credentials locks out its old ones at their next handshake.
type PKI struct {
	dir string
	ca  *secrets.CA
	mu  sync.Mutex
}

type pkiState struct {
	Issued  map[string][]string `json:"issued"` // user -> serials (hex), newest last
	Revoked []string            `json:"revoked"`
}

// OpenPKI opens the CA in dir, creating it and an empty revocation list on
// first use.
func OpenPKI(dir string) (*PKI, error) {
	ca, _, err := secrets.LoadOrCreateCA(filepath.Join(dir, CAFile), filepath.Join(dir, caKeyFile), "e3fabric etcd CA")
	if err != nil {
		return nil, err
	}
	p := &PKI{dir: dir, ca: ca}
	if _, err := os.Stat(p.CRLPath()); errors.Is(err, os.ErrNotExist) {
		st, err := p.load()
		if err != nil {
			return nil, err
		}
		if err := p.writeCRL(st); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// CAPath is the CA certificate's file; CRLPath the revocation list's.
func (p *PKI) CAPath() string  { return filepath.Join(p.dir, CAFile) }
func (p *PKI) CRLPath() string { return filepath.Join(p.dir, CRLFile) }

// CA is the CA certificate, PEM.
func (p *PKI) CA() string { return string(p.ca.CertPEM) }

// ServerFiles writes a member's certificate for hosts (server and peer) to
// certFile and keyFile unless they exist.
func (p *PKI) ServerFiles(certFile, keyFile, cn string, hosts []string) error {
	return p.ca.IssueFiles(certFile, keyFile, cn, hosts)
}

// Issue makes a client certificate whose common name is user, and revokes
// every certificate issued to user before it.
func (p *PKI) Issue(user string) (Credentials, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, err := p.load()
	if err != nil {
		return Credentials{}, err
	}
	cert, key, serial, err := p.ca.Issue(user, nil, certYears)
	if err != nil {
		return Credentials{}, err
	}
	st.Revoked = append(st.Revoked, st.Issued[user]...)
	st.Issued[user] = []string{serial.Text(16)}
	// The CRL first: a crash between the two writes leaves an old
	// certificate revoked, never a revoked one honoured.
	if err := p.writeCRL(st); err != nil {
		return Credentials{}, err
	}
	if err := p.save(st); err != nil {
		return Credentials{}, err
	}
	return Credentials{User: user, CA: p.CA(), Cert: string(cert), Key: string(key)}, nil
}

func (p *PKI) load() (pkiState, error) {
	st := pkiState{Issued: map[string][]string{}}
	b, err := os.ReadFile(filepath.Join(p.dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		return st, fmt.Errorf("etcd PKI state: %w", err)
	}
	if st.Issued == nil {
		st.Issued = map[string][]string{}
	}
	return st, nil
}

func (p *PKI) save(st pkiState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(p.dir, stateFile), b, 0o600)
}

func (p *PKI) writeCRL(st pkiState) error {
	serials := make([]*big.Int, 0, len(st.Revoked))
	for _, h := range st.Revoked {
		s, ok := new(big.Int).SetString(h, 16)
		if !ok {
			return fmt.Errorf("etcd PKI state: bad serial %q", h)
		}
		serials = append(serials, s)
	}
	der, err := p.ca.CRL(int64(len(serials))+1, serials)
	if err != nil {
		return fmt.Errorf("etcd CRL: %w", err)
	}
	return writeAtomic(p.CRLPath(), der, 0o644)
}

// writeAtomic replaces file with b: etcd reads the CRL at every handshake
// and must never see half of one.
func writeAtomic(file string, b []byte, mode os.FileMode) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
