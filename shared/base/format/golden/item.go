package golden

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemJSON is item in DynamoDB JSON ({"name": {"S": "..."}}), for a sample.
func ItemJSON(item map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(item))
	for k, v := range item {
		out[k] = valueJSON(v)
	}
	return out
}

func valueJSON(v types.AttributeValue) map[string]any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": ItemJSON(v.Value)}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = valueJSON(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}
	}
	return map[string]any{"?": fmt.Sprintf("%T", v)}
}

// jsonValue is one attribute value in DynamoDB JSON.
type jsonValue struct {
	S    *string              `json:"S"`
	N    *string              `json:"N"`
	B    []byte               `json:"B"`
	BOOL *bool                `json:"BOOL"`
	NULL *bool                `json:"NULL"`
	M    map[string]jsonValue `json:"M"`
	L    []jsonValue          `json:"L"`
	SS   []string             `json:"SS"`
	NS   []string             `json:"NS"`
	BS   [][]byte             `json:"BS"`
}

// ItemFromJSON decodes an item in DynamoDB JSON (a fixture's sample).
func ItemFromJSON(raw []byte) (map[string]types.AttributeValue, error) {
	var m map[string]jsonValue
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("golden: decode item: %w", err)
	}
	return fromJSON(m), nil
}

func fromJSON(m map[string]jsonValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = v.value()
	}
	return out
}

func (v jsonValue) value() types.AttributeValue {
	switch {
	case v.S != nil:
		return &types.AttributeValueMemberS{Value: *v.S}
	case v.N != nil:
		return &types.AttributeValueMemberN{Value: *v.N}
	case v.B != nil:
		return &types.AttributeValueMemberB{Value: v.B}
	case v.BOOL != nil:
		return &types.AttributeValueMemberBOOL{Value: *v.BOOL}
	case v.NULL != nil:
		return &types.AttributeValueMemberNULL{Value: *v.NULL}
	case v.M != nil:
		return &types.AttributeValueMemberM{Value: fromJSON(v.M)}
	case v.L != nil:
		l := make([]types.AttributeValue, len(v.L))
		for i, e := range v.L {
			l[i] = e.value()
		}
		return &types.AttributeValueMemberL{Value: l}
	case v.SS != nil:
		return &types.AttributeValueMemberSS{Value: v.SS}
	case v.NS != nil:
		return &types.AttributeValueMemberNS{Value: v.NS}
	case v.BS != nil:
		return &types.AttributeValueMemberBS{Value: v.BS}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
