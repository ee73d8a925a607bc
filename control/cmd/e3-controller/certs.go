package main

import (
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/e3fabric/e3fabric/control/internal/etcdauth"
)

// runCerts is `e3-controller certs`: the fabric's etcd CA for an external
// etcd cluster (docs/security.md). It makes the CA in --ca-dir on first
// use, then either a member's certificate (server and peer) or a client's
// credentials file (its certificate's common name is its etcd user).
func runCerts(args []string) error {
	fs := flag.NewFlagSet("e3-controller certs", flag.ContinueOnError)
	var (
		caDir     = fs.String("ca-dir", "", "directory of the CA (made on first use); the controller's --etcd-ca-dir")
		cn        = fs.String("cn", "", "common name: a member's name, or a client's etcd user (root, e3-controller)")
		hosts     = fs.String("hosts", "", "member: comma-separated names and addresses it serves on")
		out       = fs.String("out", "", "member: write OUT.crt and OUT.key")
		credsFile = fs.String("credentials", "", "client: write this credentials file (mode 0600)")
		endpoints = fs.String("endpoints", "", "client: the cluster's client URLs, comma-separated")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *caDir == "" || *cn == "" || (*out == "") == (*credsFile == "") {
		return errors.New("certs: want --ca-dir, --cn and one of --out (a member) or --credentials (a client)")
	}
	if err := os.MkdirAll(*caDir, 0o700); err != nil {
		return err
	}
	pki, err := etcdauth.OpenPKI(*caDir)
	if err != nil {
		return err
	}
	if *out != "" {
		if *hosts == "" {
			return errors.New("certs: a member needs --hosts")
		}
		return pki.ServerFiles(*out+".crt", *out+".key", *cn, strings.Split(*hosts, ","))
	}
	if *endpoints == "" {
		return errors.New("certs: a client needs --endpoints")
	}
	c, err := pki.Issue(*cn)
	if err != nil {
		return err
	}
	c.Endpoints = *endpoints
	return c.Save(*credsFile)
}
