package cost

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ModelInfo describes an embedded cost model a scenario may name with
// cost.model.
type ModelInfo struct {
	// Key is what a scenario writes (the file's base name: "kunpeng920").
	Key string
	// Name is the model's own name and version ("kunpeng920-2026.12").
	Name string
	// Description is the file's description.
	Description string
	// Frozen says the file was frozen before the figures it helps
	// reproduce were compared, every price with its uncertainty.
	Frozen bool
}

// Models lists the embedded cost models by key.
func Models() []ModelInfo {
	entries, err := fs.ReadDir(models, "data")
	if err != nil {
		// The folder is embedded at build time: a failure is a build
		// defect, not input.
		panic(fmt.Sprintf("cost: embedded models: %v", err))
	}
	var out []ModelInfo
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok {
			continue
		}
		data, _ := models.ReadFile(path.Join("data", e.Name()))
		var head struct {
			Name        string `yaml:"name"`
			Description string `yaml:"description"`
			Frozen      bool   `yaml:"frozen"`
		}
		// Header only; the whole file is validated when it is used and
		// by this package's specs.
		_ = yaml.Unmarshal(data, &head)
		out = append(out, ModelInfo{Key: key, Name: head.Name, Description: strings.TrimSpace(head.Description), Frozen: head.Frozen})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ModelKeys returns the keys a scenario's cost.model accepts, in order.
func ModelKeys() []string {
	var keys []string
	for _, m := range Models() {
		keys = append(keys, m.Key)
	}
	return keys
}

// ModelBytes returns the text of the embedded model key.
func ModelBytes(key string) ([]byte, error) {
	if strings.ContainsAny(key, "/\\.") || key == "" {
		return nil, unknownModel(key)
	}
	data, err := models.ReadFile(path.Join("data", key+".yaml"))
	if err != nil {
		return nil, unknownModel(key)
	}
	return data, nil
}

// Model returns the embedded model key ("kunpeng920"), parsed against
// the loader's table.
func (l Loader) Model(key string) (*Model, error) {
	data, err := ModelBytes(key)
	if err != nil {
		return nil, err
	}
	return l.Parse(key+".yaml", data)
}

func unknownModel(key string) error {
	return fmt.Errorf("no embedded cost model %q; valid models: %s (simrun list shows them)", key, strings.Join(ModelKeys(), ", "))
}
