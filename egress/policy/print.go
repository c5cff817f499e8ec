package policy

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Rows is the number of rows of the table: one per field, one per tag and
// one per listed header value, each a reviewed decision.
func (t *Table) Rows() int {
	n := 0
	for _, s := range t.Shapes {
		n += len(s.Fields)
	}
	for _, u := range t.Unions {
		n += len(u.Members)
		if u.Untagged != "" {
			n++
		}
	}
	for _, h := range t.Headers {
		n += len(h.Values)
	}
	return n
}

// Print writes the table as aisan explain --policy shows it: each object
// with its fields, each tagged family with its tags; refused rows say
// why. Whatever is not printed is refused.
func (t *Table) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	where := "its JSON path"
	if len(t.Headers) > 0 {
		where = "its JSON path or its header"
	}
	fmt.Fprintf(tw, "%s: %d rows; anything not listed is refused, naming %s\n", t.Name, t.Rows(), where)
	for _, s := range t.Shapes {
		head := s.Name
		if s.Name == t.Root {
			head += " (the request body)"
		}
		if s.Note != "" {
			head += " — " + s.Note
		}
		fmt.Fprintf(tw, "\n%s\n", head)
		if len(s.Fields) == 0 {
			fmt.Fprintf(tw, "  (no fields)\n")
		}
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		for _, f := range s.Fields {
			if req[f.Name] {
				fmt.Fprintf(tw, "  %s\trequired\t%s\n", f.Name, f.Type)
				continue
			}
			if f.Refused != "" {
				fmt.Fprintf(tw, "  %s\tREFUSED\t%s\n", f.Name, f.Refused)
				continue
			}
			fmt.Fprintf(tw, "  %s\t\t%s\n", f.Name, f.Type)
		}
	}
	for _, u := range t.Unions {
		fmt.Fprintf(tw, "\n%s (told apart by %q)\n", u.Name, u.Tag)
		for _, m := range u.Members {
			if m.Refused != "" {
				tag := fmt.Sprintf("%q", m.Tag)
				if m.Prefix {
					tag = fmt.Sprintf("%q…", m.Tag)
				}
				fmt.Fprintf(tw, "  %s=%s\tREFUSED\t%s\n", u.Tag, tag, m.Refused)
				continue
			}
			fmt.Fprintf(tw, "  %s=%q\t\t%s\n", u.Tag, m.Tag, m.Shape)
		}
		if u.Untagged != "" {
			fmt.Fprintf(tw, "  (no %s)\t\t%s\n", u.Tag, u.Untagged)
		}
		if u.Nullable {
			fmt.Fprintf(tw, "  null\t\tallowed\n")
		}
	}
	for _, h := range t.Headers {
		head := h.Name + " header (comma-separated; each value must be listed)"
		if h.Note != "" {
			head += " — " + h.Note
		}
		fmt.Fprintf(tw, "\n%s\n", head)
		for _, v := range h.Values {
			fmt.Fprintf(tw, "  %s\n", v)
		}
	}
	return tw.Flush()
}
