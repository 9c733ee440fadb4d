package graph

import "strings"

// NameLine is the line Pos("metadata.name") gives, found by scanning the
// document's text when it is plain enough for a scan to be exact (a
// fast-path document whose name sits on the line of its key, nothing quoted
// or in flow style before it), so that a report listing every Rollout's line
// does not parse each document again; otherwise through Pos.
func (r *Resource) NameLine() int {
	r.mu.Lock()
	src, cached := r.src, r.node != nil
	r.mu.Unlock()
	if !cached && src != nil && src.Fast && src.Item < 0 {
		if l, ok := scanNameLine(src.Data); ok {
			return l + src.LineOffset
		}
	}
	return r.Pos("metadata.name").Line
}

// scanNameLine finds the 1-based line of metadata.name's value in a block
// mapping document, or declines (ok false) at anything it does not follow.
func scanNameLine(data []byte) (line int, ok bool) {
	inMeta, indent, seenKey := false, 0, false
	for off, n := 0, 1; off < len(data); n++ {
		end := off
		for end < len(data) && data[end] != '\n' {
			end++
		}
		l := string(data[off:end])
		off = end + 1
		l = strings.TrimSuffix(l, "\r")
		t := strings.TrimLeft(l, " ")
		if t == "" || t[0] == '#' {
			continue
		}
		if strings.ContainsAny(l, "\"'[]\t") {
			return 0, false
		}
		flow := strings.ContainsAny(l, "{}")
		ind := len(l) - len(t)
		if !inMeta {
			if ind > 0 {
				continue // inside a top-level value
			}
			if t == "---" && !seenKey {
				continue
			}
			key, rest, ok := keyLine(t)
			if !ok {
				return 0, false
			}
			seenKey = true
			if key == "metadata" {
				if flow {
					// A one-line flow mapping: the name is on this line.
					return n, flowHasName(rest)
				}
				if rest != "" && rest[0] != '#' {
					return 0, false
				}
				inMeta = true
			} else if flow {
				return 0, false
			}
			continue
		}
		if flow {
			return 0, false
		}
		switch {
		case ind == 0:
			return 0, false // metadata ended without a name
		case indent == 0:
			indent = ind
		case ind > indent:
			continue // inside a metadata value
		case ind < indent:
			return 0, false
		}
		key, rest, ok := keyLine(t)
		if !ok {
			return 0, false
		}
		if key != "name" {
			continue
		}
		if rest == "" || strings.IndexByte("#|>&!*%@`-?:,", rest[0]) >= 0 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// flowHasName reports whether rest is a one-line flow mapping of plain
// scalars, with nothing nested, that holds a name key with a value.
func flowHasName(rest string) bool {
	if !strings.HasPrefix(rest, "{") {
		return false
	}
	inner, after, ok := strings.Cut(rest[1:], "}")
	if !ok || strings.ContainsAny(inner, "{#") {
		return false
	}
	if after = strings.TrimLeft(after, " "); after != "" && after[0] != '#' {
		return false
	}
	for _, e := range strings.Split(inner, ",") {
		key, v, ok := keyLine(strings.TrimLeft(e, " "))
		if ok && key == "name" && v != "" && strings.IndexByte("#|>&!*%@`-?:", v[0]) < 0 {
			return true
		}
	}
	return false
}

// keyLine splits "key: rest" for a plain key of letters, digits and ._/-
// followed by a colon and a space or the end of the line; rest has its
// leading spaces removed.
func keyLine(t string) (key, rest string, ok bool) {
	i := 0
	for i < len(t) {
		c := t[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '/' || c == '-' {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(t) || t[i] != ':' || t[0] == '-' {
		return "", "", false
	}
	rest = t[i+1:]
	if rest != "" && rest[0] != ' ' {
		return "", "", false
	}
	return t[:i], strings.TrimLeft(rest, " "), true
}
