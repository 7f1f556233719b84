// Package vend decides the storage options lancens hands to Lance clients
// for a table on object storage (the storage_options of declare and
// describe answers): none of the credentials, the operator's own, or
// short-lived ones from AWS STS scoped to the table's prefix.
package vend

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/lancens/lancens/objstore"
	"github.com/lancens/lancens/store"
)

// Mode is what credentials lancens hands out.
type Mode string

// The vending modes.
const (
	// None hands out no credentials, only where the store is (endpoint,
	// region, ...): clients bring their own.
	None Mode = "none"
	// Static hands out the configured storage options, credentials
	// included: for MinIO, R2 and on-premises stores without STS.
	Static Mode = "static"
	// STS hands out temporary credentials from AWS STS AssumeRole, with an
	// inline session policy that allows only the table's prefix, and their
	// expiry (expires_at_millis), after which Lance describes the table
	// again for new ones.
	STS Mode = "sts"
)

// ParseMode reads a mode; "" is None. Returns an error listing the modes
// for anything else.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return None, nil
	case None, Static, STS:
		return m, nil
	}
	return "", fmt.Errorf("vending mode %q: want none, static or sts", s)
}

// Access is what a caller may do with a table's files.
type Access int

// The kinds of access.
const (
	ReadWrite Access = iota
	ReadOnly
)

// Bounds of an STS session, as AWS allows them.
const (
	MinDuration     = 15 * time.Minute
	MaxDuration     = 12 * time.Hour
	DefaultDuration = time.Hour
)

// Config configures a Vendor.
type Config struct {
	Mode Mode
	// Options are the storage options lancens reaches the store with.
	Options objstore.Options
	// RoleARN is the role STS mode assumes.
	RoleARN string
	// Duration is how long STS credentials last; default DefaultDuration.
	Duration time.Duration
	// STSEndpoint overrides the STS endpoint (a regional endpoint, or a
	// stand-in in tests); "" is AWS's default for the region.
	STSEndpoint string
}

// Vendor hands out storage options.
type Vendor struct {
	cfg Config
	sts *sts.Client
	now func() time.Time

	mu    sync.Mutex
	cache map[cacheKey]issued
}

type cacheKey struct {
	location string
	access   Access
}

type issued struct {
	options map[string]string
	expires time.Time
}

// New returns a Vendor. STS mode needs a role ARN and a duration between
// MinDuration and MaxDuration, and AWS credentials to call STS with (the
// storage options' or the SDK's default ones). Returns an error naming the
// flag or option at fault.
func New(ctx context.Context, cfg Config) (*Vendor, error) {
	v := &Vendor{cfg: cfg, now: time.Now, cache: map[cacheKey]issued{}}
	if cfg.Mode != STS {
		if cfg.RoleARN != "" {
			return nil, fmt.Errorf("--sts-role-arn applies only with --vend-credentials sts, not %s", cfg.Mode)
		}
		return v, nil
	}
	if !strings.HasPrefix(cfg.RoleARN, "arn:") {
		return nil, fmt.Errorf("--vend-credentials sts needs --sts-role-arn, the ARN of the role to assume (arn:aws:iam::ACCOUNT:role/NAME), not %q", cfg.RoleARN)
	}
	if v.cfg.Duration == 0 {
		v.cfg.Duration = DefaultDuration
	}
	if v.cfg.Duration < MinDuration || v.cfg.Duration > MaxDuration {
		return nil, fmt.Errorf("--sts-duration %s: STS allows %s to %s", v.cfg.Duration, MinDuration, MaxDuration)
	}
	if cfg.STSEndpoint != "" {
		if u, err := url.Parse(cfg.STSEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--sts-endpoint %q: want an http(s) URL", cfg.STSEndpoint)
		}
	}
	awsCfg, err := cfg.Options.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	v.sts = sts.NewFromConfig(awsCfg, func(o *sts.Options) {
		if cfg.STSEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.STSEndpoint)
		}
	})
	return v, nil
}

// Mode returns the vending mode.
func (v *Vendor) Mode() Mode { return v.cfg.Mode }

// Options returns the storage options for a client of the table at
// location, an object-store URI. Without credentials (mode None, or the
// client asked for none) they are only the options that carry no secret.
// In STS mode credentials are cached per location and access and reused
// while at least half their lifetime remains. Returns ServiceUnavailable
// (17) when STS fails.
func (v *Vendor) Options(ctx context.Context, location string, access Access, credentials bool) (map[string]string, error) {
	if !credentials || v.cfg.Mode == None {
		return v.cfg.Options.Public(), nil
	}
	if v.cfg.Mode == Static {
		out := make(map[string]string, len(v.cfg.Options))
		for k, val := range v.cfg.Options {
			out[k] = val
		}
		return out, nil
	}
	key := cacheKey{location, access}
	v.mu.Lock()
	got, ok := v.cache[key]
	v.mu.Unlock()
	if ok && v.now().Add(v.cfg.Duration/2).Before(got.expires) {
		return clone(got.options), nil
	}
	got, err := v.assumeRole(ctx, location, access)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	now := v.now()
	for k, c := range v.cache {
		if !now.Before(c.expires) {
			delete(v.cache, k)
		}
	}
	v.cache[key] = got
	v.mu.Unlock()
	return clone(got.options), nil
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// assumeRole asks STS for credentials limited to location.
func (v *Vendor) assumeRole(ctx context.Context, location string, access Access) (issued, error) {
	policy, err := Policy(location, access)
	if err != nil {
		return issued{}, err
	}
	sum := sha256.Sum256([]byte(location))
	out, err := v.sts.AssumeRole(ctx, &sts.AssumeRoleInput{
		RoleArn:         aws.String(v.cfg.RoleARN),
		RoleSessionName: aws.String("lancens-" + hex.EncodeToString(sum[:8])),
		DurationSeconds: aws.Int32(int32(v.cfg.Duration / time.Second)),
		Policy:          aws.String(policy),
	})
	if err != nil {
		return issued{}, &store.Error{Code: store.CodeServiceUnavailable, Message: "cannot get temporary storage credentials from STS; retry", Cause: err}
	}
	c := out.Credentials
	if c == nil || c.AccessKeyId == nil || c.SecretAccessKey == nil || c.Expiration == nil {
		return issued{}, &store.Error{Code: store.CodeServiceUnavailable, Message: "STS answered without credentials; retry", Cause: fmt.Errorf("AssumeRole answered %+v", out)}
	}
	opts := v.cfg.Options.Public()
	opts[objstore.KeyAccessKeyID] = *c.AccessKeyId
	opts[objstore.KeySecretAccessKey] = *c.SecretAccessKey
	opts[objstore.KeySessionToken] = aws.ToString(c.SessionToken)
	opts[objstore.KeyExpiresAtMillis] = strconv.FormatInt(c.Expiration.UnixMilli(), 10)
	return issued{options: opts, expires: *c.Expiration}, nil
}

// policyDocument is an IAM policy.
type policyDocument struct {
	Version   string
	Statement []statement
}

type statement struct {
	Effect    string
	Action    []string
	Resource  []string
	Condition map[string]map[string][]string `json:",omitempty"`
}

// Policy returns the inline session policy for the table at location (an
// s3:// URI): objects under its prefix may be read (and, with ReadWrite,
// written and deleted), and the bucket listed under that prefix only.
// Returns InvalidInput (13) for a location that is not an s3:// prefix.
func Policy(location string, access Access) (string, error) {
	u, err := url.Parse(location)
	if err != nil || !strings.EqualFold(u.Scheme, objstore.SchemeS3) || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return "", store.Errorf(store.CodeInvalidInput, "cannot scope credentials to %q: not an s3://bucket/prefix location", location)
	}
	prefix := strings.Trim(u.Path, "/")
	if strings.ContainsAny(u.Host+prefix, "*?$") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		// A policy reads these as wildcards and variables: the
		// credentials would reach beyond the table.
		return "", store.Errorf(store.CodeInvalidInput, "cannot scope credentials to %q: it holds *, ?, # or $", location)
	}
	actions := []string{"s3:GetObject"}
	if access == ReadWrite {
		actions = append(actions, "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload")
	}
	doc := policyDocument{Version: "2012-10-17", Statement: []statement{
		{Effect: "Allow", Action: actions, Resource: []string{"arn:aws:s3:::" + u.Host + "/" + prefix + "/*"}},
		{Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{"arn:aws:s3:::" + u.Host},
			Condition: map[string]map[string][]string{"StringLike": {"s3:prefix": {prefix + "/*"}}}},
	}}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
