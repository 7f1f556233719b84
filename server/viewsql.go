package server

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"

	"github.com/lancens/lancens/expr"
)

// A materialized view's source_query may also be SQL over one table:
//
//	SELECT <columns> FROM <table> [WHERE <filter>]
//
// <columns> is * or a comma-separated list of column names and expressions,
// each optionally named with AS; <table> the source table's identifier,
// its levels joined with "." (each a name, or quoted with "" or ``); and
// <filter> a filter in lancens' expression language. A trailing ";" is
// allowed. Anything else (joins, grouping, ordering, several tables) is not
// this format: such a view is stored but not refreshed by lancens.

// sqlView is a source_query in the SQL form: the source table and the
// QueryTableRequest the statement amounts to (a scan of every row).
type sqlView struct {
	source  []string
	request []byte
}

// parseSQLView reads source_query as SQL of the form above; ok is false
// when it is not in that form (not SQL, or SQL of another shape).
func parseSQLView(sourceQuery string) (v sqlView, ok bool) {
	text := strings.TrimSpace(sourceQuery)
	text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
	words := topLevelWords(text)
	if len(words) < 2 || !strings.EqualFold(words[0].text, "select") || words[0].start != 0 {
		return v, false
	}
	from := -1
	for i, w := range words[1:] {
		if strings.EqualFold(w.text, "from") {
			from = i + 1
			break
		}
	}
	if from < 0 {
		return v, false
	}
	list := strings.TrimSpace(text[words[0].end:words[from].start])
	rest := text[words[from].end:]
	table, after, ok := parseTableName(rest)
	if !ok {
		return v, false
	}
	req := `{"id":` + jsonText(table) + `,"k":0,"vector":null`
	if after = strings.TrimSpace(after); after != "" {
		filter, found := cutKeyword(after, "where")
		if !found || strings.TrimSpace(filter) == "" {
			return v, false
		}
		if _, err := expr.Parse(filter); err != nil {
			return v, false
		}
		req += `,"filter":` + jsonText(strings.TrimSpace(filter))
	}
	if list != "*" {
		cols, ok := parseSelectList(list)
		if !ok {
			return v, false
		}
		req += `,"columns":` + cols.json()
	}
	return sqlView{source: table, request: []byte(req + "}")}, true
}

// word is a bare word of a statement outside parentheses, quotes and
// string literals, with its byte offsets.
type word struct {
	text       string
	start, end int
}

// topLevelWords returns the bare words of text that are not inside
// parentheses, quoted identifiers or string literals.
func topLevelWords(text string) []word {
	var out []word
	depth := 0
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(text, i)
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
		case isWordByte(c):
			j := i
			for j < len(text) && isWordByte(text[j]) {
				j++
			}
			if depth == 0 && (i == 0 || !isWordByte(text[i-1])) {
				out = append(out, word{text: text[i:j], start: i, end: j})
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
}

// skipQuoted returns the offset after the quoted text opened at text[i],
// where a doubled quote stands for one; len(text) when it is not closed.
func skipQuoted(text string, i int) int {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		if text[j] != q {
			continue
		}
		if j+1 < len(text) && text[j+1] == q {
			j++
			continue
		}
		return j + 1
	}
	return len(text)
}

// splitTopLevel splits text at the commas outside parentheses and quotes.
func splitTopLevel(text string) []string {
	var out []string
	depth, last := 0, 0
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(text, i)
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, text[last:i])
			last = i + 1
		}
		i++
	}
	return append(out, text[last:])
}

var bareName = regexp.MustCompile(`^[\pL_][\pL\pN_]*$`)

// name reads one identifier: a bare name, or one quoted with double quotes
// or backquotes.
func name(text string) (string, bool) {
	text = strings.TrimSpace(text)
	if bareName.MatchString(text) {
		return text, true
	}
	if len(text) >= 2 && (text[0] == '"' || text[0] == '`') && skipQuoted(text, 0) == len(text) {
		q := string(text[0])
		return strings.ReplaceAll(text[1:len(text)-1], q+q, q), true
	}
	return "", false
}

// parseTableName reads the table identifier at the start of text (levels
// joined with ".") and returns it with the text after it.
func parseTableName(text string) ([]string, string, bool) {
	text = strings.TrimLeft(text, " \t\r\n")
	var id []string
	for {
		end := 0
		switch {
		case text == "":
			return nil, "", false
		case text[0] == '"' || text[0] == '`':
			end = skipQuoted(text, 0)
		default:
			for end < len(text) && isWordByte(text[end]) {
				end++
			}
		}
		part, ok := name(text[:end])
		if !ok || part == "" {
			return nil, "", false
		}
		id = append(id, part)
		text = text[end:]
		if !strings.HasPrefix(text, ".") {
			return id, text, true
		}
		text = text[1:]
	}
}

// cutKeyword returns the text after keyword when text starts with it (as a
// whole word, any case).
func cutKeyword(text, keyword string) (string, bool) {
	if len(text) < len(keyword) || !strings.EqualFold(text[:len(keyword)], keyword) {
		return "", false
	}
	rest := text[len(keyword):]
	if rest != "" && isWordByte(rest[0]) {
		return "", false
	}
	return rest, true
}

// orderedColumns is a select list as the spec's columns: column_names when
// every item is a plain column, column_aliases (output name to expression,
// in the statement's order) otherwise.
type orderedColumns struct {
	names   []string
	aliases [][2]string
}

// json returns the columns as the spec's QueryTableRequest columns, the
// aliases in the statement's order (the order of the output columns).
func (c orderedColumns) json() string {
	if c.aliases == nil {
		return `{"column_names":` + jsonText(c.names) + "}"
	}
	var sb strings.Builder
	sb.WriteString(`{"column_aliases":{`)
	for i, a := range c.aliases {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(jsonText(a[0]) + ":" + jsonText(a[1]))
	}
	sb.WriteString("}}")
	return sb.String()
}

// parseSelectList reads the columns of a SELECT: each a column name or an
// expression, optionally followed by AS and its output name.
func parseSelectList(list string) (orderedColumns, bool) {
	var c orderedColumns
	var items [][2]string // output name, expression
	plain := true
	for _, item := range splitTopLevel(list) {
		item = strings.TrimSpace(item)
		exprText, alias := item, ""
		// The output name follows the last AS outside parentheses and
		// quotes: the last bare word, or the one before a quoted name.
		words := topLevelWords(item)
		for k := len(words) - 1; k >= 0 && k >= len(words)-2; k-- {
			if strings.EqualFold(words[k].text, "as") {
				exprText, alias = strings.TrimSpace(item[:words[k].start]), strings.TrimSpace(item[words[k].end:])
				if alias == "" {
					return c, false
				}
				break
			}
		}
		if exprText == "" {
			return c, false
		}
		if _, err := expr.Parse(exprText); err != nil {
			return c, false
		}
		col, isColumn := name(exprText)
		out := col
		if alias != "" {
			var ok bool
			if out, ok = name(alias); !ok || out == "" {
				return c, false
			}
		}
		if !isColumn {
			if alias == "" {
				out = exprText
			}
			plain = false
		} else if out != col {
			plain = false
		}
		if isColumn {
			exprText = col
		}
		items = append(items, [2]string{out, exprText})
	}
	for _, it := range items {
		c.names = append(c.names, it[1])
	}
	if !plain {
		c.aliases = items
	}
	return c, true
}

// jsonText encodes a string or a list of strings as JSON, without escaping
// <, > and & (the text is a filter or a column expression, not HTML).
func jsonText(v any) string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings always encode
	return strings.TrimSuffix(sb.String(), "\n")
}
