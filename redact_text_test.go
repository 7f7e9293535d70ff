package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedactText(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	tests := []struct {
		name, in, want string
	}{
		{"plain prose", "the basic plan costs 5 euros; bearer of news", "the basic plan costs 5 euros; bearer of news"},
		{"JWT", "got " + testJWT + " back", "got [REDACTED] back"},
		{"JWT without signature", "t=x eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0 end", "t=x [REDACTED] end"},
		{"JWT header alone is no secret", "eyJhbGciOiJub25lIn0", "eyJhbGciOiJub25lIn0"},
		{"Bearer", "Authorization was " + testBearer, "Authorization was Bearer [REDACTED]"},
		{"bearer lower case", "bearer Zm9vYmFyYmF6cXV4", "bearer [REDACTED]"},
		{"Basic", "Basic dXNlcjpwYXNz", "Basic [REDACTED]"},
		{"sk key keeps its prefix", "key " + testSK + ".", "key sk-[REDACTED]."},
		{"task- is no key", "task-abcdefghijklmnopqrstu", "task-abcdefghijklmnopqrstu"},
		{"sk_live", "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc", "sk_[REDACTED]"},
		{"GitHub token", testGHP, "ghp_[REDACTED]"},
		{"GitHub fine-grained token", "github_pat_" + "11ABCDEFG0abcdefghijklmnopqrstuvwxyz", "github_pat_[REDACTED]"},
		{"Slack token", "(" + testXOX + ")", "(xoxb-[REDACTED])"},
		{"AWS key id", "id " + testAKIA, "id AKIA[REDACTED]"},
		{"PEM private key", "k=\n" + testPEM + "\n", "k=\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\n"},
		{"PEM without END", "-----BEGIN PRIVATE KEY-----\nMIIE", "-----BEGIN PRIVATE KEY-----[REDACTED]"},
		{"PEM certificate is public", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"URL parameters", "https://api.test/v1/items?page=2&access_token=abc.def&sort=asc#x",
			"https://api.test/v1/items?page=2&access_token=[REDACTED]&sort=asc#x"},
		{"URL short names", "https://s3.test/f?X-Amz-Signature=abcd&key=k1&sig=s1&Expires=9",
			"https://s3.test/f?X-Amz-Signature=[REDACTED]&key=[REDACTED]&sig=[REDACTED]&Expires=9"},
		{"fragment token", "app://cb#access_token=zzz&state=1", "app://cb#access_token=[REDACTED]&state=1"},
		{"form body", "username=ada&password=hunter2", "username=ada&password=[REDACTED]"},
		{"cookie header value", "sid=abc123; theme=dark; session=s2", "sid=[REDACTED]; theme=dark; session=[REDACTED]"},
		{"non-sensitive parameter", "a=b&c=d", "a=b&c=d"},
		{"header line", "GET /\nAuthorization: Digest xyz\nAccept: */*", "GET /\nAuthorization: [REDACTED]\nAccept: */*"},
		{"header at start", "Set-Cookie: sid=1; Path=/", "Set-Cookie: [REDACTED]"},
		{"colon in prose stays", "could not refresh token: network down", "could not refresh token: network down"},
		{"timestamps stay", "2025-01-02T10:11:12.000Z", "2025-01-02T10:11:12.000Z"},
		{"embedded JSON", `body {"password": "hunter2", "n": 1}`, `body {"password": "[REDACTED]", "n": 1}`},
		{"embedded JSON number and object", `{"pin_token":1234,"credentials":{"a":"b"},"ok":true}`,
			`{"pin_token":"[REDACTED]","credentials":"[REDACTED]","ok":true}`},
		{"embedded JSON, escaped quotes", `{\"secret\":\"s3\",\"x\":1}`, `{\"secret\":\"[REDACTED]\",\"x\":1}`},
		{"embedded JSON, null stays", `{"token":null}`, `{"token":null}`},
		{"not valid UTF-8 is kept", "\xff token=abc \xfe", "\xff token=[REDACTED] \xfe"},
		// Names longer than any look-back bound, which redacting a secret
		// inside them shortens: the first pass must already see the key.
		{"long embedded name holding a secret", `"` + strings.Repeat("0", 81) + " Authorization: Basic 1ZXN82S52PT6VJE7NUK3XZ7Y \":0",
			`"` + strings.Repeat("0", 81) + " Authorization: Basic [REDACTED] \":\"[REDACTED]\""},
		{"long parameter name holding a key", "x ?password.sk-" + strings.Repeat("Ab1", 20) + "=hunter2",
			"x ?password.sk-[REDACTED]=[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Text(tt.in)
			if got != tt.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := r.Text(got); again != got {
				t.Errorf("Text is not idempotent: %q became %q", got, again)
			}
		})
	}
}

func TestValidRedactKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"ssn", "card number", "x-pin_code.v2"} {
		if err := validRedactKey(k); err != nil {
			t.Errorf("validRedactKey(%q) = %v, want nil", k, err)
		}
	}
	for _, k := range []string{"pin/code", "123", "--", "ünï"} {
		if err := validRedactKey(k); err == nil {
			t.Errorf("validRedactKey(%q) = nil, want an error", k)
		}
	}
}

func TestKeyMatcher(t *testing.T) {
	t.Parallel()
	m := newKeyMatcher([]string{"token", "apikey", "tokenizer", "ab"})
	tests := []struct {
		name string
		want bool
	}{
		{"token", true}, {"refresh_token", true}, {"TOKEN", true}, {"to-ken", true},
		{"api_key", true}, {"x-api-key", true}, {"tokken", false}, {"tok/en", false},
		{"a", false}, {"xab", true}, {"apikex", false}, {"", false}, {"toke", false},
	}
	for _, tt := range tests {
		if got := m.match([]byte(tt.name)); got != tt.want {
			t.Errorf("match(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRedactTextOverlapping(t *testing.T) {
	t.Parallel()
	r := testRedactor(t)
	for in, want := range map[string]string{
		"password=Bearer Zm9vYmFyYmF6cXV4":     "password=[REDACTED] [REDACTED]",
		`{"token": Bearer Zm9vYmFyYmF6cXV4} x`: `{"token": "[REDACTED]"} x`,
		"token=" + testJWT + "&a=1":            "token=[REDACTED]&a=1",
		`log {"secret": "s3cr3t` + "\n":        `log {"secret": "[REDACTED]"`,
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%.60q) = %.60q, want %.60q", in, got, want)
		}
	}
}

func FuzzRedactText(f *testing.F) {
	for _, s := range []string{"", "x", "a=b&c=d", `{"a":"b"}`, "line\nAuthorization", "eyJ", "-----BEGIN"} {
		f.Add(s, s, uint64(len(s)))
	}
	r := testRedactor(f)
	f.Fuzz(func(t *testing.T, before, after string, seed uint64) {
		lookalike, body := plantedSecret(seed)
		if strings.Contains(before+after, body[:12]) {
			return
		}
		in := before + " " + lookalike + " " + after
		out := r.Text(in)
		if strings.Contains(out, body) {
			t.Fatalf("a secret passed: Text(%q) = %q", in, out)
		}
		if again := r.Text(out); again != out {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q, not valid UTF-8", in, out)
		}
		if got := r.Text(before); !strings.Contains(before, redactedMarker) && strings.Contains(got, redactedMarker) == (got == before) {
			t.Fatalf("Text(%q) = %q: a change must show a marker", before, got)
		}
	})
}
