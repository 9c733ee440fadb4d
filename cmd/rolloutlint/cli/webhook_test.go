package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestWebhookFlagErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"webhook"}, "--cert-file and --key-file are required"},
		{[]string{"webhook", "--cert-file=c", "--key-file=k", "--enforce=block"}, `--enforce: unknown enforcement "block"`},
		{[]string{"webhook", "--cert-file=c", "--key-file=k", "--failure-mode=maybe"}, `--failure-mode: unknown failure mode "maybe"`},
		{[]string{"webhook", "--cert-file=/nonexistent/c", "--key-file=/nonexistent/k", "--cluster-view=false"}, "reading serving certificate"},
		{[]string{"webhook", "--log-format=xml"}, `unknown format "xml"`},
	}
	for _, c := range cases {
		var out, errw bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &out, &errw)
		if code != ExitFailure || !strings.Contains(errw.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errw.String(), c.want)
		}
	}
}
