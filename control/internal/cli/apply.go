package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/e3fabric/e3fabric/control/internal/apiclient"
	"github.com/e3fabric/e3fabric/control/internal/intent"
	"github.com/e3fabric/e3fabric/control/internal/model"
)

// apply sends o.file's intent: a dry run for its plan, then (unless dry)
// the same intent fenced on the plan's generation, so that what is applied
// is what was shown.
func (o *opts) apply(ctx context.Context, c *apiclient.Client, w io.Writer, dry bool) error {
	if o.file == "" {
		return usageError("usage: e3ctl apply|diff -f FILE [--prune] [--dry-run]")
	}
	in, data, err := intent.Load(o.file)
	if err != nil {
		return err
	}
	req := model.ApplyRequest{Intent: *in, Prune: o.prune, DryRun: true}
	fileErr := func(err error) error {
		var ae *apiclient.Error
		if errors.As(err, &ae) && ae.Field != "" {
			return intent.FromAPI(o.file, data, ae.Field, ae.Message)
		}
		return err
	}
	plan, err := c.Apply(ctx, req)
	if err != nil {
		return fileErr(err)
	}
	if dry || len(plan.Plan) == 0 {
		return o.printPlan(w, plan)
	}
	req.DryRun, req.Generation = false, plan.Generation
	res, err := c.Apply(ctx, req)
	if err != nil {
		return fileErr(err)
	}
	return o.printPlan(w, res)
}

func (o *opts) printPlan(w io.Writer, res model.ApplyResult) error {
	if o.json {
		return o.print(w, res, nil)
	}
	if len(res.Plan) == 0 {
		fmt.Fprintf(w, "no changes: the fabric is what the file declares (generation %d)\n", res.Generation)
		return nil
	}
	sign := map[string]string{model.ActionCreate: "+", model.ActionUpdate: "~", model.ActionDelete: "-"}
	count := map[string]int{}
	for _, it := range res.Plan {
		count[it.Action]++
		fmt.Fprintf(w, "%s %s %s (%s)\n", sign[it.Action], it.Kind, it.Name, it.Action)
		for _, ch := range it.Changes {
			fmt.Fprintf(w, "    %s: %s -> %s\n", ch.Field, value(ch.From), value(ch.To))
		}
	}
	fmt.Fprintf(w, "plan: %d to create, %d to update, %d to delete", count[model.ActionCreate],
		count[model.ActionUpdate], count[model.ActionDelete])
	if res.Applied {
		fmt.Fprintf(w, "; applied at generation %d\n", res.Generation)
	} else {
		fmt.Fprintf(w, " (not applied)\n")
	}
	return nil
}

func value(v any) string {
	if v == nil {
		return "(unset)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// get writes the fabric's intent: YAML (an apply file) or JSON.
func (o *opts) get(ctx context.Context, c *apiclient.Client, w io.Writer) error {
	in, err := c.Intent(ctx)
	if err != nil {
		return err
	}
	switch o.output {
	case "", "yaml":
		if o.json {
			return o.print(w, in, nil)
		}
		b, err := intent.Marshal(&in)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "json":
		o.json = true
		return o.print(w, in, nil)
	}
	return usageError(fmt.Sprintf("-o %s: want yaml or json", o.output))
}
