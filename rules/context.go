package rules

import "context"

// Context is done when the lint is abandoned, for example when the
// webhook's deadline for the review has passed. A rule that loops over many
// objects may return early with its error; its findings are then discarded
// with the rest of the lint. Never nil.
func (p *Pass) Context() context.Context {
	if p.ctx == nil {
		return context.Background()
	}
	return p.ctx
}

// WithContext sets the context the pass reports through Context. The
// analyzer calls it; rules never do.
func (p *Pass) WithContext(ctx context.Context) *Pass {
	p.ctx = ctx
	return p
}
