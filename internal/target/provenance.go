package target

import (
	"context"
	"time"

	"zhizhi/internal/model"
)

// Where a target's field gets its value.
const (
	FromYAML     = "yaml"     // the site file, as `config sync` wrote it
	FromOverride = "override" // a person changed a YAML target's field in the console
	FromConsole  = "console"  // the target was created in the console; there is no YAML
)

// FieldSource says where one field's value comes from: the files, a
// person's override (who, when, and what the files say), or the console.
type FieldSource struct {
	Field     string     `json:"field"`
	Value     string     `json:"value"`
	Source    string     `json:"source"` // yaml | override | console
	ChangedBy string     `json:"changed_by,omitempty"`
	ChangedAt *time.Time `json:"changed_at,omitempty"`
	// YAMLValue is what the files said at the last sync, for an override:
	// the value a revert brings back.
	YAMLValue *string `json:"yaml_value,omitempty"`
}

// Provenance returns, for each changeable field of the target in the order
// of model.TargetFields, its value and where it comes from.
func (s *Service) Provenance(ctx context.Context, code string) ([]FieldSource, error) {
	tg, err := targetByCode(ctx, s.Store, code)
	if err != nil {
		return nil, err
	}
	overrides, err := s.Store.TargetOverrides(ctx, tg.ID)
	if err != nil {
		return nil, err
	}
	out := make([]FieldSource, 0, len(model.TargetFields))
	for _, f := range model.TargetFields {
		v, _ := model.TargetFieldValue(tg, f)
		fs := FieldSource{Field: f, Value: v, Source: FromYAML}
		if tg.Source != model.SourceYAML {
			fs.Source, fs.ChangedBy = FromConsole, tg.CreatedBy
			created := tg.CreatedAt
			fs.ChangedAt = &created
		}
		for _, o := range overrides {
			if o.Field != f {
				continue
			}
			if tg.Source == model.SourceYAML {
				fs.Source, fs.YAMLValue = FromOverride, o.YAMLValue
			}
			at := o.ChangedAt
			fs.ChangedBy, fs.ChangedAt = o.ChangedBy, &at
		}
		out = append(out, fs)
	}
	return out, nil
}
