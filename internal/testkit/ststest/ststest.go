// Package ststest is a stand-in for AWS STS in tests: an HTTP server that
// answers AssumeRole the way STS does, after checking the request the way
// STS would (a valid SigV4 signature from the expected caller, a duration
// STS allows, a session policy that is valid JSON), and records what it was
// asked for.
package ststest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Request is one AssumeRole request the stand-in granted.
type Request struct {
	RoleARN, SessionName string
	Duration             time.Duration
	// Policy is the inline session policy, as sent.
	Policy string
}

// Issued are the credentials the stand-in hands out.
type Issued struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// Server is a running stand-in.
type Server struct {
	URL string
	// Caller is the key pair callers must sign with; Region the region.
	CallerKey, CallerSecret, Region string
	// Issue is what AssumeRole answers.
	Issue Issued

	mu       sync.Mutex
	requests []Request
	// Fail, when set, makes AssumeRole answer 503.
	fail bool
}

// Start runs a stand-in for the test that accepts requests signed with
// callerKey and callerSecret for region, and answers with issue.
func Start(t testing.TB, callerKey, callerSecret, region string, issue Issued) *Server {
	t.Helper()
	s := &Server{CallerKey: callerKey, CallerSecret: callerSecret, Region: region, Issue: issue}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// Requests returns the requests granted so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// SetFailing makes the stand-in answer every request with 503 (or stop).
func (s *Server) SetFailing(fail bool) {
	s.mu.Lock()
	s.fail = fail
	s.mu.Unlock()
}

type stsError struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Error   struct {
		Type    string
		Code    string
		Message string
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var e stsError
	e.Error.Type, e.Error.Code, e.Error.Message = "Sender", code, msg
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(e)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "stand-in told to fail")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost {
		writeError(w, http.StatusBadRequest, "InvalidRequest", "want a POST with a form body")
		return
	}
	if err := s.verify(r, body); err != nil {
		writeError(w, http.StatusForbidden, "SignatureDoesNotMatch", err.Error())
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("Action") != "AssumeRole" || form.Get("Version") != "2011-06-15" {
		writeError(w, http.StatusBadRequest, "InvalidAction", "only AssumeRole (2011-06-15) is served")
		return
	}
	req := Request{RoleARN: form.Get("RoleArn"), SessionName: form.Get("RoleSessionName"), Policy: form.Get("Policy")}
	secs, err := strconv.Atoi(form.Get("DurationSeconds"))
	if err != nil || secs < 900 || secs > 43200 {
		writeError(w, http.StatusBadRequest, "ValidationError", "DurationSeconds must be 900 to 43200")
		return
	}
	req.Duration = time.Duration(secs) * time.Second
	if !strings.HasPrefix(req.RoleARN, "arn:") || req.SessionName == "" || len(req.SessionName) > 64 {
		writeError(w, http.StatusBadRequest, "ValidationError", "bad RoleArn or RoleSessionName")
		return
	}
	if req.Policy != "" && !json.Valid([]byte(req.Policy)) {
		writeError(w, http.StatusBadRequest, "MalformedPolicyDocument", "the policy is not JSON")
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	expires := time.Now().Add(req.Duration).UTC().Format(time.RFC3339)
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>`+
		`<Credentials><AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s</SessionToken><Expiration>%s</Expiration></Credentials>`+
		`<AssumedRoleUser><Arn>%s/%s</Arn><AssumedRoleId>AROA:%s</AssumedRoleId></AssumedRoleUser>`+
		`</AssumeRoleResult><ResponseMetadata><RequestId>stand-in</RequestId></ResponseMetadata></AssumeRoleResponse>`,
		s.Issue.AccessKeyID, s.Issue.SecretAccessKey, s.Issue.SessionToken, expires, req.RoleARN, req.SessionName, req.SessionName)
}

// verify checks the request's SigV4 signature: signing the same request
// with the caller's secret must give the same Authorization header.
func (s *Server) verify(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+s.CallerKey+"/") {
		return fmt.Errorf("not signed by %s", s.CallerKey)
	}
	signedAt, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("bad X-Amz-Date")
	}
	if d := time.Since(signedAt); d > 15*time.Minute || d < -15*time.Minute {
		return fmt.Errorf("signed too far from now")
	}
	signed := ""
	for _, part := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "SignedHeaders="); ok {
			signed = v
		}
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	again.Host = r.Host
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: s.CallerKey, SecretAccessKey: s.CallerSecret, SessionToken: r.Header.Get("X-Amz-Security-Token")}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "sts", s.Region, signedAt); err != nil {
		return err
	}
	if again.Header.Get("Authorization") != auth {
		return fmt.Errorf("signature does not match")
	}
	return nil
}
