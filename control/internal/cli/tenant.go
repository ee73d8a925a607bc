package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/e3fabric/e3fabric/control/internal/apiclient"
	"github.com/e3fabric/e3fabric/control/internal/model"
)

// runTenant runs the tenant commands (docs/tenants.md).
func runTenant(ctx context.Context, o *opts, c *apiclient.Client, w io.Writer, cmd string, a []string) error {
	switch cmd {
	case "tenant list":
		v, err := c.Tenants(ctx)
		return o.show(w, v, err, func(tw *tabwriter.Writer) {
			fmt.Fprintln(tw, "NAME\tSERVICES\tCIRCUITS\tMACS\tBANDWIDTH\tPORTS\tTOKENS")
			for _, t := range v {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", t.Name, used(t.Usage.Services, t.Quota.Services),
					used(t.Usage.Circuits, t.Quota.Circuits), used(t.Usage.MACs, t.Quota.MACs),
					used(t.Usage.BandwidthMbps, t.Quota.BandwidthMbps), len(t.Ports), len(t.Tokens))
			}
		})
	case "tenant show":
		if err := want(a, 3, "tenant show NAME"); err != nil {
			return err
		}
		v, err := c.Tenant(ctx, a[2])
		return o.show(w, v, err, func(tw *tabwriter.Writer) { showTenant(tw, &v) })
	case "tenant set":
		if err := want(a, 3, "tenant set NAME [--port NODE:PORT[:VLANS]]... [--max-services N] ..."); err != nil {
			return err
		}
		t := model.Tenant{Name: a[2], Quota: o.quota}
		for _, p := range o.ports {
			f := strings.SplitN(p, ":", 3)
			if len(f) < 2 {
				return fmt.Errorf("--port %q: want NODE:PORT[:VLANS]", p)
			}
			tp := model.TenantPort{Node: f[0], Port: f[1]}
			if len(f) == 3 {
				tp.VLANs = f[2]
			}
			t.Ports = append(t.Ports, tp)
		}
		v, err := c.PutTenant(ctx, t)
		return o.show(w, v, err, func(tw *tabwriter.Writer) { showTenant(tw, &v) })
	case "tenant delete":
		if err := want(a, 3, "tenant delete NAME"); err != nil {
			return err
		}
		if err := c.DeleteTenant(ctx, a[2]); err != nil {
			return err
		}
		return o.print(w, map[string]string{"deleted": a[2]}, func(tw *tabwriter.Writer) { fmt.Fprintf(tw, "deleted %s\n", a[2]) })
	case "tenant token":
		if err := want(a, 3, "tenant token NAME [--read-only]"); err != nil {
			return err
		}
		role := model.RoleAdmin
		if o.readOnly {
			role = model.RoleRead
		}
		v, err := c.CreateToken(ctx, a[2], role)
		if err != nil {
			return err
		}
		// The token alone on stdout, to redirect into a file; never shown again.
		return o.print(w, v, func(tw *tabwriter.Writer) { fmt.Fprintln(tw, v.Token) })
	case "tenant revoke":
		if err := want(a, 4, "tenant revoke NAME ID"); err != nil {
			return err
		}
		if err := c.RevokeToken(ctx, a[2], a[3]); err != nil {
			return err
		}
		return o.print(w, map[string]string{"revoked": a[3]}, func(tw *tabwriter.Writer) { fmt.Fprintf(tw, "revoked %s\n", a[3]) })
	}
	return usageError("unknown command: tenant " + strings.Join(a[1:], " "))
}

func used(n, quota int) string {
	if quota == 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d/%d", n, quota)
}

func showTenant(tw *tabwriter.Writer, v *model.TenantView) {
	fmt.Fprintf(tw, "name\t%s\n", v.Name)
	fmt.Fprintf(tw, "services\t%s\ncircuits\t%s\nmacs\t%s\nbandwidth\t%s Mbps\n", used(v.Usage.Services, v.Quota.Services),
		used(v.Usage.Circuits, v.Quota.Circuits), used(v.Usage.MACs, v.Quota.MACs), used(v.Usage.BandwidthMbps, v.Quota.BandwidthMbps))
	for _, p := range v.Ports {
		vlans := p.VLANs
		if vlans == "" {
			vlans = "all VLANs"
		}
		fmt.Fprintf(tw, "port\t%s:%s\t%s\n", p.Node, p.Port, vlans)
	}
	for _, t := range v.Tokens {
		fmt.Fprintf(tw, "token\t%s\t%s\t%s\n", t.ID, t.Role, t.Created.Format("2006-01-02 15:04"))
	}
}
