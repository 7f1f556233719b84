package convert

// WithStep returns opts calling step after each durable step of a
// conversion (what it wrote), for tests that stop a conversion there.
func WithStep(opts Options, step func(what string)) Options {
	opts.step = step
	return opts
}
