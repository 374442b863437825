package iaminventory

import (
	"slices"
	"sort"
)

// servicePrefixes are the IAM service prefixes of the SDK service packages
// whose package name is not their prefix.
var servicePrefixes = map[string]string{
	"eventbridge":    "events",
	"cloudwatchlogs": "logs",
	"sfn":            "states",
	"ssooidc":        "sso-oauth",
	"signin":         "signin",
}

// ServicePrefix returns the IAM service prefix of the SDK service package
// named pkg ("eventbridge": "events").
func ServicePrefix(pkg string) string {
	if p, ok := servicePrefixes[pkg]; ok {
		return p
	}
	return pkg
}

// batchActions are the operations authorized as another action (a batch as
// its single operation; Lambda's Invoke as lambda:InvokeFunction).
var batchActions = map[string]string{
	"lambda:Invoke":                    "lambda:InvokeFunction",
	"sqs:SendMessageBatch":             "sqs:SendMessage",
	"sqs:DeleteMessageBatch":           "sqs:DeleteMessage",
	"sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
	"dynamodb:TransactGetItems":        "dynamodb:GetItem",
}

// itemActions are the actions of the request kinds of TransactWriteItems
// and BatchWriteItem (the reach.Site Items).
var itemActions = map[string]map[string]string{
	"dynamodb:TransactWriteItems": {
		"Put": "dynamodb:PutItem", "Update": "dynamodb:UpdateItem",
		"Delete": "dynamodb:DeleteItem", "ConditionCheck": "dynamodb:ConditionCheckItem",
	},
	"dynamodb:BatchWriteItem": {"PutRequest": "dynamodb:PutItem", "DeleteRequest": "dynamodb:DeleteItem"},
}

// Actions returns the IAM actions the operation ("dynamodb:TransactWriteItems")
// needs, given the request kinds its call builds (nil: unknown, so all of
// the operation's kinds).
func Actions(operation string, items []string) []string {
	if kinds, ok := itemActions[operation]; ok {
		var out []string
		for _, it := range items {
			if a, ok := kinds[it]; ok && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		if len(out) == 0 { // the kinds are built elsewhere: any of them
			for _, a := range kinds {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		}
		sort.Strings(out)
		return out
	}
	if a, ok := batchActions[operation]; ok {
		return []string{a}
	}
	return []string{operation}
}
