package webshell_test

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

const misbehavePkg = "github.com/mcphost/mcphost/testdata/servers/misbehave"

// TestHostileStringsShownInert: a server whose tool titles, descriptions
// and results carry HTML, escape sequences and U+202E is shown with every
// string as text: no element is made from its HTML, nothing runs, and the
// tools whose names break the spec's rule are not offered at all.
func TestHostileStringsShownInert(t *testing.T) {
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		evil := stdioServer("evil", testbin.Build(t, misbehavePkg))
		evil.Args = []string{"-mode", "hostile"}
		cfg.Servers = append(cfg.Servers, evil)
	})
	tb := newTab(t)
	tb.login(d)
	tb.waitServerReady("evil")
	tb.waitVisible(`[data-testid=tool-list] ` + tid("tool-evil.greet"))

	type shown struct {
		Title     string   `json:"title"`
		Desc      string   `json:"desc"`
		EvilTools []string `json:"evilTools"`
		Imgs      int      `json:"imgs"`
		Fired     bool     `json:"fired"`
	}
	read := func() shown {
		return eval[shown](tb, `(() => {
  const b = document.querySelector('[data-testid=tool-list] [data-testid="tool-evil.greet"]');
  return {
    title: b?.querySelector('.tool-item-title')?.textContent ?? '',
    desc: b?.querySelector('.tool-item-desc')?.textContent ?? '',
    evilTools: [...document.querySelectorAll('[data-testid=tool-list] .tool-item')]
      .map((e) => e.dataset.testid).filter((id) => id.startsWith('tool-evil.')),
    imgs: document.querySelectorAll('img[src="x"]').length,
    fired: window.__hostileFired === true,
  };
})()`)
	}
	// A handler that would record an alert() the hostile HTML tried.
	eval[bool](tb, `(() => { window.alert = () => { window.__hostileFired = true; }; return true; })()`)
	got := read()
	if got.Title != "<img src=x onerror=alert(1)>\u202eevil" {
		t.Errorf("the title shows as %q, want the server's text as it is", got.Title)
	}
	if !strings.HasPrefix(got.Desc, "Says hi.") {
		t.Errorf("the description shows as %q", got.Desc)
	}
	if want := []string{"tool-evil.dotted.name-1_A", "tool-evil.greet"}; strings.Join(got.EvilTools, ",") != strings.Join(want, ",") {
		t.Errorf("the tool list offers %v of evil, want %v (the others break the tool-name rule or repeat a name)", got.EvilTools, want)
	}

	tb.selectTool("evil.greet")
	en := tb.call(1)
	if en.Status != "ok" || !strings.Contains(en.Result, "hello") || !strings.Contains(en.Result, "\u202eend") {
		t.Errorf("the result shows as %+v", en)
	}
	got = read()
	if got.Imgs != 0 || got.Fired {
		t.Errorf("the hostile HTML became elements (%d) or ran (%v)", got.Imgs, got.Fired)
	}
}
