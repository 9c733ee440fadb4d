package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/analyzer/repo"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render"
	"github.com/rolloutlint/rolloutlint/model/units"
	"github.com/rolloutlint/rolloutlint/report/planreport"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// loadedUnits is what `plan` loads with rendering: the config, the paths
// it read, and the bundles of analyzer/repo (one per unit, or per group of
// units deployed together; the plain directories in one).
type loadedUnits struct {
	cfg    *config.Config
	args   []string
	loaded []*repo.Loaded
}

// loadUnits discovers, renders and loads the paths as lint does.
func (o *planOptions) loadUnits(e *Env, args []string) (*loadedUnits, error) {
	rs, err := o.load.resolve(e, args)
	if err != nil {
		return nil, err
	}
	// With paths from the command line the config's paths are context;
	// with none, the config's paths are what is planned.
	context := rs.context
	if len(args) == 0 {
		context = nil
	}
	fitted := false
	loaded, err := repo.Load(rs.args, repo.Options{
		Load:    rs.opts,
		Render:  o.rendering.options(e, rs.opts.Limits),
		Context: context,
		AfterLoad: func(*graph.Graph) {
			if !fitted {
				memlimit.Fit() // the first loaded bundle sets the floor of the memory limit
				fitted = true
			}
		},
	})
	if err != nil {
		return nil, err
	}
	// As for lint: values for charts that none of the directories holds
	// would do nothing.
	if err := o.rendering.unused(e, rs.args, loadsOwnChart(loaded)); err != nil {
		return nil, err
	}
	return &loadedUnits{cfg: rs.cfg, args: rs.args, loaded: loaded}, nil
}

// loadsOwnChart reports whether a Helm chart that no Application deploys
// was loaded: the charts --values and --set apply to.
func loadsOwnChart(loaded []*repo.Loaded) bool {
	for _, l := range loaded {
		for _, u := range l.Units {
			if u.Kind == units.Helm && u.App == nil {
				return true
			}
		}
	}
	return false
}

// unitName names a unit in a message.
func unitName(u *units.Unit) string { return u.Name() }

// planUnits plans the Rollouts of every loaded bundle, each with the
// objects of its own bundle, in the bundles' order.
func (o *planOptions) planUnits(e *Env, fl *pflag.FlagSet, lu *loadedUnits) error {
	m, err := o.model(fl, lu.cfg)
	if err != nil {
		return err
	}
	told := map[string]bool{}
	bundles := make([]planreport.Bundle, 0, len(lu.loaded))
	var have []string // the Rollouts planned, for --rollout's message
	for _, l := range lu.loaded {
		g := l.Graph
		if err := unreadable(g, l.Path); err != nil {
			return err
		}
		// A unit that did not render deploys nothing plan can see, and a
		// document over a limit (an alias bomb, also one kustomize would
		// have read) is not loaded: said once on standard error (lint
		// reports them as RL0010 and RL0005), and the rest is planned.
		for _, p := range g.Problems {
			if p.RuleID != render.RuleRender && p.RuleID != load.RuleLimit || p.Info {
				continue
			}
			what := "what it renders"
			if p.RuleID == load.RuleLimit {
				what = "what it holds"
			}
			msg := fmt.Sprintf("%s:%d:%d: %s", l.Path(p.Pos.File), p.Pos.Line, p.Pos.Column, p.Message)
			if !told[msg] {
				told[msg] = true
				fmt.Fprintf(e.Err, "rolloutlint: plan: %s (%s is not planned; see rolloutlint lint)\n", msg, what)
			}
		}
		var rrs []*graph.RolloutRefs
		for _, rr := range g.Refs().Rollouts {
			// The plain files are planned as they always were (with the
			// context paths' Rollouts); a unit's Rollouts only when the
			// paths select them (files given alone: those rendered from
			// one of them).
			if l.Plain || l.Selected(rr.Rollout) {
				rrs = append(rrs, rr)
			}
		}
		for _, rr := range rrs {
			have = append(have, rr.Rollout.Namespace+"/"+rr.Rollout.Name)
		}
		if o.rollout != "" {
			rrs = matchRollout(g, rrs, o.rollout)
		}
		if len(rrs) == 0 {
			continue
		}
		// The Scoper (the bundle's visibility model) and the rejections
		// are independent: one is made beside the other.
		var sc *xds.Scoper
		scoped := make(chan struct{})
		go func() {
			defer close(scoped)
			sc = xds.NewScoperFor(g, m.Version)
		}()
		b := planreport.Bundle{N: len(rrs), Rejected: rejections(&bundle{cfg: lu.cfg, graph: g})}
		<-scoped
		b.Scoper = sc
		b.At = func(i int, pl *plan.Planner) *plan.Plan {
			if pl == nil {
				return plan.ForRollout(g, rrs[i])
			}
			return pl.ForRollout(g, rrs[i])
		}
		for k, rj := range b.Rejected {
			for i := range rj {
				rj[i].File = l.Path(rj[i].File)
			}
			b.Rejected[k] = rj
		}
		if !l.Plain || l.Renamed() {
			b.Origin = origin(l) // a plain file as given is where it is, as it always was
		}
		bundles = append(bundles, b)
	}
	if o.rollout != "" && len(bundles) == 0 {
		return fmt.Errorf("--rollout %s: no such Rollout in the input (have: %s)", o.rollout, strings.Join(have, ", "))
	}
	if err := planreport.WriteBundles(e.Out, o.format, m, bundles); err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	return nil
}

// matchRollout keeps the Rollouts named ns/name (or name in the default
// namespace): every unit's, when several deploy it.
func matchRollout(g *graph.Graph, rrs []*graph.RolloutRefs, ref string) []*graph.RolloutRefs {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		ns, name = g.DefaultNamespace, ref
	}
	var out []*graph.RolloutRefs
	for _, rr := range rrs {
		if rr.Rollout.Namespace == ns && rr.Rollout.Name == name {
			out = append(out, rr)
		}
	}
	return out
}

// origin gives a plan of the bundle its unit and the position of its
// Rollout in the files the user wrote: a rendered Rollout's metadata.name
// mapped as lint maps its findings, a file read as written at its own
// name line.
func origin(l *repo.Loaded) func(p *plan.Plan) (*planreport.Unit, string, int) {
	g := l.Graph
	return func(p *plan.Plan) (*planreport.Unit, string, int) {
		r := p.Resource
		if r == nil {
			return nil, "", 0
		}
		var unit *planreport.Unit
		if u := l.UnitOf(r); u != nil && (u.Kind != units.Directory || u.App != nil) {
			unit = &planreport.Unit{Kind: string(u.Kind), Dir: filepath.ToSlash(l.Path(u.Dir))}
			if u.App != nil {
				unit.Application = u.App.Namespace + "/" + u.App.Name
			}
		}
		if f := g.File(r.File); f != nil && f.Rendered && g.Mapper != nil {
			pos := definedAt(g.Mapper, r)
			return unit, l.Path(pos.File), pos.Line
		}
		return unit, l.Path(r.File), r.NameLine()
	}
}

// definedAt is where a rendered Rollout is defined in the user's files:
// its metadata.name there, mapped as lint maps findings. When a
// kustomization set the name (namePrefix, a patch), the mapping gives that
// field; the Rollout is then defined where its kind is written (no
// transformer changes it), at the name the user wrote there when the
// mapping names it (kustomize: "the base value").
func definedAt(m graph.Mapper, r *graph.Resource) graph.Position {
	name, related := m.MapPos(r.Pos("metadata.name"))
	kind, _ := m.MapPos(r.Pos("kind"))
	if name.File == kind.File {
		return name
	}
	for _, l := range related {
		if l.Pos.File == kind.File {
			return l.Pos
		}
	}
	return kind
}
