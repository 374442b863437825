package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// What a conditional write's answer means: a failed condition is an
// outcome (a lost race, a lost lease), never an error; a request DynamoDB
// refused for its content is the caller's error; anything else is the
// table's.

// conditionFailed reports whether err is a failed condition, and returns the
// old item DynamoDB sent back with it (ReturnValuesOnConditionCheckFailure=ALL_OLD).
func conditionFailed(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

// transactionConditionFailed reports whether err is a transaction cancelled
// because its first item's condition failed (the fence of a transaction
// that checks the lease first).
func transactionConditionFailed(err error) bool {
	var tce *types.TransactionCanceledException
	return errors.As(err, &tce) && len(tce.CancellationReasons) > 0 &&
		aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed"
}

// fenced maps the error of a conditional write (or of a transaction whose
// first item is the fence) by op on key: a failed condition is held=false.
func fenced(err error, op, key string) (bool, error) {
	if err == nil {
		return true, nil
	}
	if _, ok := conditionFailed(err); ok || transactionConditionFailed(err) {
		return false, nil
	}
	return false, fmt.Errorf("store: %s %s: %w", op, key, err)
}

// inputRejected reports a DynamoDB error that the request's content caused
// (ValidationException: a key or item over its limit, an invalid string),
// as an error wrapping webhook.ErrTooLarge or webhook.ErrMalformed; nil for
// any other error. Nothing was written when DynamoDB validated the request
// and refused it, and retrying cannot help.
func inputRejected(err error) error {
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" {
		return nil
	}
	msg := ae.ErrorMessage()
	if strings.Contains(strings.ToLower(msg), "size") {
		return fmt.Errorf("dynamodb refused the item: %s: %w", msg, webhook.ErrTooLarge)
	}
	return fmt.Errorf("dynamodb refused the item: %s: %w", msg, webhook.ErrMalformed)
}

// outcomeName returns the name of the outcome o of an enumeration that
// starts at 1 (names in order), or "unknown".
func outcomeName[O ~int](o O, names ...string) string {
	if o < 1 || int(o) > len(names) {
		return "unknown"
	}
	return names[o-1]
}
