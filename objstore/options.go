package objstore

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/lancens/lancens/internal/closest"
)

// Options are storage options as Lance names them (aws_endpoint,
// aws_region, aws_access_key_id, allow_http, ...): lancens reads the ones it
// knows to reach the store itself, and hands them to Lance clients.
type Options map[string]string

// The storage option keys lancens reads, in Lance's spelling. Lance accepts
// a few aliases for each (see aliases); Get finds a value under any of them.
const (
	KeyEndpoint        = "aws_endpoint"
	KeyRegion          = "aws_region"
	KeyAccessKeyID     = "aws_access_key_id"
	KeySecretAccessKey = "aws_secret_access_key"
	KeySessionToken    = "aws_session_token"
	KeyAllowHTTP       = "allow_http"
	KeyVirtualHosted   = "aws_virtual_hosted_style_request"
	// KeyExpiresAtMillis is set with temporary credentials: their expiry,
	// in epoch milliseconds, after which Lance asks for new ones.
	KeyExpiresAtMillis = "expires_at_millis"
)

// aliases are the other names Lance's object store accepts for a key.
var aliases = map[string][]string{
	KeyEndpoint:        {"aws_endpoint_url", "endpoint", "endpoint_url"},
	KeyRegion:          {"region", "aws_default_region"},
	KeyAccessKeyID:     {"access_key_id"},
	KeySecretAccessKey: {"secret_access_key"},
	KeySessionToken:    {"session_token", "aws_token", "token"},
	KeyAllowHTTP:       {"aws_allow_http"},
	KeyVirtualHosted:   {"virtual_hosted_style_request"},
}

// passThrough are storage option keys Lance's S3 store takes that lancens
// does not read itself: they reach Lance clients through static vending.
var passThrough = []string{
	"aws_bucket", "aws_bucket_name", "aws_imdsv1_fallback", "aws_unsigned_payload", "aws_checksum_algorithm",
	"aws_metadata_endpoint", "aws_container_credentials_relative_uri", "aws_skip_signature", "aws_s3_express",
	"aws_request_payer", "aws_server_side_encryption", "aws_sse_kms_key_id", "aws_sse_bucket_key_enabled",
	"aws_sse_customer_key_base64", "aws_copy_if_not_exists", "aws_conditional_put", "aws_disable_tagging",
	"allow_invalid_certificates", "timeout", "connect_timeout", "pool_idle_timeout", "pool_max_idle_per_host",
	"proxy_url", "proxy_ca_certificate", "proxy_excludes", "user_agent", "http1_only", "http2_only",
	"client_max_retries", "client_retry_timeout", "download_retry_count",
}

// KnownKeys returns every storage option key lancens accepts: the ones it
// reads, under any of their names, and the other keys of Lance's S3 store,
// which it hands on to clients.
func KnownKeys() []string {
	var out []string
	for _, k := range []string{KeyEndpoint, KeyRegion, KeyAccessKeyID, KeySecretAccessKey, KeySessionToken, KeyAllowHTTP, KeyVirtualHosted} {
		out = append(out, k)
		out = append(out, aliases[k]...)
	}
	return append(out, passThrough...)
}

// CheckKey returns an error for a storage option key that is none of
// KnownKeys, naming the closest known key when one is close: a typo would
// otherwise be ignored, and lancens would reach another store than meant
// (AWS itself for a misspelt aws_endpoint).
func CheckKey(key string) error {
	known := KnownKeys()
	if slices.Contains(known, key) {
		return nil
	}
	return fmt.Errorf("unknown storage option %q%s; the keys are Lance's: %s, %s, %s, %s, %s, %s, %s and the other keys of Lance's S3 store",
		key, closest.Hint(key, known), KeyEndpoint, KeyRegion, KeyAccessKeyID, KeySecretAccessKey, KeySessionToken, KeyAllowHTTP, KeyVirtualHosted)
}

// Get returns the value of key, looked up under its aliases too, and the
// name it was found under.
func (o Options) Get(key string) (value, name string) {
	for _, k := range append([]string{key}, aliases[key]...) {
		if v, ok := o[k]; ok {
			return v, k
		}
	}
	return "", key
}

// publicKeys are the options that carry no secret: where the store is and
// how to talk to it. Everything else may be a credential.
var publicKeys = []string{KeyEndpoint, KeyRegion, KeyAllowHTTP, KeyVirtualHosted}

// Public returns the options that carry no credential: endpoint, region,
// allow_http and the addressing style, under any of their names.
func (o Options) Public() Options {
	out := Options{}
	for k, v := range o {
		for _, p := range publicKeys {
			if k == p || slices.Contains(aliases[p], k) {
				out[k] = v
			}
		}
	}
	return out
}

// flag reads a boolean option; a missing one is false. Returns an error
// naming the option for a value that is not a boolean.
func (o Options) flag(key string) (bool, error) {
	v, name := o.Get(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("storage option %s=%q: want true or false", name, v)
	}
	return b, nil
}

// s3Settings are the options lancens itself needs to reach S3.
type s3Settings struct {
	endpoint      string // "" for AWS itself
	region        string
	virtualHosted bool
	creds         aws.CredentialsProvider // nil: the SDK's default chain
}

// s3Settings checks the options and reads them. Every error names the
// option at fault.
func (o Options) s3Settings() (s3Settings, error) {
	var s s3Settings
	endpoint, endpointName := o.Get(KeyEndpoint)
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("storage option %s=%q: want an http(s) URL such as https://s3.example.com", endpointName, endpoint)
		}
		allow, err := o.flag(KeyAllowHTTP)
		if err != nil {
			return s, err
		}
		if u.Scheme == "http" && !allow {
			return s, fmt.Errorf("storage option %s=%q is plain HTTP: set storage option %s=true to allow it", endpointName, endpoint, KeyAllowHTTP)
		}
		s.endpoint = endpoint
	}
	vh, err := o.flag(KeyVirtualHosted)
	if err != nil {
		return s, err
	}
	// Lance addresses a custom endpoint path-style unless told otherwise;
	// AWS itself virtual-hosted.
	s.virtualHosted = vh || endpoint == ""
	s.region, _ = o.Get(KeyRegion)
	id, idName := o.Get(KeyAccessKeyID)
	secret, secretName := o.Get(KeySecretAccessKey)
	token, _ := o.Get(KeySessionToken)
	switch {
	case id != "" && secret != "":
		s.creds = credentials.NewStaticCredentialsProvider(id, secret, token)
	case id != "":
		return s, fmt.Errorf("storage option %s is set but %s is not", idName, KeySecretAccessKey)
	case secret != "":
		return s, fmt.Errorf("storage option %s is set but %s is not", secretName, KeyAccessKeyID)
	}
	return s, nil
}

// AWSConfig returns the AWS SDK configuration the options describe:
// region and credentials from the options, or else from the SDK's default
// sources (environment, shared files, instance role). A custom endpoint
// without a region signs for us-east-1, as S3-compatible stores expect.
// Returns an error naming the option at fault, or saying that no region
// is known.
func (o Options) AWSConfig(ctx context.Context) (aws.Config, error) {
	s, err := o.s3Settings()
	if err != nil {
		return aws.Config{}, err
	}
	return s.awsConfig(ctx)
}

func (s s3Settings) awsConfig(ctx context.Context) (aws.Config, error) {
	load := []func(*config.LoadOptions) error{
		// Checksums only where the API requires them: S3-compatible stores
		// do not all accept the SDK's default trailing checksums.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if s.region != "" {
		load = append(load, config.WithRegion(s.region))
	}
	if s.creds != nil {
		load = append(load, config.WithCredentialsProvider(s.creds))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		if s.endpoint == "" {
			return aws.Config{}, fmt.Errorf("no AWS region: set storage option %s (or AWS_REGION)", KeyRegion)
		}
		cfg.Region = "us-east-1"
	}
	return cfg, nil
}
