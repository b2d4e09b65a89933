package http

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// words are the vocabulary of generated pages: common English words and
// the markup of a news page, so that pages compress as real HTML does
// (about 3 to 5 times with gzip -6).
func words() []string {
	return strings.Fields(`the of and to in a is that for it as was with be by on not he
	this are or his from at which but have an they you were their one all we can her has
	there been if more when will would who so no time news world market price report city
	people year government company said could after first new also two may about over
	<div class="article"> </div> <p> </p> <a href="/news/ </a> <span class="tag"> </span>
	<li> </li> <ul class="nav"> </ul> <img src="/img/ alt=" /> <h2> </h2> <script>
	var data = { "id": "title": "url": }; </script> <meta name="description" content="`)
}

// Corpus is a set of pages with realistic compressibility, generated from
// a seed so that runs are reproducible.
type Corpus struct {
	Pages [][]byte
}

// NewCorpus generates one page of each size.
func NewCorpus(rng *rand.Rand, sizes []int) *Corpus {
	vocab := words()
	c := &Corpus{}
	for _, size := range sizes {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html><head><title>Savanna test page</title></head><body>\n")
		for b.Len() < size {
			w := vocab[rng.IntN(len(vocab))]
			if rng.IntN(16) == 0 {
				fmt.Fprintf(&b, "%d", rng.IntN(100000))
			}
			b.WriteString(w)
			if rng.IntN(12) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		c.Pages = append(c.Pages, []byte(b.String()[:size]))
	}
	return c
}
