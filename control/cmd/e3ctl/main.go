// Command e3ctl is the command line of the e3fabric controller's API.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/e3fabric/e3fabric/control/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
