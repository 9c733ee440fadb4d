package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/ruledoc"
)

func findRule(rs []*rules.Rule, id string) *rules.Rule {
	for _, r := range rs {
		if strings.EqualFold(r.ID, id) || r.Name == id {
			return r
		}
	}
	return nil
}

// rulesOptions are the flags of `rules`.
type rulesOptions struct {
	format, configPath string
}

func (o *rulesOptions) bind(fl *pflag.FlagSet) {
	fl.StringVarP(&o.format, "format", "f", "text", "output format: text or json")
	fl.StringVar(&o.configPath, "config", "", "config file (for user policies)")
}

func newRules(e *Env) *cobra.Command {
	var o rulesOptions
	c := &cobra.Command{
		Use:   "rules",
		Short: "List every rule: ID, name, default severity, source and summary",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := e.loadConfig(o.configPath)
			if err != nil {
				return err
			}
			rs, err := e.ruleSet(cfg, nil)
			if err != nil {
				return err
			}
			switch o.format {
			case "json":
				type row struct {
					ID       string         `json:"id"`
					Name     string         `json:"name"`
					Severity rules.Severity `json:"severity"`
					Source   rules.Source   `json:"source"`
					Summary  string         `json:"summary"`
					Kinds    []string       `json:"kinds"`
				}
				rows := make([]row, 0, len(rs))
				for _, r := range rs {
					rows = append(rows, row{r.ID, r.Name, r.Severity, r.Source, r.Summary, r.Kinds})
				}
				enc := json.NewEncoder(e.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			case "text":
				tw := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
				// tabwriter buffers; write errors surface from Flush.
				_, _ = fmt.Fprintln(tw, "ID\tNAME\tSEVERITY\tSOURCE\tSUMMARY")
				for _, r := range rs {
					summary := r.Summary
					if r.OptIn {
						summary = "(opt-in) " + summary
					}
					_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Severity, r.Source, summary)
				}
				return tw.Flush()
			}
			return fmt.Errorf("unknown format %q (want text or json)", o.format)
		},
	}
	o.bind(c.Flags())
	return c
}

// explainOptions are the flags of `explain`.
type explainOptions struct {
	configPath string
}

func (o *explainOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.configPath, "config", "", "config file (for user policies)")
}

func newExplain(e *Env) *cobra.Command {
	var o explainOptions
	c := &cobra.Command{
		Use:   "explain RULE",
		Short: "Explain a rule: why it matters and how to fix it, with a bad and a good example",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := e.loadConfig(o.configPath)
			if err != nil {
				return err
			}
			rs, err := e.ruleSet(cfg, nil)
			if err != nil {
				return err
			}
			r := findRule(rs, args[0])
			if r == nil {
				return fmt.Errorf("no rule %q (see 'rolloutlint rules')", args[0])
			}
			_, err = fmt.Fprint(e.Out, ruledoc.Page(r))
			return err
		},
	}
	o.bind(c.Flags())
	return c
}
