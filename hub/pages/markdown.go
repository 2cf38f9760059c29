package pages

import (
	"bytes"
	"html/template"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

// Markdown is turned into HTML by goldmark (CommonMark with GitHub's
// tables, strikethrough, task lists and autolinks), raw HTML in it kept as
// model cards use it (centred images, badges, details), and the result is
// sanitised by bluemonday's policy for user content: no script, style,
// event handler, form or frame survives, links get rel="nofollow
// noreferrer" and open elsewhere. The page's Content-Security-Policy is a
// second wall behind it.
var (
	md = goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(html.WithUnsafe()),
	)
	policy = func() *bluemonday.Policy {
		p := bluemonday.UGCPolicy()
		p.RequireNoReferrerOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		p.AllowAttrs("align").OnElements("p", "div", "img", "td", "th", "h1", "h2", "h3")
		return p
	}()
)

// renderMarkdown is text as sanitised HTML.
func renderMarkdown(text []byte) template.HTML {
	var buf bytes.Buffer
	if err := md.Convert(text, &buf); err != nil {
		// goldmark fails only on a writer error; show the text as text.
		return template.HTML(template.HTMLEscapeString(string(text)))
	}
	return template.HTML(policy.SanitizeBytes(buf.Bytes())) // sanitised just above
}
