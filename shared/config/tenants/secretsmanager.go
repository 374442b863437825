package tenants

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// SecretsManager adapts a Secrets Manager client to SecretGetter.
type SecretsManager struct {
	Client *secretsmanager.Client
}

// GetSecretString returns the string value of the secret arn.
func (s SecretsManager) GetSecretString(ctx context.Context, arn string) (string, error) {
	out, err := s.Client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &arn})
	if err != nil {
		return "", err
	}
	if out.SecretString == nil {
		return "", errors.New("secret has no string value")
	}
	return *out.SecretString, nil
}
