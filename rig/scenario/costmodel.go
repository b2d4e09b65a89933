package scenario

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim/cost"
)

// checkCostModel checks a host's cost.model: an embedded model's name,
// and not beside cost.file (one model per host; overrides go on top).
func checkCostModel(path string, doc *yaml.Node, key string, c *Cost) error {
	if c.Model == "" {
		return nil
	}
	at := func(k, format string, args ...any) error {
		line, col := locate(doc, k)
		return &yamlstrict.Error{File: path, Line: line, Col: col, Key: k, Msg: fmt.Sprintf(format, args...)}
	}
	if c.File != "" {
		return at(key+".model", "model and file are mutually exclusive: model names an embedded cost model (%s), file a cost file of your own; give one, with overrides on top if needed", strings.Join(cost.ModelKeys(), ", "))
	}
	if _, err := cost.ModelBytes(c.Model); err != nil {
		return at(key+".model", "%v", err)
	}
	return nil
}
