package resp

// SetBigArg makes p give arguments of n bytes or more their own
// allocation, so that a spec or fuzz target with small limits reaches
// that path.
func SetBigArg(p *Parser, n int) { p.bigArg = n }
