package vertex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
)

// Scope is what the minted tokens may do: Vertex AI takes cloud-platform.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// DefaultIAM is the IAM Credentials API, which mints an impersonated
// service account's tokens.
const DefaultIAM = "https://iamcredentials.googleapis.com"

// ADC mints access tokens from the user's Application Default
// Credentials file with golang.org/x/oauth2/google: an authorized user
// (gcloud auth application-default login), a service account key, or an
// impersonated service account file; optionally impersonating a service
// account on top. The file is read at every mint, so a new login is
// picked up, and never written.
type ADC struct {
	// Path is the ADC file.
	Path string
	// TokenURL, when set, replaces the file's token endpoint (a test
	// stand-in: AISAN_VERTEX_TOKEN_URL).
	TokenURL string
	// Impersonate is a service account's email to mint tokens as ("" for
	// the ADC's own).
	Impersonate string
	// IAMURL replaces DefaultIAM (AISAN_VERTEX_IAM_URL).
	IAMURL string
	// Transport reaches the token endpoints (nil: the default); it never
	// follows a redirect.
	Transport http.RoundTripper
}

// DefaultADCPath is where gcloud keeps the ADC, as the Google libraries
// look for it: $GOOGLE_APPLICATION_CREDENTIALS, else the gcloud config
// directory ($CLOUDSDK_CONFIG or ~/.config/gcloud).
func DefaultADCPath(home string, getenv func(string) string) string {
	if p := getenv("GOOGLE_APPLICATION_CREDENTIALS"); p != "" {
		return p
	}
	dir := getenv("CLOUDSDK_CONFIG")
	if dir == "" {
		dir = filepath.Join(home, ".config", "gcloud")
	}
	return filepath.Join(dir, "application_default_credentials.json")
}

// maxADC caps the ADC file.
const maxADC = 1 << 20

// adcFile is what aisan itself reads of the ADC: its kind and its
// projects; the rest is the library's.
type adcFile struct {
	Type           string `json:"type"`
	ProjectID      string `json:"project_id"`
	QuotaProjectID string `json:"quota_project_id"`
}

// Info reads the ADC's kind and projects (for the backend's defaults and
// for errors; never its secrets).
func (a *ADC) Info() (typ, project, quota string, err error) {
	b, err := regfile.Read(a.Path, maxADC)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", "", fmt.Errorf("no Application Default Credentials at %s: run `gcloud auth application-default login` on the host", a.Path)
		}
		return "", "", "", fmt.Errorf("the Application Default Credentials: %w", err)
	}
	var f adcFile
	if err := json.Unmarshal(b, &f); err != nil {
		return "", "", "", fmt.Errorf("the Application Default Credentials %s are not JSON: %v", a.Path, err)
	}
	return f.Type, f.ProjectID, f.QuotaProjectID, nil
}

// Mint makes a new access token (see cred.Minted).
func (a *ADC) Mint(ctx context.Context) (cred.Secret, time.Time, error) {
	data, typ, err := a.credentialsJSON()
	if err != nil {
		return cred.Secret{}, time.Time{}, err
	}
	hc := &http.Client{Transport: cred.NoRedirectTransport(a.Transport), Timeout: 30 * time.Second}
	hc = cred.NoRedirects(hc)
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, data, typ, google.CredentialsParams{Scopes: []string{Scope}})
	if err != nil {
		return cred.Secret{}, time.Time{}, fmt.Errorf("the Application Default Credentials %s: %v", a.Path, err)
	}
	tok, err := creds.TokenSource.Token()
	if err != nil {
		return cred.Secret{}, time.Time{}, &cred.RefreshError{Msg: "minting a Google access token from " + a.Path + " failed (the reason is in the host's egress log); run `gcloud auth application-default login` on the host", Cause: err}
	}
	if tok.AccessToken == "" || strings.ContainsAny(tok.AccessToken, " \t\r\n") {
		return cred.Secret{}, time.Time{}, errors.New("the Google token endpoint answered without a usable access token")
	}
	exp := tok.Expiry
	if exp.IsZero() {
		exp = time.Now().Add(time.Hour) // Google's tokens live an hour
	}
	return cred.NewSecret(tok.AccessToken), exp, nil
}

// credentialsJSON is the ADC file as the library is to read it, and its
// type (one of the three aisan accepts, so the library is told which to
// expect): its token endpoint replaced when TokenURL is set, and wrapped
// as an impersonated service account when Impersonate is.
func (a *ADC) credentialsJSON() ([]byte, google.CredentialsType, error) {
	b, err := regfile.Read(a.Path, maxADC)
	if err != nil {
		return nil, "", fmt.Errorf("the Application Default Credentials: %w", err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, "", fmt.Errorf("the Application Default Credentials %s are not JSON: %v", a.Path, err)
	}
	t, _ := f["type"].(string)
	switch t {
	case "authorized_user", "service_account":
		a.retarget(f)
	case "impersonated_service_account":
		if src, ok := f["source_credentials"].(map[string]any); ok {
			a.retarget(src)
		}
		if u, ok := f["service_account_impersonation_url"].(string); ok && a.IAMURL != "" {
			f["service_account_impersonation_url"] = rebase(u, a.IAMURL)
		}
	default:
		return nil, "", fmt.Errorf("the Application Default Credentials %s are of type %q; aisan mints tokens from an authorized user, a service account key or an impersonated service account", a.Path, t)
	}
	if a.Impersonate != "" {
		iam := a.IAMURL
		if iam == "" {
			iam = DefaultIAM
		}
		f = map[string]any{
			"type":                              "impersonated_service_account",
			"service_account_impersonation_url": strings.TrimRight(iam, "/") + "/v1/projects/-/serviceAccounts/" + url.PathEscape(a.Impersonate) + ":generateAccessToken",
			"source_credentials":                f,
		}
		t = "impersonated_service_account"
	}
	out, err := json.Marshal(f)
	return out, google.CredentialsType(t), err
}

// retarget points a credential's token endpoint at TokenURL, when set.
func (a *ADC) retarget(f map[string]any) {
	if a.TokenURL != "" {
		f["token_uri"] = a.TokenURL
	}
}

// rebase keeps u's path and query on base's scheme and host.
func rebase(u, base string) string {
	pu, err1 := url.Parse(u)
	pb, err2 := url.Parse(base)
	if err1 != nil || err2 != nil {
		return u
	}
	pu.Scheme, pu.Host = pb.Scheme, pb.Host
	return pu.String()
}
